package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

class TryLockTest {

    /** A virtual thread that holds a lock until {@link #release()}. */
    private record Holder(Thread thread, CountDownLatch letGo) {

        /** Returns once the new holder has the lock. */
        static Holder start(Lock lock) throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            Thread thread = Thread.ofVirtual().start(() -> {
                lock.lock();
                try {
                    held.countDown();
                    letGo.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    lock.unlock();
                }
            });
            held.await();
            return new Holder(thread, letGo);
        }

        /** Lets the holder unlock, and returns once it has. */
        void release() throws InterruptedException {
            letGo.countDown();
            thread.join();
        }
    }

    @ForEachLock
    void tryLockWithoutTimeout(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        assertTrue(lock.tryLock(), "free lock");
        lock.unlock();

        Holder holder = Holder.start(lock);
        AtomicBoolean got = new AtomicBoolean(true);
        Thread.ofVirtual().start(() -> got.set(lock.tryLock())).join();
        assertFalse(got.get(), "tryLock must fail while another thread holds the lock");
        holder.release();
        assertTrue(lock.tryLock(), "free again after the holder left");
        lock.unlock();
    }

    @ForEachLock
    void tryLockTimesOutWhileHeld(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        Holder holder = Holder.start(lock);
        long t0 = System.nanoTime();
        boolean got = lock.tryLock(30, TimeUnit.MILLISECONDS);
        long waited = System.nanoTime() - t0;
        assertFalse(got);
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(30), "returned after " + waited + " ns");
        assertTrue(waited < TimeUnit.SECONDS.toNanos(10), "returned after " + waited + " ns");
        assertFalse(lock.tryLock(0, TimeUnit.SECONDS), "zero timeout on a held lock");
        holder.release();
    }

    @ForEachLock
    void tryLockSucceedsWhenReleasedBeforeTimeout(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        Holder holder = Holder.start(lock);
        AtomicBoolean got = new AtomicBoolean();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                got.set(lock.tryLock(20, TimeUnit.SECONDS));
                if (got.get()) {
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread.sleep(20);
        holder.release();
        waiter.join(Duration.ofSeconds(20));
        assertTrue(got.get(), "the waiter gets the lock once it is released");
    }

    /**
     * Many waiters time out while the lock is held (queue locks leave
     * cancelled nodes behind); afterwards the lock must still hand over to
     * patient waiters and be free at the end.
     */
    @ForEachLock
    void cancelledWaitersAreSkipped(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        Holder holder = Holder.start(lock);
        AtomicInteger timedOut = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        TestThreads tt = new TestThreads();
        for (int i = 0; i < 300; i++) {
            boolean patient = i % 3 == 0;
            tt.startVirtual(() -> {
                if (lock.tryLock(patient ? 30_000 : 5, TimeUnit.MILLISECONDS)) {
                    acquired.incrementAndGet();
                    Thread.yield();
                    lock.unlock();
                } else {
                    timedOut.incrementAndGet();
                }
            });
        }
        Thread.sleep(100); // the impatient ones give up while the lock is held
        holder.release();
        tt.joinAll(Duration.ofSeconds(60));
        assertEquals(300, acquired.get() + timedOut.get());
        assertTrue(acquired.get() >= 100, "every patient waiter acquires: " + acquired.get());
        assertTrue(timedOut.get() > 0, "some waiters timed out");
        assertTrue(lock.tryLock(), "the lock is free at the end");
        lock.unlock();
    }
}
