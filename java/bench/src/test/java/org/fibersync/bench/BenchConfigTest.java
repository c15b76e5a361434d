package org.fibersync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BenchConfigTest {

    @ParameterizedTest
    @ValueSource(strings = {"default", "high-contention", "low-contention", "text-stats"})
    void presetsParse(String name) throws Exception {
        BenchConfig c = BenchConfig.parse(Main.readConfig("preset:" + name), 2);
        assertFalse(c.benches().isEmpty());
        for (BenchConfig.Bench b : c.benches()) {
            assertFalse(b.locks().isEmpty());
            assertEquals(2, b.carriers());
        }
    }

    /** The thesis' appendix A, with its lock spellings. */
    @Test
    void thesisShapeParses() throws Exception {
        String json = """
                {"benches": [{"name": "consumeCpu", "payload": {
                  "actionsCount": 64000, "beforeCpuTokens": 0, "inCpuTokens": 1000,
                  "warmupIterations": 7, "measurementIterations": 7, "forks": 3,
                  "yieldsBefore": 1, "yieldInCrit": true,
                  "title": "ConsumeCPU. High contention.", "skip": true,
                  "locks": [{"name": "NUMA_MCS"}, {"name": "UNFAIR_REENTRANT"}, {"name": "FAIR REENTRANT"}]}}]}
                """;
        BenchConfig c = BenchConfig.parse(json, 4);
        BenchConfig.Bench b = c.benches().get(0);
        assertEquals(List.of(LockKind.NUMA_MCS, LockKind.REENTRANT_UNFAIR, LockKind.REENTRANT_FAIR), b.locks());
        assertTrue(b.skip());
        assertEquals(1000, b.inCpuTokens());
        assertTrue(b.threadsDerived());
        assertEquals(List.of(1, 2, 4, 8, 16), b.threads(), "derived from 4 carriers");
        assertEquals("thrpt", b.jmhMode());
    }

    @Test
    void derivedThreadsGoBeyondTheCarrierCount() {
        assertEquals(List.of(1, 2, 4, 8), BenchConfig.deriveThreads(2));
        assertEquals(List.of(1, 2, 3, 4, 8), BenchConfig.deriveThreads(3).subList(0, 5));
        assertTrue(BenchConfig.deriveThreads(3).contains(3));
    }

    @Test
    void badInputIsRejectedWithAClearMessage() {
        assertMessage("malformed JSON", "{\"benches\": [");
        assertMessage("unknown lock 'FooLock'",
                "{\"benches\":[{\"name\":\"consumeCpu\",\"payload\":{\"locks\":[\"FooLock\"]}}]}");
        assertMessage("thread count must be a positive integer",
                "{\"benches\":[{\"name\":\"consumeCpu\",\"payload\":{\"threads\":[4,0],\"locks\":[\"McsLock\"]}}]}");
        assertMessage("thread count must be a positive integer",
                "{\"benches\":[{\"name\":\"consumeCpu\",\"payload\":{\"threads\":[-2],\"locks\":[\"McsLock\"]}}]}");
        assertMessage("unknown field \"inCpuToken\"",
                "{\"benches\":[{\"name\":\"consumeCpu\",\"payload\":{\"inCpuToken\":5,\"locks\":[\"McsLock\"]}}]}");
        assertMessage("unknown benchmark type",
                "{\"benches\":[{\"name\":\"foo\",\"payload\":{\"locks\":[\"McsLock\"]}}]}");
        assertMessage("non-empty \"benches\"", "{}");
        assertMessage("shards must be a power of two",
                "{\"benches\":[{\"name\":\"textStat\",\"payload\":{\"shards\":3,\"locks\":[\"McsLock\"]}}]}");
    }

    private static void assertMessage(String expected, String json) {
        ConfigException e = assertThrows(ConfigException.class, () -> BenchConfig.parse(json, 2));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }
}
