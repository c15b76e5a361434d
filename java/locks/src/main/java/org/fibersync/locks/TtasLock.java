package org.fibersync.locks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * Test-and-test-and-set lock with yield-aware backoff.
 *
 * <p><b>Algorithm.</b> One word: 0 free, 1 held. An acquirer reads the word
 * and only when it looks free tries a CAS; after each failure it backs off.
 *
 * <p><b>Source.</b> L. Rudolph, Z. Segall, "Dynamic Decentralized Cache
 * Schemes for MIMD Parallel Processors", ISCA 1984 (test-and-test-and-set);
 * T. E. Anderson, "The Performance of Spin Lock Alternatives for
 * Shared-Memory Multiprocessors", IEEE TPDS 1(1), 1990 (exponential backoff).
 *
 * <p><b>Fairness.</b> None; every acquisition, {@link #tryLock()} included,
 * barges. A waiter can starve.
 *
 * <p><b>Where it waits.</b> Only in {@code lock()}, on the word: spin
 * (exponential {@code onSpinWait} backoff) -> yield (hands the carrier to
 * other virtual threads, which is what keeps a holder that yields inside its
 * critical section from deadlocking a single carrier) -> timed park with
 * doubling duration. Nobody wakes a TTAS waiter, so the park is always timed:
 * a released lock may stay free for up to the park's cap while everyone
 * sleeps. The cap is {@link WaitPolicy#maxParkNanos()}, or
 * {@value #PARK_NANOS_PER_PARKED_WAITER} ns per parked waiter where that is
 * longer: every parked waiter wakes once per cap, runs on a carrier and
 * fails while the lock is held, so with a fixed cap the wake-ups grow with
 * the waiters until they crowd out the holder (measured in java/README.md,
 * "Known limits"). Thresholds: {@link WaitPolicy#TTAS_DEFAULT}.
 *
 * <p><b>Space.</b> One padded word (about 150 bytes) per lock, nothing per
 * waiter.
 *
 * <p><b>Use.</b> Meets {@link Lock}; not reentrant ({@code lock()} by the
 * holder throws {@link IllegalMonitorStateException}, as does {@code unlock()}
 * by a non-holder). {@link #newCondition()} is not supported.
 */
public final class TtasLock extends TtasFields implements Lock {
    long q0, q1, q2, q3, q4, q5, q6, q7;

    /**
     * Waiters in the park phase; written only when a waiter starts or stops
     * parking, never on the fast paths.
     */
    volatile int parkedWaiters;

    /** The park's cap grows by this much per parked waiter (see the class comment). */
    static final long PARK_NANOS_PER_PARKED_WAITER = 8_000;

    private static final VarHandle STATE;
    private static final VarHandle PARKED_WAITERS;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(TtasFields.class, "state", int.class);
            PARKED_WAITERS = MethodHandles.lookup().findVarHandle(TtasLock.class, "parkedWaiters", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final WaitPolicy policy;

    /** A lock with {@link WaitPolicy#TTAS_DEFAULT}. */
    public TtasLock() {
        this(WaitPolicy.TTAS_DEFAULT);
    }

    /** A lock with the given waiting policy. */
    public TtasLock(WaitPolicy policy) {
        this.policy = java.util.Objects.requireNonNull(policy, "policy");
    }

    @Override
    public void lock() {
        if (state == 0 && STATE.compareAndSet(this, 0, 1)) {
            owner = Thread.currentThread();
            return;
        }
        checkNotHolder();
        try {
            acquireSlow(false, 0L);
        } catch (InterruptedException impossible) {
            throw new AssertionError(impossible);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (!tryLock()) {
            checkNotHolder();
            acquireSlow(true, 0L);
        }
    }

    @Override
    public boolean tryLock() {
        if (state == 0 && STATE.compareAndSet(this, 0, 1)) {
            owner = Thread.currentThread();
            return true;
        }
        return false;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return Waiting.tryLock(this, time, unit, this::acquire);
    }

    @Override
    public void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException("TtasLock not held by " + Thread.currentThread());
        }
        owner = null;
        STATE.setRelease(this, 0); // release: pairs with the acquiring CAS of the next holder
    }

    /** Not supported: the locks of this package have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("TtasLock has no conditions");
    }

    /** Whether some thread holds the lock (a snapshot). */
    public boolean isLocked() {
        return state != 0;
    }

    @Override
    public String toString() {
        Thread o = owner;
        return "TtasLock[" + (o == null ? "unlocked" : "locked by " + o) + "]";
    }

    /** Interruptible acquisition; false on timeout, throws on interrupt. */
    private boolean acquire(long deadline) throws InterruptedException {
        checkNotHolder();
        return acquireSlow(true, deadline);
    }

    /** Out of line: the fast path of lock() stays small enough to inline. */
    private boolean acquireSlow(boolean interruptible, long deadline) throws InterruptedException {
        boolean restore = false;
        boolean parking = false;
        int failures = 0;
        long parkNanos = policy.minParkNanos();
        try {
            for (;;) {
                if (state == 0 && STATE.compareAndSet(this, 0, 1)) {
                    owner = Thread.currentThread();
                    return true;
                }
                if (Thread.interrupted()) {
                    if (interruptible) {
                        throw new InterruptedException();
                    }
                    restore = true;
                }
                long left = deadline == 0 ? Long.MAX_VALUE : Waiting.remaining(deadline);
                if (left <= 0) {
                    return false;
                }
                if (Waiting.pause(policy, ++failures) == Waiting.PARK) {
                    if (!parking) {
                        PARKED_WAITERS.getAndAdd(this, 1);
                        parking = true;
                    }
                    LockSupport.parkNanos(this, Math.max(1, Math.min(parkNanos, left)));
                    parkNanos = Math.min(parkCap(), Math.max(1, parkNanos) * 2);
                }
            }
        } finally {
            if (parking) {
                PARKED_WAITERS.getAndAdd(this, -1);
            }
            if (restore) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The cap of the timed park: the policy's, or longer with many parked waiters. */
    long parkCap() {
        return Math.max(policy.maxParkNanos(), parkedWaiters * PARK_NANOS_PER_PARKED_WAITER);
    }

    private void checkNotHolder() {
        if (owner == Thread.currentThread()) {
            throw new IllegalMonitorStateException("TtasLock is not reentrant");
        }
    }
}

/** Leading pad of {@link TtasLock}. */
abstract class TtasPad {
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

/** The lock word, between the pads. */
abstract class TtasFields extends TtasPad {
    /** 0 free, 1 held; CAS by acquirers, release-store 0 by the holder. */
    volatile int state;
    /** Holder, plain: written after the acquiring CAS, read by the holder in unlock(). */
    Thread owner;
}
