package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Starts threads, joins them with a deadline, and rethrows what they threw. */
final class TestThreads {
    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

    interface Body {
        void run() throws Exception;
    }

    /** A body run round after round; {@code round} counts from 0. */
    interface Round {
        void run(int round) throws Exception;
    }

    Thread startVirtual(Body body) {
        return start(Thread.ofVirtual(), body);
    }

    /** Starts {@code threads} virtual threads that each run {@code rounds} rounds of {@code round}. */
    void startVirtual(int threads, int rounds, Round round) {
        for (int t = 0; t < threads; t++) {
            startVirtual(() -> {
                for (int i = 0; i < rounds; i++) {
                    round.run(i);
                }
            });
        }
    }

    Thread startPlatform(Body body) {
        return start(Thread.ofPlatform().daemon(true), body);
    }

    private Thread start(Thread.Builder b, Body body) {
        Thread t = b.start(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                errors.add(e);
            }
        });
        threads.add(t);
        return t;
    }

    /**
     * Joins all threads within {@code limit}; a thread still alive then means
     * a lost wake-up or a livelock, and fails the test with the stuck
     * threads' stacks.
     */
    void joinAll(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                t.join(Duration.ofNanos(left));
            }
        }
        List<Thread> stuck = threads.stream().filter(Thread::isAlive).toList();
        if (!stuck.isEmpty()) {
            StringBuilder sb = new StringBuilder(stuck.size() + " thread(s) still running after " + limit + "; first:\n");
            for (StackTraceElement e : stuck.get(0).getStackTrace()) {
                sb.append("  at ").append(e).append('\n');
            }
            fail(sb.toString());
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError(errors.size() + " thread(s) failed", errors.peek());
            errors.stream().skip(1).limit(5).forEach(e::addSuppressed);
            throw e;
        }
        assertTrue(threads.stream().noneMatch(Thread::isAlive));
    }
}
