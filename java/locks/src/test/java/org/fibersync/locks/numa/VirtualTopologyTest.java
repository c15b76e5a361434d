package org.fibersync.locks.numa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.fibersync.locks.MutexWitness;
import org.fibersync.locks.NumaMcsLock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The system-property override end to end. Run by the surefire execution
 * topology-2, which passes {@code -Dfibersync.topology=2}.
 */
@Tag("topology")
class VirtualTopologyTest {

    @Test
    void propertyGivesTwoVirtualNodes() {
        assertEquals("2", System.getProperty(Topology.PROPERTY), "run by the topology-2 execution");
        assertEquals(2, Topology.system().nodeCount());
        assertEquals(2, new NumaMcsLock().queueCount());
    }

    /** Platform threads pinned to two cpus land in the two virtual nodes. */
    @Test
    void pinnedThreadsSeeDifferentNodes() throws Exception {
        int[] allowed = NativeCpu.allowedCpus();
        assumeTrue(NativeCpu.available() && allowed.length >= 2, "needs two cpus");
        Topology sys = Topology.system();
        Set<Integer> nodes = new HashSet<>();
        for (int cpu : new int[] {allowed[0], allowed[1]}) {
            int[] node = {-1};
            Thread t = Thread.ofPlatform().start(() -> {
                NativeCpu.pinCurrentThread(cpu);
                for (int i = 0; i <= CarrierCache.REFRESH; i++) {
                    node[0] = sys.currentNode();
                }
            });
            t.join();
            assertEquals(sys.nodeOfCpu(cpu), node[0]);
            nodes.add(node[0]);
        }
        assertEquals(allowed[0] % 2 == allowed[1] % 2 ? 1 : 2, nodes.size());
    }

    /** Mutual exclusion over both node queues with carriers on both cpus. */
    @Test
    void mutualExclusionAcrossVirtualNodes() throws Exception {
        int[] allowed = NativeCpu.allowedCpus();
        boolean pinned = NativeCpu.available() && allowed.length >= 2 && allowed[0] % 2 != allowed[1] % 2;
        if (pinned) {
            // One carrier on a cpu of each virtual node, so both queues get used.
            CarrierPinning.pinCarriers(2, new int[] {allowed[0], allowed[1]}, java.time.Duration.ofSeconds(10));
        }
        NumaMcsLock lock = new NumaMcsLock();
        MutexWitness witness = new MutexWitness();
        Set<Integer> nodesSeen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 256; t++) {
            threads.add(Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 200; i++) {
                    nodesSeen.add(Topology.system().currentNode());
                    witness.incrementUnder(lock, Thread::yield);
                }
            }));
        }
        for (Thread t : threads) {
            t.join(java.time.Duration.ofSeconds(60));
            assertTrue(!t.isAlive(), "stuck thread");
        }
        assertEquals(0, witness.overlaps());
        assertEquals(256 * 200, witness.count());
        if (pinned) {
            assertEquals(2, nodesSeen.size(), "carriers pinned to cpus of both virtual nodes");
        }
    }
}
