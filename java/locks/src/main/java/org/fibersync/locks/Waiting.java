package org.fibersync.locks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The single code path through which every lock here waits between two
 * checks of the condition it waits for. See {@link WaitPolicy}. Also the
 * entry of {@code tryLock(time, unit)}, which the locks share to the letter.
 */
final class Waiting {
    private Waiting() {
    }

    /** What the caller should do after {@link #pause}. */
    static final int CHECK_AGAIN = 0;
    /** The spin and yield budget is spent: park (the caller knows how). */
    static final int PARK = 1;

    /**
     * Waits a little after the {@code failures}-th failed check
     * ({@code failures >= 1}): spin or yield as the policy says.
     *
     * @return {@link #CHECK_AGAIN}, or {@link #PARK} once both budgets are spent
     */
    static int pause(WaitPolicy p, int failures) {
        if (failures <= p.spinChecks()) {
            // Exponential backoff: 1, 2, 4, ... onSpinWait per check, capped.
            int n = Math.min(p.maxSpinPause(), 1 << Math.min(failures - 1, 30));
            for (int i = 0; i < n; i++) {
                Thread.onSpinWait();
            }
            return CHECK_AGAIN;
        }
        if (failures <= p.spinChecks() + p.yieldChecks()) {
            Thread.yield();
            return CHECK_AGAIN;
        }
        return PARK;
    }

    /** Nanoseconds left before {@code deadline}; callers use 0 for "no deadline". */
    static long remaining(long deadline) {
        return deadline - System.nanoTime();
    }

    /** Absolute deadline for a {@code tryLock(time, unit)}, never 0 (0 means none). */
    static long deadline(long time, TimeUnit unit) {
        // Capped so that deadline - now never overflows (about 146 years).
        long d = System.nanoTime() + Math.min(Long.MAX_VALUE >> 1, Math.max(0, unit.toNanos(time)));
        return d == 0 ? 1 : d;
    }

    /** A lock's interruptible acquisition: false on timeout, throws on interrupt. */
    @FunctionalInterface
    interface AcquireUntil {
        boolean acquire(long deadline) throws InterruptedException;
    }

    /**
     * {@link Lock#tryLock(long, TimeUnit)} as every lock here does it: an
     * interrupt check, one {@code lock.tryLock()}, and only for a positive
     * time a wait in {@code acquire} until the deadline. Only the timed path
     * comes here, so lock(), unlock() and tryLock() keep no indirection.
     */
    static boolean tryLock(Lock lock, long time, TimeUnit unit, AcquireUntil acquire)
            throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (lock.tryLock()) {
            return true;
        }
        if (time <= 0) {
            return false;
        }
        return acquire.acquire(deadline(time, unit));
    }
}
