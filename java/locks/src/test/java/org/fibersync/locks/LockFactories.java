package org.fibersync.locks;

import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.fibersync.locks.numa.Topology;
import org.junit.jupiter.api.Named;

/** The locks every generic suite runs against. */
final class LockFactories {
    private LockFactories() {
    }

    /**
     * Four virtual nodes picked by thread id, so that waiters spread over
     * several node queues and several leaders race for the flag, whatever
     * the machine's real topology.
     */
    static Topology fourNodesByThread() {
        return Topology.custom(4, () -> (int) (Thread.currentThread().threadId() & 3));
    }

    static Stream<Named<Supplier<Lock>>> all() {
        return Stream.of(
                Named.of("NumaMcsLock", NumaMcsLock::new),
                Named.of("NumaMcsLock(4 nodes by thread)",
                        () -> new NumaMcsLock(fourNodesByThread(), WaitPolicy.QUEUE_DEFAULT)),
                Named.of("McsLock", McsLock::new),
                Named.of("TtasLock", TtasLock::new));
    }
}
