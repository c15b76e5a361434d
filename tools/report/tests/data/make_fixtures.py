"""Regenerate the checked-in fixtures of tests/data/ (synthetic but shaped like real runs).

    python tests/data/make_fixtures.py

Deterministic (fixed seed): running it again gives the same files. The
numbers follow simple models of the expected behaviour (queue locks scale,
TTAS collapses under contention, the runtime's own mutex lags on fibers, A2
beats A0 by up to ~4x in back substitution, ...), with ~4 % noise between
repetitions. Nothing here is a measurement.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
rng = np.random.default_rng(20240601)

CPP_COLUMNS = (
    "scenario,runtime,mutex,lts,carriers,pinning,topology,repetition,duration_ms,acquisitions,"
    "throughput_per_ms,jain_index,bypass_mean,bypass_p99,bypass_max,latency_p50_ns,latency_p90_ns,"
    "latency_p99_ns,latency_samples,latency_migrated,yields_per_acq,suspends_per_acq,"
    "migrations_per_acq,same_node_handover,same_cluster_handover,remote_handovers_per_1000,"
    "cpu_time_ms,cpu_utilization,hold_fraction,lock_rate_per_ms,speedup_vs_1,bound_per_ms,"
    "bound_fraction,arch,distribution,matrix_n,forward_ms,back_ms,total_ms,residual"
).split(",")

LTS = [1, 2, 4, 8, 16, 32, 64]
REPS = 5
CARRIERS = 4
CONTEXT = {
    "host": "bench-node-7",
    "cpu_model": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
    "cores": 40,
    "numa_nodes": 2,
    "kernel": "Linux 6.1.0-18-amd64",
    "compiler": "GCC 12.2.0",
    "build_type": "Release",
    "git_revision": "3f2c1e9a7b",
    "command": "fibersync-bench --preset paper --runtimes boost_fiber,native,os_threads "
    "--lts 1,2,4,8,16,32,64 --repetitions 5 --out results/sweep",
    "date": "2024-06-01T10:15:00Z",
    "topology": "override: 2 nodes x 2 clusters x 10 cpus (FIBERSYNC_TOPOLOGY)",
    "calibration": {"ticks_per_ns": 2.1, "source": "CLOCK_MONOTONIC_RAW", "invariant_tsc": True},
}


def noise(scale: float = 0.04) -> float:
    return float(rng.lognormal(0.0, scale))


def r(x: float, digits: int = 4) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def mutex_run(scenario, runtime, mutex, lts, rep, peak, knee, duration_ms=1000.0):
    """One run of a mutex scenario; returns a dict of the CSV columns (None = empty)."""
    carriers = lts if runtime == "os_threads" else CARRIERS
    scale = {"boost_fiber": 1.0, "native": 1.12, "os_threads": 0.7}[runtime]
    shape = lts / (lts + knee) * (1 + knee)  # rises, then saturates
    factor = {
        "ttas": 1.0 / (1 + 0.035 * lts),
        "mcs": 0.95,
        "numa_mcs": 0.97 + 0.004 * min(lts, 32),
        "adaptive": 1.0 + 0.002 * min(lts, 32),
        "library": 0.8 if runtime != "os_threads" else 0.92,
    }[mutex]
    if runtime == "os_threads" and lts > CARRIERS and mutex in ("ttas", "mcs"):
        factor *= 0.55  # spinning OS threads oversubscribe the cores
    tp = peak * scale * factor * shape * noise()
    acq = int(tp * duration_ms)
    fifo = mutex in ("mcs", "numa_mcs", "adaptive")
    jain = 1.0 if lts == 1 else min(1.0, (0.995 if fifo else 0.9 - 0.25 * (lts / 64)) * noise(0.01))
    bypass_p99 = 0.0 if lts == 1 else (lts - 1) * (1.0 if fifo else 4.5) * noise(0.08)
    same_node = (
        1.0
        if lts == 1
        else min(1.0, (0.92 if mutex in ("numa_mcs", "adaptive") else 0.52) * noise(0.03))
    )
    lat50 = 1e6 / max(tp, 1e-9) * min(lts, 8) / 8 * 0.3 + 40
    cpu_util = min(carriers, lts) * (0.98 if mutex != "library" else 0.7)
    bound = None
    if scenario == "high-contention":
        bound = 1e6 / 150.0  # one 150 ns critical section at a time
    return {
        "scenario": scenario,
        "runtime": runtime,
        "mutex": mutex,
        "lts": lts,
        "carriers": carriers,
        "pinning": "compact",
        "topology": "2x2x10",
        "repetition": rep,
        "duration_ms": r(duration_ms * noise(0.002), 6),
        "acquisitions": acq,
        "throughput_per_ms": r(tp),
        "jain_index": r(jain),
        "bypass_mean": r(bypass_p99 / 2.3),
        "bypass_p99": r(bypass_p99),
        "bypass_max": r(bypass_p99 * 1.7),
        "latency_p50_ns": r(lat50),
        "latency_p90_ns": r(lat50 * 2.2),
        "latency_p99_ns": r(lat50 * 6.5),
        "latency_samples": min(acq, 100000),
        "latency_migrated": int(min(acq, 100000) * 0.01 * (runtime != "os_threads")),
        "yields_per_acq": r(0.0 if lts == 1 else 0.3 * math.log2(lts) * noise()),
        "suspends_per_acq": r(
            0.0 if (lts == 1 or mutex == "ttas") else 0.05 * math.log2(lts) * noise()
        ),
        "migrations_per_acq": r(0.0 if runtime == "os_threads" else 0.02 * noise()),
        "same_node_handover": r(same_node),
        "same_cluster_handover": r(same_node * 0.6),
        "remote_handovers_per_1000": r((1 - same_node) * 1000),
        "cpu_time_ms": r(duration_ms * cpu_util),
        "cpu_utilization": r(cpu_util / carriers),
        "bound_per_ms": r(bound) if bound else None,
        "bound_fraction": r(tp / bound) if bound else None,
    }


def sweep_runs():
    runs = []
    plan = [
        ("paper-coop", ["os_threads", "boost_fiber", "native"], 45.0, 6.0),
        ("high-contention", ["os_threads", "boost_fiber"], 5200.0, 1.5),
    ]
    for scenario, runtimes, peak, knee in plan:
        for runtime in runtimes:
            for mutex in ["ttas", "mcs", "numa_mcs", "adaptive", "library"]:
                for lts in LTS:
                    for rep in range(REPS):
                        run = mutex_run(scenario, runtime, mutex, lts, rep, peak / (1 + knee), knee)
                        run["per_lt_acquisitions"] = per_lt(
                            run["acquisitions"], lts, run["jain_index"]
                        )
                        runs.append(run)
    return runs


def per_lt(total: int, lts: int, jain: float) -> list[int]:
    spread = max(0.0, 1.0 - jain) * 2.0
    w = rng.lognormal(0.0, spread + 1e-3, size=lts)
    counts = np.floor(w / w.sum() * total).astype(int)
    counts[0] += total - counts.sum()
    return [int(c) for c in counts]


def poisson_runs():
    """poisson-hold (fixed rate, hold 0..100 %) and poisson-rate (fixed hold, rate sweep)."""
    runs = []

    def speedup(n, h, rate):
        if n == 1:
            return 1.0
        s = n / (1 + (n - 1) * h**1.3)
        s *= 1 - 0.15 * h  # lock hand-over costs more as the lock gets busy
        s /= 1 + rate * n * 2e-4  # lock overhead at high rates
        return s

    def add(scenario, runtime, mutex, lts, rep, hold, rate):
        penalty = {"mcs": 1.0, "ttas": 0.93 if lts > 1 else 1.0, "library": 0.97}[mutex]
        t1 = rate * (1.0 if mutex != "ttas" else 1.01)
        tp = t1 * speedup(lts, hold, rate) * penalty * noise(0.03)
        run = {c: None for c in CPP_COLUMNS}
        run.update(
            {
                "scenario": scenario,
                "runtime": runtime,
                "mutex": mutex,
                "lts": lts,
                "carriers": lts,
                "pinning": "scatter",
                "topology": "2x2x10",
                "repetition": rep,
                "duration_ms": 500.0,
                "acquisitions": int(tp * 500),
                "throughput_per_ms": r(tp),
                "jain_index": r(min(1.0, 0.99 * noise(0.005))),
                "hold_fraction": hold,
                "lock_rate_per_ms": rate,
                "cpu_utilization": r(min(1.0, 0.6 + 0.4 * hold)),
            }
        )
        return run, t1

    for mutex in ["ttas", "mcs", "library"]:
        for hold in [round(0.1 * i, 1) for i in range(11)]:
            base = None
            for lts in [1, 2, 4]:
                for rep in range(REPS):
                    run, _ = add("poisson-hold", "os_threads", mutex, lts, rep, hold, 15.0)
                    runs.append(run)
            ones = [
                x["throughput_per_ms"]
                for x in runs
                if x["scenario"] == "poisson-hold"
                and x["mutex"] == mutex
                and x["hold_fraction"] == hold
                and x["lts"] == 1
            ]
            base = float(np.median(ones))
            for x in runs:
                if (
                    x["scenario"] == "poisson-hold"
                    and x["mutex"] == mutex
                    and x["hold_fraction"] == hold
                ):
                    x["speedup_vs_1"] = r(x["throughput_per_ms"] / base)
        for rate in [1.0, 10.0, 100.0, 1000.0, 10000.0]:
            for lts in [1, 2, 4]:
                for rep in range(REPS):
                    run, _ = add("poisson-rate", "os_threads", mutex, lts, rep, 0.3, rate)
                    runs.append(run)  # speedup_vs_1 left empty: the report derives it
    return runs


def gauss_runs():
    runs = []
    for arch in ["A0", "A1", "A2"]:
        for dist in ["block", "cyclic"]:
            for threads in [32, 128, 512, 2048, 7936]:
                for rep in range(REPS):
                    x = math.log2(threads / 32) / math.log2(7936 / 32)  # 0..1
                    fwd0 = 900.0 * (1 + 0.8 * x) * (1.05 if dist == "cyclic" else 1.0)
                    back0 = 300.0 * (1 + 3.0 * x)
                    fwd_gain = {"A0": 1.0, "A1": 1.05 + 0.1 * x, "A2": 1.2 + 0.9 * x}[arch]
                    back_gain = {"A0": 1.0, "A1": 1.05 + 0.2 * x, "A2": 1.3 + 2.83 * x}[arch]
                    fwd = fwd0 / fwd_gain * noise(0.03)
                    back = back0 / back_gain * noise(0.03)
                    run = {c: None for c in CPP_COLUMNS}
                    run.update(
                        {
                            "scenario": "gauss",
                            "runtime": "native",
                            "lts": threads,
                            "carriers": CARRIERS,
                            "pinning": "compact",
                            "repetition": rep,
                            "arch": arch,
                            "distribution": dist,
                            "matrix_n": 2048,
                            "forward_ms": r(fwd),
                            "back_ms": r(back),
                            "total_ms": r(fwd + back),
                            "residual": r(1e-12 * noise(0.5)),
                            "duration_ms": r(fwd + back),
                            "cpu_time_ms": r((fwd + back) * CARRIERS * 0.9),
                            "cpu_utilization": 0.9,
                        }
                    )
                    runs.append(run)
    return runs


def java_rows():
    rows = []
    benches = [
        ("high-contention", "thrpt", "ops/ms", 9000.0),
        ("low-contention", "thrpt", "ops/ms", 600.0),
        ("text-stats", "avgt", "ms/op", 40.0),
    ]
    for bench, mode, unit, base in benches:
        for lock in [
            "NumaMcsLock",
            "McsLock",
            "TtasLock",
            "ReentrantLockUnfair",
            "ReentrantLockFair",
            "synchronized",
        ]:
            for threads in LTS:
                f = {
                    "NumaMcsLock": 1.2,
                    "McsLock": 1.08,
                    "TtasLock": 1.0 / (1 + 0.03 * threads),
                    "ReentrantLockUnfair": 1.0,
                    "ReentrantLockFair": 0.35,
                    "synchronized": 0.8,
                }[lock]
                if threads == 1:
                    f = 1.0 + (f - 1.0) * 0.1
                if bench == "low-contention":
                    score = base * min(threads, 8) * (0.9 + 0.1 * f) * noise(0.03)
                elif mode == "thrpt":
                    score = base * f / (1 + 0.05 * math.log2(threads)) * noise(0.03)
                else:
                    score = base / (min(threads, 8) ** 0.7) / f * noise(0.03)
                rows.append(
                    {
                        "source": "java",
                        "bench": bench,
                        "lock": lock,
                        "threads": threads,
                        "carriers": 8,
                        "score": r(score),
                        "score_error": r(score * 0.025 * noise(0.3)),
                        "unit": unit,
                        "forks": 3,
                        "median_over_forks": r(score * noise(0.01)),
                        "mode": mode,
                    }
                )
    return rows


def write_csv(path: Path, columns, rows):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if row.get(c) is None else row[c] for c in columns])


def write_json(path: Path, context, scenario, runs):
    doc = {
        "schema_version": 1,
        "context": context,
        "scenario": scenario,
        "runs": [
            {
                c: run.get(c)
                for c in [*CPP_COLUMNS, "per_lt_acquisitions"]
                if c in run or c in CPP_COLUMNS
            }
            for run in runs
        ],
    }
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")


def trace_doc():
    """Two carriers, four LTs, three migrations (flow pairs)."""
    ev = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": 1,
            "args": {"name": "fibersync-bench boost_fiber/mcs"},
        },
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "carrier 0"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "carrier 1"}},
    ]
    t = 0
    flow = 0
    for step in range(6):
        for tid in (1, 2):
            lt = (step + tid) % 4
            ev.append(
                {
                    "ph": "X",
                    "name": f"LT {lt}",
                    "cat": "run",
                    "ts": t,
                    "dur": 900,
                    "pid": 1,
                    "tid": tid,
                    "args": {"lt": lt},
                }
            )
        if step % 2 == 1 and flow < 3:
            ev.append(
                {
                    "ph": "s",
                    "name": "migrate",
                    "cat": "migration",
                    "id": flow,
                    "ts": t + 900,
                    "pid": 1,
                    "tid": 1,
                }
            )
            ev.append(
                {
                    "ph": "f",
                    "name": "migrate",
                    "cat": "migration",
                    "id": flow,
                    "ts": t + 1000,
                    "pid": 1,
                    "tid": 2,
                    "bp": "e",
                }
            )
            flow += 1
        ev.append({"ph": "i", "name": "lock handover", "ts": t + 450, "pid": 1, "tid": 1, "s": "t"})
        t += 1000
    return {
        "traceEvents": ev,
        "displayTimeUnit": "ns",
        "otherData": {"scenario": "hot-handover", "runtime": "boost_fiber", "mutex": "mcs"},
    }


def known_rows():
    """Hand-picked values for the summary-table test (see test_tables.py)."""
    rows = []
    spec = [
        (
            "os_threads",
            4,
            {
                "library": [100, 102, 98, 101, 99],
                "mcs": [150, 149, 151, 160, 140],
                "ttas": [120, 130, 110, 125, 115],
            },
        ),
        ("os_threads", 8, {"library": [80] * 5, "ttas": [90, 91, 89, 90, 90], "mcs": [70] * 5}),
        (
            "boost_fiber",
            4,
            {"library": [200, 201, 199, 200, 200], "mcs": [180, 181, 179, 180, 180]},
        ),
    ]
    bound = {("os_threads", 4, "mcs"): [0.5, 0.6, 0.7, 0.6, 0.6]}
    for runtime, lts, by_mutex in spec:
        for mutex, values in by_mutex.items():
            for rep, v in enumerate(values):
                bf = bound.get((runtime, lts, mutex))
                rows.append(
                    {
                        "note": "hand-made",
                        "mutex": mutex,
                        "runtime": runtime,
                        "lts": lts,
                        "scenario": "high-contention",
                        "repetition": rep,
                        "throughput_per_ms": v,
                        "bound_fraction": bf[rep] if bf else None,
                        "jain_index": 0.99,
                    }
                )
    return rows


def main():
    RESULTS.mkdir(parents=True, exist_ok=True)
    for old in RESULTS.iterdir():
        old.unlink()
    sweep = sweep_runs()
    # Two harness invocations: the paper's scenario kept as JSON (with context),
    # the contention sweep as CSV only.
    write_json(
        RESULTS / "paper.json",
        CONTEXT,
        {
            "name": "paper-coop",
            "preset": "paper.json",
            "warmup_fraction": 0.33,
            "duration_ms": 1000,
            "repetitions": REPS,
        },
        [x for x in sweep if x["scenario"] == "paper-coop"],
    )
    write_csv(
        RESULTS / "contention.csv", CPP_COLUMNS, [x for x in sweep if x["scenario"] != "paper-coop"]
    )
    write_csv(RESULTS / "poisson.csv", CPP_COLUMNS, poisson_runs())
    gctx = dict(
        CONTEXT,
        command="fibersync-gauss --arch A0,A1,A2 --distribution block,cyclic "
        "--threads 32,128,512,2048,7936 --n 2048 --repetitions 5",
        date="2024-06-01T12:40:00Z",
    )
    write_json(RESULTS / "gauss.json", gctx, {"name": "gauss", "matrix_n": 2048}, gauss_runs())
    write_csv(
        RESULTS / "java-jmh.csv",
        "source,bench,lock,threads,carriers,score,score_error,unit,forks,"
        "median_over_forks,mode".split(","),
        java_rows(),
    )
    known = known_rows()
    write_csv(
        HERE / "known.csv",
        [
            "note",
            "mutex",
            "runtime",
            "lts",
            "scenario",
            "repetition",
            "throughput_per_ms",
            "bound_fraction",
            "jain_index",
        ],
        known,
    )
    (HERE / "trace_valid.json").write_text(
        json.dumps(trace_doc(), indent=1) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
