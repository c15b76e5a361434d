package org.fibersync.bench;

import java.util.concurrent.locks.Lock;

/**
 * One lock of any {@link LockKind}, with a single entry point so that the
 * benchmark loops treat {@code synchronized} like the {@link Lock}s.
 * {@code synchronized} cannot be split into lock/unlock calls, hence the
 * callback; on JDK 24+ a virtual thread blocked on or yielding inside a
 * monitor unmounts like one parked on a Lock (JEP 491), so the comparison is
 * fair.
 */
public final class Guard {
    private final Lock lock;       // null for synchronized
    private final Object monitor = new Object();

    public Guard(LockKind kind) {
        this.lock = kind.newLock();
    }

    /** The body of a critical section; returns a value so the JIT cannot drop it. */
    @FunctionalInterface
    public interface Section {
        long run();
    }

    /** Runs {@code s} under the lock. */
    public long guarded(Section s) {
        if (lock != null) {
            lock.lock();
            try {
                return s.run();
            } finally {
                lock.unlock();
            }
        }
        synchronized (monitor) {
            return s.run();
        }
    }
}
