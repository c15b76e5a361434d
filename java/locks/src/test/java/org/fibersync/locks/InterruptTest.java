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
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class InterruptTest {

    static Stream<Named<Supplier<Lock>>> locks() {
        return LockFactories.all();
    }

    private static void awaitWaiting(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING
                && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        Thread.sleep(5); // let it get past the spin and yield phases as well
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void lockInterruptiblyThrowsWhenInterruptedWhileWaiting(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        lock.lock();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                lock.lockInterruptibly();
                lock.unlock();
                outcome.set(new AssertionError("acquired a held lock"));
            } catch (InterruptedException e) {
                outcome.set(e);
            }
        });
        awaitWaiting(waiter);
        waiter.interrupt();
        waiter.join(Duration.ofSeconds(10));
        assertTrue(outcome.get() instanceof InterruptedException, "got " + outcome.get());
        lock.unlock();
        // The cancelled waiter must not block later acquisitions.
        Thread later = Thread.ofVirtual().start(() -> {
            lock.lock();
            lock.unlock();
        });
        later.join(Duration.ofSeconds(10));
        assertTrue(!later.isAlive(), "lock usable after an interrupted waiter");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void alreadyInterruptedThrowsAtOnce(Supplier<Lock> factory) {
        Lock lock = factory.get();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, lock::lockInterruptibly);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock.tryLock(1, TimeUnit.SECONDS));
        assertTrue(lock.tryLock(), "nothing was left held");
        lock.unlock();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
    void timedTryLockThrowsWhenInterruptedWhileWaiting(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        lock.lock();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                outcome.set(lock.tryLock(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                outcome.set(e);
            }
        });
        awaitWaiting(waiter);
        waiter.interrupt();
        waiter.join(Duration.ofSeconds(10));
        assertTrue(outcome.get() instanceof InterruptedException, "got " + outcome.get());
        lock.unlock();
    }

    /** lock() ignores interrupts while waiting and keeps the interrupt status. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("locks")
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
