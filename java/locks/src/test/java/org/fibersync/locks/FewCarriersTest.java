package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lost-unpark and no-progress hunting: long queues on one or two carriers.
 * Run by the surefire executions carriers-1 and carriers-2, which set
 * {@code jdk.virtualThreadScheduler.parallelism} (and maxPoolSize) to 1 and 2.
 * A lost unpark leaves a thread parked forever; joinAll() then fails with its
 * stack instead of hanging the build.
 */
@Tag("carriers")
class FewCarriersTest {

    @Test
    void schedulerIsConfiguredAsIntended() {
        String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        assertTrue(p != null && Integer.parseInt(p) <= 2, "run by the carriers-1/2 executions, got " + p);
    }

    /** 2000 virtual threads queue up behind holders that yield inside. */
    @ForEachLock
    void longQueuesComplete(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        int threads = 2000;
        int rounds = 10;
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        tt.startVirtual(threads, rounds, i -> {
            witness.incrementUnder(lock, Thread::yield);
            if ((i & 1) == 0) {
                Thread.yield();
            }
        });
        tt.joinAll(Duration.ofSeconds(90));
        assertEquals(0, witness.overlaps());
        assertEquals(threads * rounds, witness.count());
    }

    /**
     * The holder parks inside the critical section (a timed park, as a
     * blocking call would), so every waiter gets past its spin and yield
     * budget and parks; NumaMcsLock's leaders park on the flag as well.
     */
    @ForEachLock
    void parkedWaitersAndLeadersAreWoken(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        int threads = 64;
        int rounds = 5;
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        tt.startVirtual(threads, rounds, i -> witness.incrementUnder(lock, () -> LockSupport.parkNanos(200_000)));
        tt.joinAll(Duration.ofSeconds(60));
        assertEquals(0, witness.overlaps(), "two holders at once");
        assertEquals(threads * rounds, witness.count());
    }

    /** Waiters that time out in every phase, on few carriers, next to patient ones. */
    @ForEachLock
    void timeoutsUnderLoadLeaveTheLockUsable(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        AtomicInteger acquired = new AtomicInteger();
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        for (int t = 0; t < 500; t++) {
            long timeoutNanos = (t % 4 == 0) ? Long.MAX_VALUE : 1_000L << (t % 12);
            tt.startVirtual(() -> {
                for (int i = 0; i < 10; i++) {
                    boolean got = timeoutNanos == Long.MAX_VALUE
                            ? lock.tryLock(1, java.util.concurrent.TimeUnit.DAYS)
                            : lock.tryLock(timeoutNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
                    if (got) {
                        try {
                            witness.incrementHeld(Thread::yield);
                        } finally {
                            lock.unlock();
                        }
                        acquired.incrementAndGet();
                    }
                }
            });
        }
        tt.joinAll(Duration.ofSeconds(90));
        assertEquals(0, witness.overlaps(), "two holders at once");
        assertEquals(acquired.get(), witness.count());
        assertTrue(acquired.get() >= 125 * 10, "every patient attempt succeeds: " + acquired.get());
        assertTrue(lock.tryLock());
        lock.unlock();
    }
}
