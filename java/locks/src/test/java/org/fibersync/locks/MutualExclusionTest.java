package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/** Stress: many virtual threads, yields inside the critical section. */
class MutualExclusionTest {

    /**
     * 10 000 virtual threads, each acquiring 3 times and yielding twice inside
     * the critical section (the yield is what lets other threads on the same
     * carrier observe a broken lock). Two witnesses: a plain counter that a
     * broken lock would lose updates of, and an occupancy counter that must
     * read 1 right after entering.
     */
    @ForEachLock
    void tenThousandVirtualThreadsYieldingInside(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        int threads = 10_000;
        int rounds = 3;
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        tt.startVirtual(threads, rounds, i -> witness.incrementUnder(lock, Thread::yield, Thread::yield));
        // TtasLock has no queue: 10 000 pollers make it slow (seconds, more
        // on a loaded machine), hence the generous deadline.
        tt.joinAll(Duration.ofSeconds(150));
        assertEquals(0, witness.overlaps(), "threads inside the critical section at once");
        assertEquals(threads * rounds, witness.count(), "lost updates");
    }

    /** Virtual and platform threads mixed, with timed tryLock in the mix. */
    @ForEachLock
    void mixedThreadKindsAndTimedTryLock(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        AtomicInteger done = new AtomicInteger();
        MutexWitness witness = new MutexWitness();
        TestThreads tt = new TestThreads();
        for (int t = 0; t < 200; t++) {
            boolean platform = t % 10 == 0;
            boolean timed = t % 3 == 0;
            TestThreads.Body body = () -> {
                for (int i = 0; i < 50; i++) {
                    if (timed) {
                        if (!lock.tryLock(50, java.util.concurrent.TimeUnit.MICROSECONDS)) {
                            continue;
                        }
                    } else {
                        lock.lock();
                    }
                    try {
                        witness.incrementHeld(Thread::yield);
                    } finally {
                        lock.unlock();
                    }
                    done.incrementAndGet();
                }
            };
            if (platform) {
                tt.startPlatform(body);
            } else {
                tt.startVirtual(body);
            }
        }
        tt.joinAll(Duration.ofSeconds(60));
        assertEquals(0, witness.overlaps());
        assertEquals(done.get(), witness.count());
    }
}
