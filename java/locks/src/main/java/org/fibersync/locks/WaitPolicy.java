package org.fibersync.locks;

/**
 * How a waiter escalates while it waits: spin, then yield, then park.
 *
 * <p>Every waiting point of the locks in this package goes through one
 * policy value (see {@link Waiting}); no lock has a bare wait loop. A waiter
 * counts its failed checks and is in
 * <ol>
 *   <li><b>spin</b> for the first {@link #spinChecks()} failures: exponential
 *       backoff of {@link Thread#onSpinWait()}, capped at {@link #maxSpinPause()};</li>
 *   <li><b>yield</b> for the next {@link #yieldChecks()} failures: one
 *       {@link Thread#yield()} per failure, which hands the carrier to other
 *       virtual threads (the lock holder may be one of them: a waiter that only
 *       spins deadlocks a single-carrier scheduler when the holder yields);</li>
 *   <li><b>park</b> afterwards. Queue locks park until the thread that hands
 *       them the lock or the leadership unparks them. {@link TtasLock} has no
 *       one to wake it, so it parks for a bounded time that doubles from
 *       {@link #minParkNanos()} up to {@link #maxParkNanos()}.</li>
 * </ol>
 *
 * <p>Values are immutable; the {@code with*} methods return modified copies.
 *
 * @param spinChecks   failed checks spent spinning (0: skip the spin phase)
 * @param maxSpinPause cap of the exponential {@code onSpinWait} backoff per check
 * @param yieldChecks  failed checks spent yielding (0: skip the yield phase)
 * @param minParkNanos first timed park of {@link TtasLock}
 * @param maxParkNanos cap of the timed park of {@link TtasLock}
 */
public record WaitPolicy(int spinChecks, int maxSpinPause, int yieldChecks,
                         long minParkNanos, long maxParkNanos) {

    /**
     * Defaults for queued waiters of {@link McsLock} and {@link NumaMcsLock}:
     * two spin checks (about 100 ns), no yield, then park.
     *
     * <p>Origin: java/docs/BENCHMARKS.md, "Tuning" (2-core AMD EPYC VM, JDK 25,
     * 64 virtual threads on 2 carriers, high contention, 2026-11-22). A
     * queued waiter is usually several critical sections away from its turn,
     * and it mostly runs on the carrier its predecessor just left: every spin
     * or yield it does there delays a holder that yielded inside its critical
     * section on the same carrier. The first default (8 spins and 2 yields,
     * for queue waiters and leaders alike) gave NumaMcsLock medians of 100 and
     * 152 ops/ms in two interleaved sweeps; parking at once gave 174.
     */
    public static final WaitPolicy QUEUE_DEFAULT = new WaitPolicy(2, 16, 0, 0, 0);

    /**
     * Defaults for {@link NumaMcsLock} leaders waiting for the global flag:
     * no spin, two yields, then park until an unlock wakes them.
     *
     * <p>Origin: as {@link #QUEUE_DEFAULT}. The yields give a holder on the
     * same carrier the chance to finish; 8 spins first measured 144 ops/ms
     * against 174 with none (same sweep, machine loaded: every spin takes cpu
     * time from the holder's carrier). Before both, NumaMcsLock spins
     * adaptively on the flag (see its class comment), which covers short
     * critical sections.
     */
    public static final WaitPolicy LEADER_DEFAULT = new WaitPolicy(0, 16, 2, 0, 0);

    /**
     * Defaults for {@link TtasLock}: a TTAS waiter has no hand-over, so it
     * keeps checking longer (spin, then many yields) and then backs off with
     * timed parks (2 us doubling to 1 ms, or to 8 us per parked waiter
     * where that is longer: see {@link TtasLock}), which keeps 10 000 waiters
     * from flooding the scheduler's run queues.
     */
    public static final WaitPolicy TTAS_DEFAULT = new WaitPolicy(32, 64, 32, 2_000, 1_000_000);

    /** Checks the ranges; each count must be {@code >= 0}, park bounds ordered. */
    public WaitPolicy {
        if (spinChecks < 0 || maxSpinPause < 1 || yieldChecks < 0 || minParkNanos < 0
                || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("invalid wait policy: spinChecks=" + spinChecks
                    + " maxSpinPause=" + maxSpinPause + " yieldChecks=" + yieldChecks
                    + " minParkNanos=" + minParkNanos + " maxParkNanos=" + maxParkNanos);
        }
    }

    /** @return a copy with {@code spinChecks} replaced */
    public WaitPolicy withSpinChecks(int n) {
        return new WaitPolicy(n, maxSpinPause, yieldChecks, minParkNanos, maxParkNanos);
    }

    /** @return a copy with {@code maxSpinPause} replaced */
    public WaitPolicy withMaxSpinPause(int n) {
        return new WaitPolicy(spinChecks, n, yieldChecks, minParkNanos, maxParkNanos);
    }

    /** @return a copy with {@code yieldChecks} replaced */
    public WaitPolicy withYieldChecks(int n) {
        return new WaitPolicy(spinChecks, maxSpinPause, n, minParkNanos, maxParkNanos);
    }

    /** @return a copy with the timed-park bounds replaced */
    public WaitPolicy withParkNanos(long min, long max) {
        return new WaitPolicy(spinChecks, maxSpinPause, yieldChecks, min, max);
    }
}
