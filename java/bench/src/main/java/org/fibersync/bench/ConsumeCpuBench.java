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

/**
 * JMH wrapper of {@link ConsumeCpuWorkload} (bench type {@code consumeCpu}).
 * One invocation = one batch of {@code actionsCount} acquisitions; the runner
 * sets operationsPerInvocation to actionsCount, so the score is acquisitions
 * per millisecond. Models a lock-bound service whose requests do fixed CPU
 * work outside and inside one shared lock (thesis sections 4.2 and 4.3).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ConsumeCpuBench {
    @Param("NumaMcsLock")
    public String lock;
    @Param("4")
    public int threads;
    @Param("64000")
    public int actionsCount;
    @Param("0")
    public int beforeCpuTokens;
    @Param("1000")
    public int inCpuTokens;
    @Param("1")
    public int yieldsBefore;
    @Param("true")
    public boolean yieldInCrit;
    @Param("false")
    public boolean pinCarriers;

    private ConsumeCpuWorkload workload;

    @Setup(Level.Trial)
    public void setup() {
        workload = new ConsumeCpuWorkload(LockKind.parse(lock), threads, actionsCount, beforeCpuTokens,
                inCpuTokens, yieldsBefore, yieldInCrit);
    }

    @Setup(Level.Iteration)
    public void pin() {
        if (pinCarriers) {
            Carriers.pin();
        }
    }

    @Benchmark
    public long run() throws InterruptedException {
        return workload.runOnce();
    }
}
