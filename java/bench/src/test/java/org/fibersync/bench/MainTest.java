package org.fibersync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: exit codes, the no-file-on-error rule, and a tiny real JMH run. */
class MainTest {

    private static int run(ByteArrayOutputStream err, String... args) {
        return Main.run(args, new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void badInputExitsTwoWithOneLineAndNoFile(@TempDir Path dir) throws Exception {
        Path csv = dir.resolve("out.csv");
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"benches\": [{\"name\": \"consumeCpu\", \"payload\": {\"locks\": [\"Nope\"]}}]}");
        Path malformed = dir.resolve("malformed.json");
        Files.writeString(malformed, "{ not json");
        for (String[] args : List.of(
                new String[] {dir.resolve("missing.json").toString(), "--out", csv.toString()},
                new String[] {bad.toString(), "--out", csv.toString()},
                new String[] {malformed.toString(), "--out", csv.toString()},
                new String[] {"preset:nope", "--out", csv.toString()},
                new String[] {"--bogus"})) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(2, run(err, args), String.join(" ", args));
            String text = err.toString(StandardCharsets.UTF_8).trim();
            assertTrue(text.startsWith("fibersync-bench: error:"), text);
            assertEquals(1, text.lines().count(), text);
            assertFalse(Files.exists(csv), "no result file on bad input");
        }
    }

    @Test
    void dryRunListsThePlan() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(0, run(err, "preset:high-contention", "--dry-run"));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("lock=NumaMcsLock threads=64 carriers=2"), text);
        assertTrue(text.contains("lock=synchronized"), text);
    }

    /**
     * Runs JMH for real, in-process (forks 0) and tiny: the CSV must have the
     * exact header and one row per (bench, lock, threads).
     */
    @Test
    void tinyRunWritesTheCsv(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("tiny.json");
        Files.writeString(cfg, """
                {"benches": [
                  {"name": "consumeCpu", "payload": {"id": "tiny", "actionsCount": 2000, "inCpuTokens": 10,
                   "warmupIterations": 0, "measurementIterations": 2, "measurementTime": "100ms", "forks": 0,
                   "threads": [4], "carriers": 2, "locks": ["NumaMcsLock", "synchronized"]}},
                  {"name": "textStat", "payload": {"id": "tiny-text", "lines": 2000, "shards": 4,
                   "warmupIterations": 0, "measurementIterations": 2, "measurementTime": "100ms", "forks": 0,
                   "threads": [4], "carriers": 2, "locks": ["ReentrantLockUnfair"]}}]}
                """);
        Path csv = dir.resolve("r/out.csv");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(err, cfg.toString(), "--out", csv.toString());
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
        List<String> lines = Files.readAllLines(csv);
        assertEquals(CsvOut.HEADER, lines.get(0));
        assertEquals(4, lines.size(), String.join("\n", lines));
        String[] r1 = lines.get(1).split(",");
        assertEquals(11, r1.length);
        assertEquals("java", r1[0]);
        assertEquals("tiny", r1[1]);
        assertEquals("NumaMcsLock", r1[2]);
        assertEquals("4", r1[3]);
        assertEquals("2", r1[4]);
        assertTrue(Double.parseDouble(r1[5]) > 0);
        assertEquals("ops/ms", r1[7]);
        assertEquals("thrpt", r1[10]);
        String[] r3 = lines.get(3).split(",");
        assertEquals("tiny-text", r3[1]);
        assertEquals("ms/op", r3[7]);
        assertEquals("avgt", r3[10]);
        assertTrue(Files.exists(dir.resolve("r/out.jmh.log")));
    }
}
