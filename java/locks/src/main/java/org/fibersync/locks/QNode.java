package org.fibersync.locks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A waiter's queue node, shared by {@link McsLock} and {@link NumaMcsLock}.
 *
 * <p>State machine of {@code state} (the hand-over handshake of DESIGN.md
 * section 2; "granted" is {@link #GRANTED} in McsLock, where it means "you
 * own the lock", and in NumaMcsLock, where it means "you lead your node's
 * queue and may compete for the global flag"):
 * <pre>
 *            waiter CAS                 predecessor CAS (+ unpark if it saw PARKED)
 *   WAITING ------------> PARKED ---------------------------------+
 *      |                    |                                      v
 *      +--------------------+----------------------------------> GRANTED
 *      |                    |   waiter CAS (timeout/interrupt)     |  leader CAS
 *      +--------------------+--------------> CANCELLED             v  (NumaMcsLock only)
 *                                                            GRANTED_PARKED
 * </pre>
 * INV1: every transition is a CAS, so a waiter that cancels and a predecessor
 * that grants cannot both win: a cancelled node is never granted, and a
 * granted node never cancels (it hands the grant on instead).
 * INV2: the predecessor unparks only if it replaced PARKED, and the waiter
 * parks only after its own CAS to PARKED succeeded, so no unpark is lost and
 * none is paid for in vain (LockSupport's permit covers the window between
 * the waiter's CAS and its park).
 */
final class QNode extends QNodeFields {
    // Trailing pad: with QNodePad in front, the hot fields sit alone on their
    // 64-byte line (HotSpot lays superclass fields before subclass fields;
    // this holds without -XX:-RestrictContended, unlike @Contended).
    long q0, q1, q2, q3, q4, q5, q6, q7;

    static final int WAITING = 0;        // queued, checking its state
    static final int PARKED = 1;         // queued, parked or about to park
    static final int GRANTED = 2;        // lock (McsLock) or leadership (NumaMcsLock) handed over
    static final int GRANTED_PARKED = 3; // NumaMcsLock leader parked until the global flag is released
    static final int CANCELLED = 4;      // gave up (timeout or interrupt); skipped by the granter

    QNode(Thread thread) {
        super(thread);
    }

    static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(QNodeFields.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    boolean casState(int expected, int next) {
        return STATE.compareAndSet(this, expected, next);
    }
}

/** Leading pad of {@link QNode}. */
abstract class QNodePad {
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

/** The fields of {@link QNode}, between its two pads. */
abstract class QNodeFields extends QNodePad {
    /** The waiting thread; written once, read by the granter to unpark it. */
    final Thread thread;
    /**
     * See the state machine in {@link QNode}. Written by the owner
     * (WAITING->PARKED, ->CANCELLED, GRANTED<->GRANTED_PARKED) and by the
     * granter (->GRANTED); all writes are CAS, all reads volatile.
     */
    volatile int state;
    /**
     * The successor; written once by it right after it swapped itself into the
     * tail, read by this node's owner or by whoever skips this node.
     */
    volatile QNode next;

    QNodeFields(Thread thread) {
        this.thread = thread;
    }
}
