package org.fibersync.bench;

import org.openjdk.jmh.infra.Blackhole;

/**
 * The thesis' micro-benchmark (section 2.3, listing 2): {@code actionsCount}
 * lock acquisitions split evenly over {@code threads} virtual threads; each
 * one does
 * <pre>
 *   consumeCPU(beforeCpuTokens); yield x yieldsBefore
 *   lock; consumeCPU(inCpuTokens); [yield if yieldInCrit]; count++; unlock
 * </pre>
 * The plain counter inside the critical section doubles as a correctness
 * check: a broken lock loses increments and {@link #runOnce()} throws.
 *
 * <p>Contention is set by the ratio of outside to inside work: no outside
 * work is "high contention", outside = 128 x inside is "low contention"
 * (thesis section 2.4).
 */
public final class ConsumeCpuWorkload {
    private final Guard guard;
    private final int threads;
    private final int actionsCount;
    private final int beforeCpuTokens;
    private final int inCpuTokens;
    private final int yieldsBefore;
    private final boolean yieldInCrit;
    private long counter; // guarded by guard

    public ConsumeCpuWorkload(LockKind kind, int threads, int actionsCount, int beforeCpuTokens,
                              int inCpuTokens, int yieldsBefore, boolean yieldInCrit) {
        if (threads < 1 || actionsCount < threads) {
            throw new IllegalArgumentException("threads=" + threads + " actionsCount=" + actionsCount);
        }
        this.guard = new Guard(kind);
        this.threads = threads;
        this.actionsCount = actionsCount;
        this.beforeCpuTokens = beforeCpuTokens;
        this.inCpuTokens = inCpuTokens;
        this.yieldsBefore = yieldsBefore;
        this.yieldInCrit = yieldInCrit;
    }

    /**
     * Runs all {@code actionsCount} acquisitions once on fresh virtual
     * threads and waits for them.
     *
     * @return the counter after the run
     * @throws IllegalStateException when increments were lost
     */
    public long runOnce() throws InterruptedException {
        long before = guard.guarded(() -> counter);
        Thread[] ts = new Thread[threads];
        int base = actionsCount / threads;
        int extra = actionsCount % threads;
        for (int t = 0; t < threads; t++) {
            int local = base + (t < extra ? 1 : 0);
            ts[t] = Thread.ofVirtual().start(() -> loop(local));
        }
        for (Thread t : ts) {
            t.join();
        }
        long after = guard.guarded(() -> counter);
        if (after - before != actionsCount) {
            throw new IllegalStateException("mutual exclusion broken: " + (after - before)
                    + " increments seen, " + actionsCount + " expected");
        }
        return after;
    }

    private void loop(int local) {
        final Guard g = guard;
        for (int i = 0; i < local; i++) {
            if (beforeCpuTokens > 0) {
                Blackhole.consumeCPU(beforeCpuTokens);
            }
            for (int y = 0; y < yieldsBefore; y++) {
                Thread.yield();
            }
            g.guarded(this::critical);
        }
    }

    private long critical() {
        if (inCpuTokens > 0) {
            Blackhole.consumeCPU(inCpuTokens);
        }
        if (yieldInCrit) {
            Thread.yield();
        }
        return ++counter;
    }
}
