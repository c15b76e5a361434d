package org.fibersync.locks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import org.fibersync.locks.numa.Topology;

/**
 * NUMA_MCS: one MCS queue per NUMA node in front of one global CAS flag, for
 * virtual threads (and platform threads).
 *
 * <p><b>Algorithm.</b> {@code lock()} first tries one CAS on the global flag
 * (fast path). On failure the thread appends a node to the MCS queue of the
 * NUMA node its carrier runs on and waits until it leads that queue; the
 * leader of each node queue competes for the flag. {@code unlock()} releases
 * the flag and hands leadership to the next waiter of the holder's node queue.
 * At most one waiter per NUMA node is ever active on the global flag, so the
 * flag's cache line moves between nodes far less than with one global queue
 * or a plain TTAS, and the other waiters park.
 *
 * <p><b>Source.</b> N. A. Korobeinikov, "Implementation of synchronization
 * primitives for lightweight threads in Java on a NUMA architecture",
 * bachelor thesis, ITMO University, 2023 (section 3.1, NUMA_MCS); the queues
 * are those of J. M. Mellor-Crummey, M. L. Scott, "Algorithms for Scalable
 * Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1), 1991.
 * The structure is the TTAS-MCS-N cohort lock of DESIGN.md.
 *
 * <p><b>Fairness.</b> None overall: the fast path and {@link #tryLock()} barge
 * past queued threads, and leaders of different nodes race for the flag.
 * FIFO holds among the waiters of one node queue. A waiter can starve only
 * while other threads keep taking the flag.
 *
 * <p><b>Where it waits.</b> (0) Before queueing, and once more on becoming
 * leader: an adaptive spin on the flag (2 to 64 checks; grows while spinning
 * succeeds, halves when it fails), so that short critical sections are taken
 * without parking. (1) A queued non-leader on its node's state:
 * spin -> yield -> park; the predecessor unparks it when it hands over the
 * leadership. (2) A leader on the global flag: spin -> yield -> park; every
 * {@code unlock()} that finds a parked leader wakes one. (3) {@code unlock()},
 * only while a successor is between joining the queue and linking to its
 * predecessor (a few instructions): spin -> yield. Thresholds:
 * {@link WaitPolicy#QUEUE_DEFAULT} for (1) and (3),
 * {@link WaitPolicy#LEADER_DEFAULT} for (2), unless given.
 *
 * <p><b>Space.</b> Per lock: one padded flag block plus one padded queue per
 * NUMA node (about 150 bytes each). Per waiting thread: one padded node
 * (about 150 bytes), allocated on the slow path only.
 *
 * <p><b>Use.</b> Meets {@link Lock}: {@code lock}, {@code lockInterruptibly},
 * {@code tryLock}, {@code tryLock(time, unit)} and {@code unlock}. Not
 * reentrant: {@code lock()} by the holder throws
 * {@link IllegalMonitorStateException}, as does {@code unlock()} by a thread
 * that does not hold it. {@link #newCondition()} is not supported. The NUMA
 * node comes from {@link Topology} (FFM {@code getcpu}, cached per carrier;
 * override with {@code -Dfibersync.topology}).
 */
public final class NumaMcsLock implements Lock {

    private final Flag flag = new Flag();
    private final McsQueue[] queues;
    private final Topology topology;
    private final WaitPolicy policy;       // queued non-leaders, and unlock's wait for a link
    private final WaitPolicy leaderPolicy; // leaders waiting for the flag

    /**
     * A lock over the system topology ({@link Topology#system()}) with
     * {@link WaitPolicy#QUEUE_DEFAULT} for queued threads and
     * {@link WaitPolicy#LEADER_DEFAULT} for node-queue leaders.
     */
    public NumaMcsLock() {
        this(Topology.system(), WaitPolicy.QUEUE_DEFAULT, WaitPolicy.LEADER_DEFAULT);
    }

    /** A lock over the system topology; {@code policy} for every waiter, leaders included. */
    public NumaMcsLock(WaitPolicy policy) {
        this(Topology.system(), policy, policy);
    }

    /** A lock over {@code topology}; {@code policy} for every waiter, leaders included. */
    public NumaMcsLock(Topology topology, WaitPolicy policy) {
        this(topology, policy, policy);
    }

    /**
     * A lock with one queue per node of {@code topology}.
     *
     * @param topology     gives the node count and the caller's current node
     * @param policy       waiting of queued threads that do not lead their queue
     * @param leaderPolicy waiting of queue leaders for the global flag
     */
    public NumaMcsLock(Topology topology, WaitPolicy policy, WaitPolicy leaderPolicy) {
        this.topology = java.util.Objects.requireNonNull(topology, "topology");
        this.policy = java.util.Objects.requireNonNull(policy, "policy");
        this.leaderPolicy = java.util.Objects.requireNonNull(leaderPolicy, "leaderPolicy");
        int n = Math.max(1, topology.nodeCount());
        this.queues = new McsQueue[n];
        for (int i = 0; i < n; i++) {
            queues[i] = new McsQueue();
        }
    }

    /** Number of node queues (the topology's node count). */
    public int queueCount() {
        return queues.length;
    }

    @Override
    public void lock() {
        Flag f = flag;
        if (f.state == 0 && f.casState(0, 1)) {
            f.acquired(null, null);
            return;
        }
        checkNotHolder(f);
        acquireSlow(false, 0L);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        Flag f = flag;
        if (f.state == 0 && f.casState(0, 1)) {
            f.acquired(null, null);
            return;
        }
        checkNotHolder(f);
        if (acquireSlow(true, 0L) == McsQueue.INTERRUPTED) {
            throw new InterruptedException();
        }
    }

    /** Barges: succeeds iff the flag is free now, whatever the queues hold. */
    @Override
    public boolean tryLock() {
        Flag f = flag;
        if (f.state == 0 && f.casState(0, 1)) {
            f.acquired(null, null);
            return true;
        }
        return false;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return Waiting.tryLock(this, time, unit, this::acquire);
    }

    /** Interruptible acquisition after a failed fast path; false on timeout, throws on interrupt. */
    private boolean acquire(long deadline) throws InterruptedException {
        checkNotHolder(flag);
        int r = acquireSlow(true, deadline);
        if (r == McsQueue.INTERRUPTED) {
            throw new InterruptedException();
        }
        return r == McsQueue.GRANTED;
    }

    @Override
    public void unlock() {
        Flag f = flag;
        if (f.owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException("NumaMcsLock not held by " + Thread.currentThread());
        }
        QNode node = f.holderNode;
        McsQueue queue = f.holderQueue;
        f.owner = null;
        f.holderNode = null;
        f.holderQueue = null;
        // Volatile (not release) store: with the volatile read of
        // parkedLeaders below it forms the Dekker pair with parkLeader()
        // (increment parkedLeaders, then read state), so either that leader
        // sees the flag free or we see it parked.
        f.state = 0;
        if (node != null) {
            queue.passOn(node, policy);
        }
        if (f.parkedLeaders != 0) {
            wakeOneLeader(f, queue);
        }
    }

    /** Not supported: the locks of this package have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("NumaMcsLock has no conditions");
    }

    /** Whether some thread holds the lock (a snapshot, for monitoring). */
    public boolean isLocked() {
        return flag.state != 0;
    }

    @Override
    public String toString() {
        Thread o = flag.owner;
        return "NumaMcsLock[" + (o == null ? "unlocked" : "locked by " + o) + ", queues=" + queues.length + "]";
    }

    // Implementation overview
    //
    //   flag: 0/1 ----------------------------- one per lock, padded
    //     ^ CAS by: fast path, tryLock, each queue's leader
    //   queues[node]: MCS queue, head = leader --- one per NUMA node, padded
    //     [leader] -> [waiter] -> [waiter]   (waiters parked after a few yields)
    //
    // A thread that came through a queue keeps leading it while it holds the
    // flag (holderNode/holderQueue) and passes leadership in unlock(), as in
    // the thesis. A leader that cannot get the flag for long parks and counts
    // itself in parkedLeaders; unlock() wakes one such leader, preferring the
    // queue of the node it just served. That wake is what makes leader parking
    // safe: a flag released while every leader sleeps would otherwise stay free.

    /**
     * The slow path: queue on the caller's NUMA node, wait for leadership,
     * then compete for the flag. Out of line so that lock() stays small enough
     * to inline.
     *
     * @return an {@link McsQueue} outcome ({@code GRANTED} meaning acquired),
     *         without the RESTORE_INTERRUPT bit (handled here)
     */
    private int acquireSlow(boolean interruptible, long deadline) {
        Thread me = Thread.currentThread();
        Flag f = flag;
        // Short critical sections end while we would still be queueing: try
        // the flag for the adaptive spin budget first (0 when spinning has
        // been failing on this lock).
        if (spinForFlag(f, null, null)) {
            return McsQueue.GRANTED;
        }
        McsQueue q = queues[nodeIndex()];
        QNode node = new QNode(me);
        int r = McsQueue.GRANTED;
        if (q.enqueue(node) != null) {
            r = q.awaitGrant(node, policy, interruptible, deadline);
            if ((r & ~McsQueue.RESTORE_INTERRUPT) != McsQueue.GRANTED) {
                restoreInterrupt(r);
                return r & ~McsQueue.RESTORE_INTERRUPT;
            }
        }
        // A node that found its queue empty leads without a grant: mark it,
        // since parkLeader() and wake() go by the GRANTED state.
        node.state = QNode.GRANTED;
        q.leader = node; // for wakeOneLeader(); volatile, read after parkedLeaders
        int outcome = leadUntilAcquired(node, q, interruptible, deadline);
        restoreInterrupt(r | outcome);
        return outcome & ~McsQueue.RESTORE_INTERRUPT;
    }

    /** As the leader of {@code q}: compete for the flag; on abort hand leadership on. */
    private int leadUntilAcquired(QNode node, McsQueue q, boolean interruptible, long deadline) {
        Flag f = flag;
        if (spinForFlag(f, node, q)) {
            return McsQueue.GRANTED;
        }
        int restore = 0;
        int failures = 0;
        for (;;) {
            if (f.state == 0 && f.casState(0, 1)) {
                f.acquired(node, q);
                return McsQueue.GRANTED | restore;
            }
            int abort = 0;
            if (Thread.interrupted()) {
                if (interruptible) {
                    abort = McsQueue.INTERRUPTED;
                } else {
                    restore = McsQueue.RESTORE_INTERRUPT;
                }
            }
            if (abort == 0 && deadline != 0 && Waiting.remaining(deadline) <= 0) {
                abort = McsQueue.TIMED_OUT;
            }
            if (abort != 0) {
                q.passOn(node, policy);
                // If an unlock() woke us in particular, that wake must not be
                // lost: pass it on to another parked leader while the flag is free.
                if (f.state == 0 && f.parkedLeaders != 0) {
                    wakeOneLeader(f, q);
                }
                return abort | restore;
            }
            if (Waiting.pause(leaderPolicy, ++failures) == Waiting.PARK) {
                parkLeader(f, node, deadline);
            }
        }
    }

    /**
     * Adaptive spinning on the flag, in the manner of HotSpot's monitors:
     * spin for {@code f.spinBudget} checks (exponential {@code onSpinWait}
     * backoff capped at 16, as in {@link Waiting}); a success adds
     * {@link #SPIN_STEP} to the budget (up to {@link #MAX_SPIN}), a failure
     * halves it (down to {@link #MIN_SPIN}, so that a lock whose critical
     * sections got shorter can learn it again). Additive increase,
     * multiplicative decrease: the budget grows only while most spins succeed.
     * Critical sections of ~100 ns (text statistics) are then mostly taken
     * without queueing and parking, while long ones, or ones that yield, cost
     * two short checks. Measured in java/docs/BENCHMARKS.md, "Tuning": text
     * statistics 92 vs 104 ms/op without spinning, high contention unchanged;
     * doubling on success instead cost high contention ~5%.
     */
    private static boolean spinForFlag(Flag f, QNode node, McsQueue q) {
        int budget = f.spinBudget;
        for (int i = 1; i <= budget; i++) {
            int n = Math.min(16, 1 << Math.min(i - 1, 4));
            for (int k = 0; k < n; k++) {
                Thread.onSpinWait();
            }
            if (f.state == 0 && f.casState(0, 1)) {
                f.acquired(node, q);
                if (budget < MAX_SPIN) {
                    f.spinBudget = budget + SPIN_STEP;
                }
                return true;
            }
        }
        if (budget > MIN_SPIN) {
            f.spinBudget = Math.max(MIN_SPIN, budget / 2);
        }
        return false;
    }

    /** Bounds of the adaptive spin budget (flag checks; 64 checks of <= 16 pauses each, ~10-30 us). */
    static final int MIN_SPIN = 2;
    static final int MAX_SPIN = 64;
    static final int SPIN_STEP = 2;

    /** Parks the leader {@code node} until an unlock() wakes it (or timeout/interrupt). */
    private void parkLeader(Flag f, QNode node, long deadline) {
        if (!node.casState(QNode.GRANTED, QNode.GRANTED_PARKED)) {
            return;
        }
        PARKED_LEADERS.getAndAdd(f, 1);
        // Dekker pair with unlock(): our increment is a full fence before this read.
        if (f.state == 0) {
            if (node.casState(QNode.GRANTED_PARKED, QNode.GRANTED)) {
                PARKED_LEADERS.getAndAdd(f, -1);
            } // else a waker already reset our state and took the count down
            return;
        }
        while (node.state == QNode.GRANTED_PARKED) {
            if (deadline != 0) {
                long left = Waiting.remaining(deadline);
                if (left <= 0) {
                    break;
                }
                LockSupport.parkNanos(this, left);
            } else {
                LockSupport.park(this);
            }
            if (Thread.currentThread().isInterrupted()) {
                break; // the caller decides; interrupted() is read there
            }
        }
        // Leaving on our own (timeout, interrupt): undo, unless a waker did.
        if (node.casState(QNode.GRANTED_PARKED, QNode.GRANTED)) {
            PARKED_LEADERS.getAndAdd(f, -1);
        }
    }

    /**
     * Wakes one parked leader, trying the queue {@code near} first (locality:
     * the node whose thread just released the flag), then the others.
     */
    private void wakeOneLeader(Flag f, McsQueue near) {
        McsQueue[] qs = queues;
        if (near != null && wake(f, near)) {
            return;
        }
        for (McsQueue q : qs) {
            if (q != near && wake(f, q)) {
                return;
            }
        }
    }

    private static boolean wake(Flag f, McsQueue q) {
        QNode l = q.leader;
        if (l != null && l.state == QNode.GRANTED_PARKED && l.casState(QNode.GRANTED_PARKED, QNode.GRANTED)) {
            PARKED_LEADERS.getAndAdd(f, -1);
            LockSupport.unpark(l.thread);
            return true;
        }
        return false;
    }

    private int nodeIndex() {
        int n = topology.currentNode();
        int len = queues.length;
        return (n >= 0 && n < len) ? n : Math.floorMod(n, len);
    }

    private static void checkNotHolder(Flag f) {
        if (f.owner == Thread.currentThread()) {
            throw new IllegalMonitorStateException("NumaMcsLock is not reentrant");
        }
    }

    private static void restoreInterrupt(int outcome) {
        if ((outcome & McsQueue.RESTORE_INTERRUPT) != 0) {
            Thread.currentThread().interrupt();
        }
    }

    private static final VarHandle STATE;
    private static final VarHandle PARKED_LEADERS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(FlagFields.class, "state", int.class);
            PARKED_LEADERS = l.findVarHandle(FlagFields.class, "parkedLeaders", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The global flag and the holder's bookkeeping, on a line of their own. */
    static final class Flag extends FlagFields {
        long q0, q1, q2, q3, q4, q5, q6, q7;

        boolean casState(int expected, int next) {
            return STATE.compareAndSet(this, expected, next);
        }

        /** Written by the new holder right after its CAS; read by it in unlock(). */
        void acquired(QNode node, McsQueue queue) {
            owner = Thread.currentThread();
            holderNode = node;
            holderQueue = queue;
        }
    }

    abstract static class FlagPad {
        long p0, p1, p2, p3, p4, p5, p6, p7;
    }

    abstract static class FlagFields extends FlagPad {
        /** 0 free, 1 held. CAS by acquirers; volatile store 0 by the holder. */
        volatile int state;
        /** Leaders parked on the flag; +1 by a parking leader, -1 by whoever resets its state. */
        volatile int parkedLeaders;
        /**
         * Adaptive spin budget (see spinForFlag); plain and racy on purpose:
         * a lost update only delays adaptation by one acquisition.
         */
        int spinBudget = MIN_SPIN;
        /**
         * Holder bookkeeping, plain fields: written by the holder after its
         * acquiring CAS and read by the same thread in unlock(); the next
         * holder's CAS orders it after our volatile release. owner is also
         * read racily by other threads only to compare with themselves.
         */
        Thread owner;
        QNode holderNode;
        McsQueue holderQueue;
    }
}
