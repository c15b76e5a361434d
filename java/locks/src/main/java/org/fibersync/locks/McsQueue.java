package org.fibersync.locks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One MCS queue of {@link QNode}s: the whole of {@link McsLock}, and one
 * per NUMA node in {@link NumaMcsLock}. It hands a <em>grant</em> from node
 * to node; what a grant means is up to the lock (ownership or leadership).
 *
 * <pre>
 *   tail ------------------------------------------+
 *                                                  v
 *   [granted] --next--> [WAITING] --next--> ... [PARKED]
 *     (owner/leader)     spinning/yielding        parked
 * </pre>
 *
 * Padded on both sides so that queues of different NUMA nodes, which are
 * allocated together, never share a cache line.
 */
final class McsQueue extends McsQueueFields {
    long q0, q1, q2, q3, q4, q5, q6, q7;

    /** {@link #awaitGrant} outcome: the node was granted. */
    static final int GRANTED = 0;
    /** {@link #awaitGrant} outcome: the node was cancelled at its deadline. */
    static final int TIMED_OUT = 1;
    /** {@link #awaitGrant} outcome: the node was cancelled on interrupt. */
    static final int INTERRUPTED = 2;
    /** Bit or-ed into the outcome: an interrupt was consumed and must be re-asserted. */
    static final int RESTORE_INTERRUPT = 4;

    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(McsQueueFields.class, "tail", QNode.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Appends {@code node}; returns its predecessor, or {@code null} when the
     * queue was empty (then the caller holds the grant at once).
     */
    QNode enqueue(QNode node) {
        QNode prev = (QNode) TAIL.getAndSet(this, node);
        if (prev != null) {
            prev.next = node; // volatile: pairs with the read of next in passOn()
        }
        return prev;
    }

    /** Takes the grant only if the queue is empty (tryLock of McsLock). */
    boolean tryEnqueueFirst(QNode node) {
        return tail == null && TAIL.compareAndSet(this, (QNode) null, node);
    }

    boolean isEmpty() {
        return tail == null;
    }

    /**
     * Waits until {@code node} is granted: spin -> yield -> park (untimed, or
     * until {@code deadline} when it is not 0). On a deadline or, when
     * {@code interruptible}, an interrupt, the node is cancelled (and later
     * skipped by the granter) unless the grant won the race (INV1 in
     * {@link QNode}); then the grant is reported and the caller owns it.
     *
     * @return {@link #GRANTED}, {@link #TIMED_OUT} or {@link #INTERRUPTED},
     *         possibly or-ed with {@link #RESTORE_INTERRUPT}
     */
    int awaitGrant(QNode node, WaitPolicy policy, boolean interruptible, long deadline) {
        int restore = 0;
        int failures = 0;
        for (;;) {
            int s = node.state;
            if (s == QNode.GRANTED) {
                return GRANTED | restore;
            }
            int abort = 0;
            if (Thread.interrupted()) {
                if (interruptible) {
                    abort = INTERRUPTED;
                } else {
                    // Uninterruptible lock(): clear the flag so park() blocks
                    // again, and set it back once the lock is ours.
                    restore = RESTORE_INTERRUPT;
                }
            }
            if (abort == 0 && deadline != 0 && Waiting.remaining(deadline) <= 0) {
                abort = TIMED_OUT;
            }
            if (abort != 0) {
                if (node.casState(s, QNode.CANCELLED)) { // INV1
                    return abort | restore;
                }
                if (abort == INTERRUPTED) {
                    restore = RESTORE_INTERRUPT; // lost to the grant: keep the interrupt visible
                }
                continue; // granted meanwhile: report the grant
            }
            if (Waiting.pause(policy, ++failures) == Waiting.PARK) {
                if (s == QNode.WAITING && !node.casState(QNode.WAITING, QNode.PARKED)) {
                    continue; // granted between the read and the CAS (INV2)
                }
                if (deadline != 0) {
                    LockSupport.parkNanos(this, Waiting.remaining(deadline));
                } else {
                    LockSupport.park(this);
                }
            }
        }
    }

    /**
     * Hands the grant held by {@code node} to its first successor that has
     * not cancelled, unparking it if it parked; empties the queue when there
     * is none. Called by the grant holder only.
     */
    void passOn(QNode node, WaitPolicy policy) {
        for (;;) {
            QNode next = node.next;
            if (next == null) {
                if (TAIL.compareAndSet(this, node, (QNode) null)) {
                    return;
                }
                // A successor swapped itself into the tail and is about to
                // link: it is a few instructions away, so never park here.
                int failures = 0;
                while ((next = node.next) == null) {
                    if (Waiting.pause(policy, ++failures) == Waiting.PARK) {
                        Thread.yield();
                    }
                }
            }
            for (;;) {
                int s = next.state;
                if (s == QNode.CANCELLED) {
                    break; // skip it: it left, its successor (if any) is ours to serve
                }
                if (next.casState(s, QNode.GRANTED)) { // INV1
                    if (s == QNode.PARKED) {
                        LockSupport.unpark(next.thread); // INV2
                    }
                    return;
                }
            }
            node = next;
        }
    }
}

/** Leading pad of {@link McsQueue}. */
abstract class McsQueuePad {
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

/** Fields of {@link McsQueue}, between its pads. */
abstract class McsQueueFields extends McsQueuePad {
    /** Last node; swapped in by arriving waiters, CAS-ed to null by the last grant holder. */
    volatile QNode tail;
    /**
     * NumaMcsLock only: the node that holds this queue's leadership, written
     * by that node when it learns it leads, read by unlock() when it looks for
     * a parked leader to wake. May be stale (a node that left); readers check
     * the node's state.
     */
    volatile QNode leader;
}
