package org.fibersync.locks.numa;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pins the carrier threads of the virtual-thread scheduler to cpus, one
 * carrier per cpu, as the thesis' benchmark does (section 2.2) but through
 * FFM {@code sched_setaffinity} instead of JNA.
 *
 * <p>How: start one virtual thread per carrier; each spins without yielding
 * on a barrier, so no two of them can share a carrier; once all have arrived,
 * each pins the carrier it runs on to its cpu. This needs the scheduler to
 * have {@code carriers} carriers free at that moment, so call it while no
 * other virtual threads are busy; on timeout nothing is pinned.
 *
 * <p>Carriers that the scheduler creates later (after an idle carrier timed
 * out, or to compensate for a blocked one) are not pinned: pin again before
 * each measurement.
 */
public final class CarrierPinning {
    private CarrierPinning() {
    }

    /**
     * Pins {@code carriers} carriers to {@code cpus[0]}, {@code cpus[1]}, ...
     * (wrapping around when there are fewer cpus than carriers).
     *
     * @return the cpu each pinned carrier reports afterwards (getcpu), in
     *         arrival order
     * @throws IllegalStateException when the barrier times out or a pin fails
     */
    public static int[] pinCarriers(int carriers, int[] cpus, Duration timeout) throws InterruptedException {
        if (carriers < 1 || cpus.length == 0) {
            throw new IllegalArgumentException("carriers=" + carriers + " cpus=" + cpus.length);
        }
        AtomicInteger arrived = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        int[] seen = new int[carriers];
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < carriers; i++) {
            threads.add(Thread.ofVirtual().name("fibersync-pin-" + i).start(() -> {
                int me = arrived.getAndIncrement();
                // Spin, never yield: a yield could let a sibling onto this carrier.
                while (arrived.get() < carriers && failed.get() == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        failed.incrementAndGet();
                        errors.add("only " + arrived.get() + " of " + carriers + " carriers reached the pinning barrier");
                        return;
                    }
                    Thread.onSpinWait();
                }
                if (failed.get() != 0) {
                    return;
                }
                try {
                    NativeCpu.pinCurrentThread(cpus[me % cpus.length]);
                    int[] out = new int[2];
                    seen[me] = NativeCpu.getcpu(out) ? out[0] : -1;
                } catch (RuntimeException e) {
                    failed.incrementAndGet();
                    errors.add(e.getMessage());
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failed.get() != 0) {
            throw new IllegalStateException("carrier pinning failed: " + errors);
        }
        return seen;
    }
}
