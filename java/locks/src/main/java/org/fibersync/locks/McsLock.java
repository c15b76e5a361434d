package org.fibersync.locks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The MCS queue lock for virtual threads.
 *
 * <p><b>Algorithm.</b> A thread appends a node to a FIFO queue with one
 * atomic swap on the tail and then watches only its own node; {@code unlock()}
 * passes the lock to the successor by writing that node's state (and unparks
 * it if it parked). Waiters that time out or are interrupted mark their node
 * cancelled and leave it in place; the next {@code unlock()} skips it.
 *
 * <p><b>Source.</b> J. M. Mellor-Crummey, M. L. Scott, "Algorithms for
 * Scalable Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1),
 * 1991. Cancellation by marking follows the idea of M. L. Scott, "Non-blocking
 * Timeout in Scalable Queue-Based Spin Locks", PODC 2002, in a simpler form
 * (nodes are not unlinked, only skipped).
 *
 * <p><b>Fairness.</b> FIFO among queued threads. {@link #tryLock()} succeeds
 * only when the queue is empty, so it never barges.
 *
 * <p><b>Where it waits.</b> (1) {@code lock()} on its own node's state:
 * spin -> yield -> park, with the hand-over handshake of {@link QNode}, so the
 * holder unparks it only if it parked. (2) {@code unlock()}, only while a
 * successor is between swapping the tail and linking to its predecessor:
 * spin -> yield. Thresholds: {@link WaitPolicy#QUEUE_DEFAULT} unless given.
 * Every hand-over to a parked waiter costs an unpark and a reschedule: under
 * contention with yields inside the critical section this lock is FIFO-slow by
 * design; see {@link NumaMcsLock} for the barging variant.
 *
 * <p><b>Space.</b> One padded queue (about 150 bytes) per lock; one padded
 * node (about 150 bytes) per acquisition, uncontended ones included.
 *
 * <p><b>Use.</b> Meets {@link Lock}; not reentrant ({@code lock()} by the
 * holder throws {@link IllegalMonitorStateException}, as does {@code unlock()}
 * by a non-holder). {@link #newCondition()} is not supported.
 */
public final class McsLock implements Lock {

    private final McsQueue queue = new McsQueue();
    private final WaitPolicy policy;
    /**
     * Holder bookkeeping, plain: written by the new holder once it is granted
     * (ordered after the grant's volatile write) and read by it in unlock().
     * owner is read racily by others only to compare with themselves.
     */
    private Thread owner;
    private QNode holderNode;

    /** A lock with {@link WaitPolicy#QUEUE_DEFAULT}. */
    public McsLock() {
        this(WaitPolicy.QUEUE_DEFAULT);
    }

    /** A lock with the given waiting policy. */
    public McsLock(WaitPolicy policy) {
        this.policy = java.util.Objects.requireNonNull(policy, "policy");
    }

    @Override
    public void lock() {
        checkNotHolder();
        QNode node = new QNode(Thread.currentThread());
        if (queue.enqueue(node) != null) {
            int r = queue.awaitGrant(node, policy, false, 0L);
            if ((r & McsQueue.RESTORE_INTERRUPT) != 0) {
                Thread.currentThread().interrupt();
            }
        }
        acquired(node);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (!acquire(0L)) {
            throw new InterruptedException();
        }
    }

    /** Succeeds only if nobody holds or waits for the lock. */
    @Override
    public boolean tryLock() {
        if (!queue.isEmpty()) {
            return false;
        }
        QNode node = new QNode(Thread.currentThread());
        if (queue.tryEnqueueFirst(node)) {
            acquired(node);
            return true;
        }
        return false;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return Waiting.tryLock(this, time, unit, this::acquire);
    }

    /** Interruptible acquisition; false on timeout, throws on interrupt. */
    private boolean acquire(long deadline) throws InterruptedException {
        checkNotHolder();
        QNode node = new QNode(Thread.currentThread());
        if (queue.enqueue(node) != null) {
            int r = queue.awaitGrant(node, policy, true, deadline);
            if ((r & McsQueue.RESTORE_INTERRUPT) != 0) {
                Thread.currentThread().interrupt();
            }
            switch (r & ~McsQueue.RESTORE_INTERRUPT) {
                case McsQueue.INTERRUPTED -> throw new InterruptedException();
                case McsQueue.TIMED_OUT -> {
                    return false;
                }
                default -> { }
            }
        }
        acquired(node);
        return true;
    }

    @Override
    public void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException("McsLock not held by " + Thread.currentThread());
        }
        QNode node = holderNode;
        owner = null;
        holderNode = null;
        queue.passOn(node, policy);
    }

    /** Not supported: the locks of this package have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("McsLock has no conditions");
    }

    /** Whether some thread holds or waits for the lock (a snapshot). */
    public boolean isLocked() {
        return !queue.isEmpty();
    }

    @Override
    public String toString() {
        Thread o = owner;
        return "McsLock[" + (o == null ? "unlocked" : "locked by " + o) + "]";
    }

    private void acquired(QNode node) {
        owner = Thread.currentThread();
        holderNode = node;
    }

    private void checkNotHolder() {
        if (owner == Thread.currentThread()) {
            throw new IllegalMonitorStateException("McsLock is not reentrant");
        }
    }
}
