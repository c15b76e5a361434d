package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Lost-unpark and no-progress hunting: long queues on one or two carriers.
 * Run by the surefire executions carriers-1 and carriers-2, which set
 * {@code jdk.virtualThreadScheduler.parallelism} (and maxPoolSize) to 1 and 2.
 * A lost unpark leaves a thread parked forever; joinAll() then fails with its
 * stack instead of hanging the build.
 */
@Tag("carriers")
class FewCarriersTest {

    static Stream<Named<Supplier<Lock>>> locks() {
        return LockFactories.all();
    }

    @Test
    void schedulerIsConfiguredAsIntended() {
        String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        assertTrue(p != null && Integer.parseInt(p) <= 2, "run by the carriers-1/2 executions, got " + p);
    }

    /** 2000 virtual threads queue up behind holders that yield inside. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void longQueuesComplete(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        int threads = 2000;
        int rounds = 10;
        int[] counter = {0};
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger inside = new AtomicInteger();
        TestThreads tt = new TestThreads();
        for (int t = 0; t < threads; t++) {
            tt.startVirtual(() -> {
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        counter[0]++;
                        Thread.yield();
                        inside.decrementAndGet();
                    } finally {
                        lock.unlock();
                    }
                    if ((i & 1) == 0) {
                        Thread.yield();
                    }
                }
            });
        }
        tt.joinAll(Duration.ofSeconds(90));
        assertEquals(0, overlaps.get());
        assertEquals(threads * rounds, counter[0]);
    }

    /**
     * The holder parks inside the critical section (a timed park, as a
     * blocking call would), so every waiter gets past its spin and yield
     * budget and parks; NumaMcsLock's leaders park on the flag as well.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void parkedWaitersAndLeadersAreWoken(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        int threads = 64;
        int rounds = 5;
        int[] counter = {0};
        TestThreads tt = new TestThreads();
        for (int t = 0; t < threads; t++) {
            tt.startVirtual(() -> {
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        counter[0]++;
                        LockSupport.parkNanos(200_000);
                    } finally {
                        lock.unlock();
                    }
                }
            });
        }
        tt.joinAll(Duration.ofSeconds(60));
        assertEquals(threads * rounds, counter[0]);
    }

    /** Waiters that time out in every phase, on few carriers, next to patient ones. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void timeoutsUnderLoadLeaveTheLockUsable(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        AtomicInteger acquired = new AtomicInteger();
        int[] counter = {0};
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
                            counter[0]++;
                            Thread.yield();
                        } finally {
                            lock.unlock();
                        }
                        acquired.incrementAndGet();
                    }
                }
            });
        }
        tt.joinAll(Duration.ofSeconds(90));
        assertEquals(acquired.get(), counter[0]);
        assertTrue(acquired.get() >= 125 * 10, "every patient attempt succeeds: " + acquired.get());
        assertTrue(lock.tryLock());
        lock.unlock();
    }
}
