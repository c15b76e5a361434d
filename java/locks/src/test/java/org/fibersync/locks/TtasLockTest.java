package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * TtasLock's timed park: its cap grows with the parked waiters, so that many
 * sleeping waiters do not crowd the holder off the carriers (FewCarriersTest's
 * long queues on one carrier made no progress for 90 s with a fixed 1 ms cap).
 */
class TtasLockTest {

    @Test
    void theParkCapIsThePolicysWhileFewWaitersPark() {
        TtasLock lock = new TtasLock();
        assertEquals(0, lock.parkedWaiters);
        assertEquals(WaitPolicy.TTAS_DEFAULT.maxParkNanos(), lock.parkCap());
    }

    @Test
    void theParkCapGrowsWithTheParkedWaitersAndTheCountReturnsToZero() throws Exception {
        // No spin, no yield: every waiter parks at its first failed check.
        TtasLock lock = new TtasLock(WaitPolicy.TTAS_DEFAULT.withSpinChecks(0).withYieldChecks(0));
        int waiters = 400;
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        lock.lock();
        try {
            tt.startVirtual(waiters, 1, i -> witness.incrementUnder(lock, () -> { }));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (lock.parkedWaiters < waiters && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(waiters, lock.parkedWaiters, "every waiter parks while the lock is held");
            assertEquals(waiters * TtasLock.PARK_NANOS_PER_PARKED_WAITER, lock.parkCap());
            assertTrue(lock.parkCap() > WaitPolicy.TTAS_DEFAULT.maxParkNanos());
        } finally {
            lock.unlock();
        }
        tt.joinAll(Duration.ofSeconds(60));
        assertEquals(0, witness.overlaps());
        assertEquals(waiters, witness.count());
        assertEquals(0, lock.parkedWaiters, "each waiter takes its count back when it acquires");
    }

    @Test
    void aWaiterThatTimesOutWhileParkedTakesItsCountBack() throws Exception {
        TtasLock lock = new TtasLock(WaitPolicy.TTAS_DEFAULT.withSpinChecks(0).withYieldChecks(0));
        lock.lock();
        try {
            TestThreads tt = new TestThreads();
            boolean[] got = new boolean[1];
            tt.startVirtual(() -> got[0] = lock.tryLock(5, java.util.concurrent.TimeUnit.MILLISECONDS));
            tt.joinAll(Duration.ofSeconds(30));
            assertEquals(false, got[0]);
            assertEquals(0, lock.parkedWaiters);
        } finally {
            lock.unlock();
        }
    }
}
