package org.fibersync.locks.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Runs the jcstress tests of {@link MutexStress} in a child JVM (one fork,
 * one iteration of {@code jcstress.timeMs} each, no split-compilation
 * matrix, so the whole run takes about 20 s) and fails unless every planned
 * test passed. jcstress' own exit status is 0 even when a test fails, so the
 * verdict is read from its summary lines.
 */
class JcstressTest {

    @Test
    void mutualExclusionUnderJcstress() throws Exception {
        assumeFalse(Boolean.getBoolean("jcstress.skip"), "jcstress.skip=true");
        Path dir = Path.of(System.getProperty("jcstress.dir", "target/jcstress"));
        Files.createDirectories(dir);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        List<String> cmd = List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-cp", cp, "org.openjdk.jcstress.Main",
                "-t", "org\\.fibersync\\.locks\\.stress\\..*",
                "-f", "1", "-iters", "1", "-sc", "false",
                "-time", System.getProperty("jcstress.timeMs", "1000"),
                "-jvmArgs", "--enable-native-access=ALL-UNNAMED",
                "-r", dir.resolve("report").toString());
        Path log = dir.resolve("jcstress.log");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        boolean finished = p.waitFor(180, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly();
        }
        String out = Files.readString(log);
        assertTrue(finished, "jcstress did not finish in 180 s; log: " + log);
        assertEquals(0, p.exitValue(), "jcstress exit status; log: " + log);

        Matcher m = Pattern.compile("\\(Results: (\\d+) planned; (\\d+) passed, (\\d+) failed, (\\d+) soft errs, (\\d+) hard errs\\)")
                .matcher(out);
        String last = null;
        while (m.find()) {
            last = m.group();
        }
        assertTrue(last != null, "no jcstress summary in " + log + File.separator);
        Matcher r = Pattern.compile("(\\d+) planned; (\\d+) passed, (\\d+) failed, (\\d+) soft errs, (\\d+) hard errs").matcher(last);
        assertTrue(r.find());
        int planned = Integer.parseInt(r.group(1));
        assertTrue(planned >= 4, "all four MutexStress tests planned: " + last);
        assertEquals(planned, Integer.parseInt(r.group(2)), "every test passed: " + last + "; report in " + dir);
        assertTrue(out.contains("Failed tests: No matches."), "no FORBIDDEN outcome; report in " + dir);
        assertTrue(out.contains("Error tests: No matches."), "no errors; report in " + dir);
    }
}
