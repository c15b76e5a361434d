package org.fibersync.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;
import org.fibersync.locks.numa.Topology;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Command line of the harness:
 * <pre>
 *   java -jar fibersync-bench.jar [CONFIG.json | preset:NAME] [--out FILE.csv]
 *        [--jmh-log FILE] [--dry-run]
 * </pre>
 * With no config it runs {@code preset:default}. Exit status: 0 all runs
 * done; 1 some run failed (the others are in the CSV); 2 bad input (nothing
 * run, no result file). Progress goes to stderr, JMH's own report (appended)
 * to the log file ({@code FILE.jmh.log} beside {@code FILE.csv}).
 */
public final class Main {
    private Main() {
    }

    /** JVM flags every fork gets, besides the scheduler's parallelism. */
    static final List<String> FORK_FLAGS = List.of(
            "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-Xms1g", "-Xmx1g");

    public static void main(String[] args) {
        System.exit(run(args, System.err));
    }

    /** The whole program, minus System.exit (tests call this). */
    public static int run(String[] args, PrintStream err) {
        String config = null;
        Path out = null;
        Path log = null;
        boolean dryRun = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--out", "--jmh-log" -> {
                    if (i + 1 >= args.length) {
                        return usage(err, a + " needs a file name");
                    }
                    Path p = Path.of(args[++i]);
                    if (a.equals("--out")) {
                        out = p;
                    } else {
                        log = p;
                    }
                }
                case "--dry-run" -> dryRun = true;
                case "-h", "--help" -> {
                    usage(err, null);
                    return 0;
                }
                default -> {
                    if (a.startsWith("-")) {
                        return usage(err, "unknown option " + a);
                    }
                    if (config != null) {
                        return usage(err, "more than one config given");
                    }
                    config = a;
                }
            }
        }
        if (config == null) {
            config = "preset:default";
        }

        BenchConfig cfg;
        try {
            cfg = BenchConfig.parse(readConfig(config), Runtime.getRuntime().availableProcessors());
        } catch (ConfigException e) {
            err.println("fibersync-bench: error: " + config + ": " + e.getMessage());
            return 2;
        }

        List<Plan> plans = new ArrayList<>();
        for (BenchConfig.Bench b : cfg.benches()) {
            if (b.skip()) {
                continue;
            }
            for (LockKind k : b.locks()) {
                for (int t : b.threads()) {
                    plans.add(new Plan(b, k, t));
                }
            }
        }
        if (plans.isEmpty()) {
            err.println("fibersync-bench: error: " + config + ": every bench is skipped, nothing to run");
            return 2;
        }
        if (out == null) {
            out = Path.of("results", "java",
                    LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".csv");
        }
        if (log == null) {
            log = Path.of(out.toString().replaceFirst("\\.csv$", "") + ".jmh.log");
        }
        err.println("fibersync-bench: " + plans.size() + " run(s) from " + config + " -> " + out
                + " (JMH log: " + log + ")");
        err.println("fibersync-bench: topology " + Topology.system() + "; JDK " + Runtime.version()
                + "; " + Runtime.getRuntime().availableProcessors() + " cpu(s)");
        if (dryRun) {
            for (Plan p : plans) {
                err.println("  " + p.describe());
            }
            return 0;
        }

        int failed = 0;
        PrintStream stdout = System.out;
        try {
            Files.createDirectories(log.toAbsolutePath().getParent());
        } catch (IOException e) {
            err.println("fibersync-bench: error: cannot create the directory of " + log + ": " + e);
            return 1;
        }
        try (CsvOut csv = new CsvOut(out);
             PrintStream jmhLog = new PrintStream(new java.io.FileOutputStream(log.toFile(), true), true,
                     StandardCharsets.UTF_8)) {
            // JMH reports to System.out; keep stdout clean and the report in the log.
            System.setOut(jmhLog);
            // Interleaved forks: round r runs fork r of every lock before
            // fork r+1 of any, so a burst of load from other processes on a
            // shared machine hits every lock alike and ratios stay fair.
            int total = 0;
            for (Group g : groups(plans)) {
                total += g.rounds() * g.plans().size();
            }
            int i = 0;
            for (Group g : groups(plans)) {
                java.util.Map<Plan, List<BenchmarkResult>> forks = new java.util.LinkedHashMap<>();
                java.util.Map<Plan, org.openjdk.jmh.infra.BenchmarkParams> params = new java.util.HashMap<>();
                java.util.Set<Plan> broken = new java.util.HashSet<>();
                for (int r = 0; r < g.rounds(); r++) {
                    for (Plan p : g.plans()) {
                        i++;
                        if (broken.contains(p)) {
                            continue;
                        }
                        long t0 = System.nanoTime();
                        String tag = "fibersync-bench: [" + i + "/" + total + "] ";
                        err.println(tag + p.describe() + (g.rounds() > 1 ? " round " + (r + 1) + "/" + g.rounds() : ""));
                        try {
                            RunResult rr = runOne(p, g.forksPerRun());
                            forks.computeIfAbsent(p, k -> new ArrayList<>()).addAll(rr.getBenchmarkResults());
                            params.put(p, rr.getParams());
                            Result<?> pr = rr.getPrimaryResult();
                            err.printf("%s%s %s threads=%d: %s +- %s %s, %.0f s%n", tag, p.bench.id(), p.lock.csvName,
                                    p.threads, CsvOut.num(pr.getScore()), CsvOut.num(pr.getScoreError()),
                                    pr.getScoreUnit(), (System.nanoTime() - t0) / 1e9);
                        } catch (RunnerException | RuntimeException e) {
                            failed++;
                            broken.add(p);
                            forks.remove(p);
                            Throwable root = e;
                            while (root.getCause() != null) {
                                root = root.getCause();
                            }
                            err.println(tag + "FAILED: " + root + " (details in " + log + ")");
                        }
                    }
                }
                for (Plan p : g.plans()) {
                    List<BenchmarkResult> brs = forks.get(p);
                    if (brs == null || broken.contains(p)) {
                        continue;
                    }
                    CsvOut.Row row = toRow(p, new RunResult(params.get(p), brs));
                    csv.write(row);
                    err.printf("fibersync-bench: result %s %s threads=%d: %s +- %s %s (median over %d fork(s) %s)%n",
                            p.bench.id(), p.lock.csvName, p.threads, CsvOut.num(row.score()),
                            CsvOut.num(row.scoreError()), row.unit(), row.forks(), CsvOut.num(row.medianOverForks()));
                }
            }
        } catch (IOException e) {
            err.println("fibersync-bench: error: cannot write " + out + ": " + e);
            return 1;
        } finally {
            System.setOut(stdout);
        }
        err.println("fibersync-bench: wrote " + out + (failed == 0 ? "" : " (" + failed + " run(s) failed)"));
        return failed == 0 ? 0 : 1;
    }

    /** One JMH run: a bench x lock x thread count. */
    record Plan(BenchConfig.Bench bench, LockKind lock, int threads) {
        String describe() {
            return bench.id() + " (" + bench.type() + ") lock=" + lock.csvName + " threads=" + threads
                    + " carriers=" + bench.carriers() + (bench.pinCarriers() ? " pinned" : "")
                    + " forks=" + bench.forks() + " wi=" + bench.warmupIterations() + "x" + bench.warmupTime()
                    + " mi=" + bench.measurementIterations() + "x" + bench.measurementTime();
        }
    }

    /** Plans of one bench and thread count: the locks compared with each other. */
    record Group(List<Plan> plans, int rounds, int forksPerRun) {
    }

    static List<Group> groups(List<Plan> plans) {
        java.util.Map<String, List<Plan>> by = new java.util.LinkedHashMap<>();
        for (Plan p : plans) {
            by.computeIfAbsent(p.bench.id() + "/" + p.threads, k -> new ArrayList<>()).add(p);
        }
        List<Group> out = new ArrayList<>();
        for (List<Plan> ps : by.values()) {
            BenchConfig.Bench b = ps.get(0).bench;
            boolean interleave = b.interleaveForks() && b.forks() > 1;
            out.add(new Group(ps, interleave ? b.forks() : 1, interleave ? 1 : b.forks()));
        }
        return out;
    }

    static CsvOut.Row toRow(Plan p, RunResult rr) {
        Result<?> primary = rr.getPrimaryResult();
        List<Double> perFork = new ArrayList<>();
        for (BenchmarkResult br : rr.getBenchmarkResults()) {
            perFork.add(br.getPrimaryResult().getScore());
        }
        return new CsvOut.Row(p.bench.id(), p.lock.csvName, p.threads, p.bench.carriers(), primary.getScore(),
                primary.getScoreError(), primary.getScoreUnit(), perFork.size(), CsvOut.median(perFork),
                p.bench.jmhMode());
    }

    static RunResult runOne(Plan p, int forks) throws RunnerException {
        BenchConfig.Bench b = p.bench;
        boolean cpu = b.type().equals(BenchConfig.CONSUME_CPU);
        Class<?> cls = cpu ? ConsumeCpuBench.class : TextStatsBench.class;
        List<String> jvm = new ArrayList<>(FORK_FLAGS);
        jvm.add("-Djdk.virtualThreadScheduler.parallelism=" + b.carriers());
        // Keep the pool at the requested size: no extra carriers appear
        // (JDK 24+ monitors do not pin, so nothing needs compensation).
        jvm.add("-Djdk.virtualThreadScheduler.maxPoolSize=" + Math.max(b.carriers(), 256));
        String topo = System.getProperty(Topology.PROPERTY);
        if (topo != null) {
            jvm.add("-D" + Topology.PROPERTY + "=" + topo);
        }
        jvm.addAll(b.jvmArgs());

        ChainedOptionsBuilder o = new OptionsBuilder()
                .include("^" + Pattern.quote(cls.getName() + ".run") + "$")
                .param("lock", p.lock.csvName)
                .param("threads", Integer.toString(p.threads))
                .param("pinCarriers", Boolean.toString(b.pinCarriers()))
                .forks(forks)
                .warmupIterations(b.warmupIterations())
                .measurementIterations(b.measurementIterations())
                .warmupTime(TimeValue.fromString(b.warmupTime()))
                .measurementTime(TimeValue.fromString(b.measurementTime()))
                .threads(1)
                .mode(b.jmhMode().equals("avgt") ? org.openjdk.jmh.annotations.Mode.AverageTime
                        : org.openjdk.jmh.annotations.Mode.Throughput)
                .timeUnit(java.util.concurrent.TimeUnit.MILLISECONDS)
                .jvmArgsAppend(jvm.toArray(String[]::new))
                .shouldFailOnError(true)
                .verbosity(VerboseMode.NORMAL);
        if (cpu) {
            o.param("actionsCount", Integer.toString(b.actionsCount()))
                    .param("beforeCpuTokens", Integer.toString(b.beforeCpuTokens()))
                    .param("inCpuTokens", Integer.toString(b.inCpuTokens()))
                    .param("yieldsBefore", Integer.toString(b.yieldsBefore()))
                    .param("yieldInCrit", Boolean.toString(b.yieldInCrit()))
                    .operationsPerInvocation(b.actionsCount()); // score = acquisitions per ms
        } else {
            o.param("lines", Integer.toString(b.lines())).param("shards", Integer.toString(b.shards()));
        }
        for (String prof : b.profilers()) {
            o.addProfiler(prof);
        }
        Collection<RunResult> results = new Runner(o.build()).run();
        if (results.size() != 1) {
            throw new IllegalStateException("expected one JMH result, got " + results.size());
        }
        return results.iterator().next();
    }

    /** Reads a config file, or a packaged preset named {@code preset:NAME}. */
    static String readConfig(String config) throws ConfigException {
        if (config.startsWith("preset:")) {
            String name = config.substring("preset:".length());
            try (InputStream in = Main.class.getResourceAsStream("/presets/" + name + ".json")) {
                if (in == null) {
                    throw new ConfigException("no preset named '" + name + "' (presets: default, high-contention, high-contention-long, low-contention, text-stats)");
                }
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ConfigException("cannot read preset '" + name + "': " + e);
            }
        }
        try {
            return Files.readString(Path.of(config), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("no such file");
        } catch (IOException e) {
            throw new ConfigException("cannot read: " + e);
        }
    }

    private static int usage(PrintStream err, String problem) {
        if (problem != null) {
            err.println("fibersync-bench: error: " + problem
                    + " (usage: [CONFIG.json | preset:NAME] [--out FILE.csv] [--jmh-log FILE] [--dry-run])");
            return 2;
        }
        err.println("usage: fibersync-bench [CONFIG.json | preset:NAME] [--out FILE.csv] [--jmh-log FILE] [--dry-run]");
        err.println("  presets: default, high-contention, high-contention-long, low-contention, text-stats");
        return 0;
    }
}
