package org.fibersync.locks.numa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TopologyTest {

    @Test
    void parsesVirtualAndExplicitSpecs() {
        Topology v = Topology.parse("2");
        assertEquals(2, v.nodeCount());
        assertEquals(0, v.nodeOfCpu(0));
        assertEquals(1, v.nodeOfCpu(1));
        assertEquals(0, v.nodeOfCpu(4));

        Topology m = Topology.parse("0-1,4; 2-3");
        assertEquals(2, m.nodeCount());
        assertEquals(0, m.nodeOfCpu(4));
        assertEquals(1, m.nodeOfCpu(3));
        assertEquals(1, m.nodeOfCpu(5), "unlisted cpu falls back to cpu % nodes");

        assertEquals(Topology.os().nodeCount(), Topology.parse("sys").nodeCount());
        assertEquals(Topology.os().nodeCount(), Topology.parse(null).nodeCount());
    }

    @Test
    void rejectsMalformedSpecs() {
        assertThrows(IllegalArgumentException.class, () -> Topology.parse("0"));
        assertThrows(IllegalArgumentException.class, () -> Topology.parse("a-b"));
        assertThrows(IllegalArgumentException.class, () -> Topology.parse("3-1"));
        assertThrows(IllegalArgumentException.class, () -> Topology.parse("0-1;1-2"));
        assertThrows(IllegalArgumentException.class, () -> Topology.custom(0, () -> 0));
    }

    @Test
    void parsesLinuxLists() {
        assertArrayEquals(new int[] {0, 1, 2, 3, 8, 10, 11}, Topology.parseCpuList("0-3,8,10-11"));
    }

    @Test
    void readsNodeCountFromSysfsFormat(@TempDir Path dir) throws Exception {
        Path online = dir.resolve("online");
        Files.writeString(online, "0-3\n");
        assertEquals(4, Topology.readNodeCount(online));
        Files.writeString(online, "0\n");
        assertEquals(1, Topology.readNodeCount(online));
        assertEquals(1, Topology.readNodeCount(dir.resolve("missing")), "no sysfs: one node");
    }

    @Test
    void getcpuReportsAnAllowedCpuAndAValidNode() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        assertTrue(NativeCpu.available(), "getcpu through FFM: " + NativeCpu.unavailableReason());
        int[] out = {-1, -1};
        assertTrue(NativeCpu.getcpu(out));
        int[] allowed = NativeCpu.allowedCpus();
        assertTrue(Arrays.stream(allowed).anyMatch(c -> c == out[0]), "cpu " + out[0] + " in " + Arrays.toString(allowed));
        assertTrue(out[1] >= 0 && out[1] < Topology.os().nodeCount(), "node " + out[1]);
    }

    @Test
    void carrierCacheIsActiveUnderTheBuildFlags() {
        // The build passes --add-exports java.base/jdk.internal.misc=ALL-UNNAMED.
        assertTrue(Topology.cachedPerCarrier(), Topology.os().toString());
    }

    @Test
    void virtualThreadsSeeTheirCarriersNode() throws Exception {
        Topology os = Topology.os();
        int[] seen = {-2, -2};
        Thread t = Thread.ofVirtual().start(() -> {
            seen[0] = os.currentNode();
            seen[1] = os.currentCpu();
        });
        t.join();
        assertTrue(seen[0] >= 0 && seen[0] < os.nodeCount());
        assertTrue(seen[1] >= 0);
    }

    /** Pinning moves the cpu that getcpu reports (after the cache refresh). */
    @Test
    void pinningAThreadMovesItsCpu() throws Exception {
        int[] allowed = NativeCpu.allowedCpus();
        assumeTrue(NativeCpu.available() && allowed.length >= 2, "needs two cpus");
        int target = allowed[allowed.length - 1];
        int[] seen = {-1};
        Thread t = Thread.ofPlatform().start(() -> {
            NativeCpu.pinCurrentThread(target);
            Topology v = Topology.virtual(allowed.length);
            int cpu = -1;
            for (int i = 0; i <= CarrierCache.REFRESH; i++) {
                cpu = v.currentCpu();
            }
            seen[0] = cpu;
        });
        t.join();
        assertEquals(target, seen[0]);
        assertThrows(IllegalArgumentException.class, () -> NativeCpu.pinCurrentThread(-1));
    }
}
