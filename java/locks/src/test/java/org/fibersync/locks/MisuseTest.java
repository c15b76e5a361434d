package org.fibersync.locks;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Operations the locks reject, and the documented limits. */
class MisuseTest {

    @ForEachLock
    void unlockByNonHolderThrows(Supplier<Lock> factory) throws Exception {
        Lock lock = factory.get();
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "unlock of a free lock");
        lock.lock();
        Throwable[] seen = new Throwable[1];
        Thread other = Thread.ofVirtual().start(() -> {
            try {
                lock.unlock();
            } catch (Throwable t) {
                seen[0] = t;
            }
        });
        other.join();
        assertTrue(seen[0] instanceof IllegalMonitorStateException, "got " + seen[0]);
        lock.unlock();
        assertTrue(lock.tryLock(), "still usable");
        lock.unlock();
    }

    @ForEachLock
    void relockByHolderThrowsInsteadOfDeadlocking(Supplier<Lock> factory) {
        Lock lock = factory.get();
        lock.lock();
        try {
            assertThrows(IllegalMonitorStateException.class, lock::lock);
        } finally {
            lock.unlock();
        }
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    @ForEachLock
    void conditionsAreUnsupported(Supplier<Lock> factory) {
        assertThrows(UnsupportedOperationException.class, factory.get()::newCondition);
    }

    @Test
    void waitPolicyRejectsNegativeValues() {
        assertThrows(IllegalArgumentException.class, () -> new WaitPolicy(-1, 1, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> WaitPolicy.TTAS_DEFAULT.withParkNanos(10, 5));
        assertTrue(WaitPolicy.QUEUE_DEFAULT.withYieldChecks(7).yieldChecks() == 7);
    }
}
