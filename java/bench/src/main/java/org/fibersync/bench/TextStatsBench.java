package org.fibersync.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * JMH wrapper of {@link TextStatsWorkload} (bench type {@code textStat}):
 * time to count the words of the whole text once, in ms/op. Maps are emptied
 * before and checked after each invocation, outside the measured time
 * (Level.Invocation is fine here: one invocation takes milliseconds).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class TextStatsBench {
    @Param("NumaMcsLock")
    public String lock;
    @Param("4")
    public int threads;
    @Param("100000")
    public int lines;
    @Param("16")
    public int shards;
    @Param("false")
    public boolean pinCarriers;

    private TextStatsWorkload workload;

    @Setup(Level.Trial)
    public void setup() {
        workload = new TextStatsWorkload(LockKind.parse(lock), threads, lines, shards, 20230601L);
    }

    @Setup(Level.Iteration)
    public void pin() {
        if (pinCarriers) {
            Carriers.pin();
        }
    }

    @Setup(Level.Invocation)
    public void reset() {
        workload.reset();
    }

    @Benchmark
    public void run() throws InterruptedException {
        workload.runOnce();
    }

    @TearDown(Level.Invocation)
    public void verify() {
        workload.verify();
    }
}
