package org.fibersync.locks;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

/**
 * The two witnesses of a broken lock the stress tests share: a plain counter
 * that loses updates when two threads increment it at once, and an occupancy
 * count that must read 1 right after entering. Public for the tests of the
 * numa package.
 */
public final class MutexWitness {
    private static final Runnable NOTHING = () -> { };

    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private int count; // plain on purpose: only the lock orders its increments

    /** One critical section under {@code lock()}: see {@link #incrementHeld(Runnable)}. */
    public void incrementUnder(Lock lock, Runnable beforeLeaving) {
        incrementUnder(lock, NOTHING, beforeLeaving);
    }

    /**
     * As {@link #incrementUnder(Lock, Runnable)}, with {@code betweenReadAndWrite}
     * run inside the increment: a yield there widens the window in which a
     * broken lock loses an update.
     */
    public void incrementUnder(Lock lock, Runnable betweenReadAndWrite, Runnable beforeLeaving) {
        lock.lock();
        try {
            incrementHeld(betweenReadAndWrite, beforeLeaving);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The critical section for a caller that acquired the lock itself (a timed
     * tryLock) and releases it: enter, increment, run {@code beforeLeaving}
     * (a yield or a park, so that other threads of the carrier run while the
     * lock is held), leave.
     */
    public void incrementHeld(Runnable beforeLeaving) {
        incrementHeld(NOTHING, beforeLeaving);
    }

    private void incrementHeld(Runnable betweenReadAndWrite, Runnable beforeLeaving) {
        if (inside.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        int v = count;
        betweenReadAndWrite.run();
        count = v + 1;
        beforeLeaving.run();
        inside.decrementAndGet();
    }

    /** Critical sections entered while another was in progress. */
    public int overlaps() {
        return overlaps.get();
    }

    /** Increments that survived; read it after joining the threads. */
    public int count() {
        return count;
    }
}
