package org.fibersync.locks.stress;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.locks.Lock;
import org.fibersync.locks.McsLock;
import org.fibersync.locks.NumaMcsLock;
import org.fibersync.locks.TtasLock;
import org.fibersync.locks.WaitPolicy;
import org.fibersync.locks.numa.Topology;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress mutual exclusion: two actors each increment a plain field under
 * the lock and report the value they saw. With a correct lock the two
 * results are 1 and 2 in some order; "1, 1" is a lost update (both were
 * inside at once, or the unlock/lock pair did not order their accesses).
 * Run by the exec execution "jcstress" in the integration-test phase.
 */
public final class MutexStress {
    private MutexStress() {
    }

    /**
     * The state and outcomes of every test here. jcstress finds only the
     * {@code @Actor} methods a test class declares itself, so each test
     * still spells out its two actors.
     */
    @Outcome(id = {"1, 2", "2, 1"}, expect = ACCEPTABLE, desc = "serialised")
    @Outcome(expect = FORBIDDEN, desc = "both inside at once, or unordered")
    abstract static class Base {
        private final Lock lock;
        int v;

        Base(Lock lock) {
            this.lock = lock;
        }

        int incrementUnderLock() {
            lock.lock();
            try {
                return ++v;
            } finally {
                lock.unlock();
            }
        }
    }

    @JCStressTest
    @JCStressMeta(Base.class)
    @State
    public static class NumaMcs extends Base {
        public NumaMcs() {
            super(new NumaMcsLock());
        }

        @Actor
        public void actor1(II_Result r) {
            r.r1 = incrementUnderLock();
        }

        @Actor
        public void actor2(II_Result r) {
            r.r2 = incrementUnderLock();
        }
    }

    /** Two virtual nodes chosen by thread: the actors lead different queues. */
    @JCStressTest
    @JCStressMeta(Base.class)
    @State
    public static class NumaMcsTwoNodes extends Base {
        static final Topology TWO = Topology.custom(2, () -> (int) (Thread.currentThread().threadId() & 1));

        public NumaMcsTwoNodes() {
            super(new NumaMcsLock(TWO, WaitPolicy.QUEUE_DEFAULT));
        }

        @Actor
        public void actor1(II_Result r) {
            r.r1 = incrementUnderLock();
        }

        @Actor
        public void actor2(II_Result r) {
            r.r2 = incrementUnderLock();
        }
    }

    @JCStressTest
    @JCStressMeta(Base.class)
    @State
    public static class Mcs extends Base {
        public Mcs() {
            super(new McsLock());
        }

        @Actor
        public void actor1(II_Result r) {
            r.r1 = incrementUnderLock();
        }

        @Actor
        public void actor2(II_Result r) {
            r.r2 = incrementUnderLock();
        }
    }

    @JCStressTest
    @JCStressMeta(Base.class)
    @State
    public static class Ttas extends Base {
        public Ttas() {
            super(new TtasLock());
        }

        @Actor
        public void actor1(II_Result r) {
            r.r1 = incrementUnderLock();
        }

        @Actor
        public void actor2(II_Result r) {
            r.r2 = incrementUnderLock();
        }
    }
}
