package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

class InterruptTest {

    private static void awaitWaiting(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING
                && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        Thread.sleep(5); // let it get past the spin and yield phases as well
    }

    /** An acquisition that may be interrupted; what it returns is its outcome. */
    private interface Attempt {
        Object run() throws InterruptedException;
    }

    /**
     * Runs {@code attempt} on a virtual thread, interrupts it once it waits,
     * and returns its outcome: what it returned, or the InterruptedException
     * it threw.
     */
    private static Object interruptWhileWaiting(Attempt attempt) throws InterruptedException {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                outcome.set(attempt.run());
            } catch (InterruptedException e) {
                outcome.set(e);
            }
        });
        awaitWaiting(waiter);
        waiter.interrupt();
        waiter.join(Duration.ofSeconds(10));
        return outcome.get();
    }

    @ForEachLock
    void lockInterruptiblyThrowsWhenInterruptedWhileWaiting(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        lock.lock();
        Object outcome = interruptWhileWaiting(() -> {
            lock.lockInterruptibly();
            lock.unlock();
            return new AssertionError("acquired a held lock");
        });
        assertTrue(outcome instanceof InterruptedException, "got " + outcome);
        lock.unlock();
        // The cancelled waiter must not block later acquisitions.
        Thread later = Thread.ofVirtual().start(() -> {
            lock.lock();
            lock.unlock();
        });
        later.join(Duration.ofSeconds(10));
        assertTrue(!later.isAlive(), "lock usable after an interrupted waiter");
    }

    @ForEachLock
    void alreadyInterruptedThrowsAtOnce(Supplier<Lock> factory) {
        Lock lock = factory.get();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, lock::lockInterruptibly);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock.tryLock(1, TimeUnit.SECONDS));
        assertTrue(lock.tryLock(), "nothing was left held");
        lock.unlock();
    }

    @ForEachLock
    void timedTryLockThrowsWhenInterruptedWhileWaiting(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        lock.lock();
        Object outcome = interruptWhileWaiting(() -> lock.tryLock(30, TimeUnit.SECONDS));
        assertTrue(outcome instanceof InterruptedException, "got " + outcome);
        lock.unlock();
    }

    /** lock() ignores interrupts while waiting and keeps the interrupt status. */
    @ForEachLock
    void lockIsNotInterruptibleButKeepsTheStatus(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        CountDownLatch release = new CountDownLatch(1);
        lock.lock();
        AtomicBoolean acquired = new AtomicBoolean();
        AtomicBoolean statusKept = new AtomicBoolean();
        Thread waiter = Thread.ofVirtual().start(() -> {
            lock.lock();
            acquired.set(true);
            statusKept.set(Thread.currentThread().isInterrupted());
            lock.unlock();
            release.countDown();
        });
        awaitWaiting(waiter);
        waiter.interrupt();
        Thread.sleep(20);
        assertEquals(false, acquired.get(), "an interrupt must not hand over a held lock");
        lock.unlock();
        assertTrue(release.await(10, TimeUnit.SECONDS), "waiter acquired after release");
        assertTrue(acquired.get());
        assertTrue(statusKept.get(), "interrupt status survives lock()");
    }
}
