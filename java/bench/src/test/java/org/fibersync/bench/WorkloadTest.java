package org.fibersync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The workloads outside JMH: they run, and they check themselves. */
class WorkloadTest {

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void consumeCpuCountsEveryAction(LockKind kind) throws Exception {
        ConsumeCpuWorkload w = new ConsumeCpuWorkload(kind, 64, 6400, 10, 50, 1, true);
        assertEquals(6400, w.runOnce());
        assertEquals(12800, w.runOnce());
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void textStatsMatchesTheSequentialCount(LockKind kind) throws Exception {
        TextStatsWorkload w = new TextStatsWorkload(kind, 16, 5000, 8, 1L);
        assertTrue(w.distinctWords() > 1000);
        w.reset();
        w.runOnce();
        w.verify();
        w.runOnce(); // counted twice without a reset: verify must notice
        assertThrows(IllegalStateException.class, w::verify);
    }

    @Test
    void lockNamesRoundTrip() {
        for (LockKind k : LockKind.values()) {
            assertEquals(k, LockKind.parse(k.csvName));
        }
        assertEquals(LockKind.NUMA_MCS, LockKind.parse("NUMA MCS"));
        assertThrows(IllegalArgumentException.class, () -> LockKind.parse("spin"));
    }

    @Test
    void csvNumbersAndMedian() {
        assertEquals("NaN", CsvOut.num(Double.NaN));
        assertEquals("1.5", CsvOut.num(1.5));
        assertEquals("0.000001", CsvOut.num(0.000001));
        assertEquals("2", CsvOut.num(2.0));
        assertEquals(2.0, CsvOut.median(java.util.List.of(3.0, 1.0, 2.0)));
        assertEquals(2.5, CsvOut.median(java.util.List.of(4.0, 1.0, 2.0, 3.0)));
    }
}
