"""Summary tables: computed as data first, rendered by :mod:`html` (or a test).

* :func:`best_mutex_summary` - per scenario and configuration (runtime, lts,
  and whatever else varies), the mutex with the highest median throughput,
  that median, its ratio to the runtime's own mutex (``library``) and the
  median fraction of the theoretical bound it reached;
* :func:`gauss_summary` - Gaussian elimination: median times per blocking
  architecture and the speed-ups A1/A0, A2/A0, A2/A1;
* :func:`java_summary` - Java: best lock per bench and thread count, and its
  speed-up over ``ReentrantLockUnfair``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import stats
from .load import BASELINE_MUTEX, CONFIG_KEYS, JAVA_BASELINES, is_gauss

THROUGHPUT = "throughput_per_ms"


@dataclass
class Table:
    """A rendered-ready table: header cells, body rows of text, a caption."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] = field(default_factory=list)


# --------------------------------------------------------------------------
# C++ mutex scenarios


@dataclass
class BestMutexRow:
    scenario: str
    config: dict[str, Any]  # every config key except scenario and mutex
    best_mutex: str
    best_median: float
    baseline_median: float | None  # median throughput of the ``library`` mutex
    ratio: float | None  # best_median / baseline_median
    bound_fraction: float | None  # median bound_fraction of the best mutex
    candidates: int  # how many mutexes were measured in this configuration


def mutex_runs(runs: Sequence[dict]) -> list[dict]:
    """Runs of mutex scenarios (everything but Gaussian elimination)."""
    return [r for r in runs if not is_gauss(r) and r.get("mutex") is not None]


def best_mutex_summary(runs: Sequence[dict]) -> list[BestMutexRow]:
    """Best mutex per configuration; see the module docstring."""
    runs = [r for r in mutex_runs(runs) if stats.has_metric([r], THROUGHPUT)]
    other = [k for k in CONFIG_KEYS if k not in ("scenario", "mutex")]
    out: list[BestMutexRow] = []
    for (scenario,), srows in stats.group_by(runs, ["scenario"]).items():
        keys = stats.present_keys(srows, other)
        for gkey, grows in stats.group_by(srows, keys).items():
            medians: dict[str, float] = {}
            by_mutex = stats.group_by(grows, ["mutex"])
            for (mutex,), mrows in by_mutex.items():
                medians[mutex] = stats.median(stats.values(mrows, THROUGHPUT))
            # Highest median wins; ties go to the mutex listed first.
            best = max(
                sorted(medians, key=stats.order_key(stats.MUTEX_ORDER)), key=lambda m: medians[m]
            )
            base = medians.get(BASELINE_MUTEX)
            bound = stats.values(by_mutex[(best,)], "bound_fraction")
            out.append(
                BestMutexRow(
                    scenario=scenario,
                    config=dict(zip(keys, gkey)),
                    best_mutex=best,
                    best_median=medians[best],
                    baseline_median=base,
                    ratio=(medians[best] / base) if base else None,
                    bound_fraction=stats.median(bound) if len(bound) else None,
                    candidates=len(medians),
                )
            )
    out.sort(key=_best_row_key)
    return out


def _best_row_key(row: BestMutexRow) -> tuple:
    return (
        stats.order_key(stats.SCENARIO_ORDER)(row.scenario),
        stats.order_key(stats.RUNTIME_ORDER)(row.config.get("runtime")),
        tuple(stats.value_key(v) for k, v in row.config.items() if k != "runtime"),
    )


def best_mutex_table(rows: Sequence[BestMutexRow], unit: str = "acq/ms") -> Table:
    """One scenario's rows as a table; config columns that never change go in the caption."""
    scenario = rows[0].scenario if rows else ""
    keys = [k for k in CONFIG_KEYS if any(k in r.config for r in rows)]
    shown = [k for k in keys if k in ("runtime", "lts") or len({r.config.get(k) for r in rows}) > 1]
    fixed = [k for k in keys if k not in shown]
    columns = [_KEY_LABELS.get(k, k) for k in shown] + [
        "best mutex",
        f"median throughput ({unit})",
        f"× {BASELINE_MUTEX}",
        "fraction of bound",
    ]
    body = []
    for r in rows:
        body.append(
            [stats.fmt_value(r.config.get(k)) for k in shown]
            + [
                r.best_mutex,
                stats.fmt_num(r.best_median),
                "—" if r.ratio is None else f"{r.ratio:.2f}",
                "—" if r.bound_fraction is None else f"{r.bound_fraction:.2f}",
            ]
        )
    caption = (
        "Best mutex by median throughput over repetitions; × library is its ratio to the "
        "runtime's own mutex."
    )
    if fixed:
        caption += (
            " Fixed: "
            + ", ".join(
                f"{_KEY_LABELS.get(k, k)} = {stats.fmt_value(rows[0].config.get(k))}" for k in fixed
            )
            + "."
        )
    return Table(
        title=f"{scenario}: best mutex per configuration",
        columns=columns,
        rows=body,
        caption=caption,
        numeric=[k not in ("runtime", "pinning", "topology") for k in shown]
        + [False, True, True, True],
    )


_KEY_LABELS = {
    "lts": "LTs",
    "carriers": "carriers",
    "hold_fraction": "hold fraction",
    "lock_rate_per_ms": "lock rate (/ms)",
    "matrix_n": "matrix n",
}


# --------------------------------------------------------------------------
# Gaussian elimination

GAUSS_PHASES = ("forward_ms", "back_ms", "total_ms")
GAUSS_PAIRS = (("A1", "A0"), ("A2", "A0"), ("A2", "A1"))


@dataclass
class GaussRow:
    config: dict[str, Any]  # matrix_n, distribution, lts (those present), ...
    times: dict[tuple[str, str], float]  # (arch, phase) -> median ms
    speedups: dict[tuple[str, str, str], float]  # (fast, slow, phase) -> time(slow)/time(fast)


def gauss_runs(runs: Sequence[dict]) -> list[dict]:
    return [r for r in runs if is_gauss(r)]


def gauss_summary(runs: Sequence[dict]) -> list[GaussRow]:
    """Median times per architecture and speed-ups, per (other config keys, lts)."""
    runs = gauss_runs(runs)
    keys = stats.present_keys(
        runs, [k for k in CONFIG_KEYS if k not in ("scenario", "mutex", "arch")]
    )
    out = []
    for gkey, grows in stats.group_by(runs, keys).items():
        times: dict[tuple[str, str], float] = {}
        for (arch,), arows in stats.group_by(grows, ["arch"]).items():
            for phase in GAUSS_PHASES:
                xs = stats.values(arows, phase)
                if len(xs):
                    times[(arch, phase)] = stats.median(xs)
        speedups = {}
        for fast, slow in GAUSS_PAIRS:
            for phase in GAUSS_PHASES:
                tf, ts = times.get((fast, phase)), times.get((slow, phase))
                if tf and ts is not None and tf > 0:
                    speedups[(fast, slow, phase)] = ts / tf
        out.append(GaussRow(config=dict(zip(keys, gkey)), times=times, speedups=speedups))
    out.sort(key=lambda r: tuple(stats.value_key(v) for v in r.config.values()))
    return out


def gauss_table(rows: Sequence[GaussRow]) -> Table:
    keys = [k for k in CONFIG_KEYS if any(k in r.config for r in rows)]
    columns = [_KEY_LABELS.get(k, k) if k != "lts" else "user threads" for k in keys]
    columns += [f"{a} total (ms)" for a in stats.ARCH_ORDER]
    pairs = [(f, s, p) for p in ("back_ms", "total_ms") for f, s in GAUSS_PAIRS]
    columns += [f"{p.removesuffix('_ms')} {f}/{s}" for f, s, p in pairs]
    body = []
    for r in rows:
        body.append(
            [stats.fmt_value(r.config.get(k)) for k in keys]
            + [stats.fmt_num(r.times.get((a, "total_ms"))) for a in stats.ARCH_ORDER]
            + [_fmt_ratio(r.speedups.get(p)) for p in pairs]
        )
    return Table(
        title="Gaussian elimination: median times and speed-ups",
        columns=columns,
        rows=body,
        caption="Speed-up X/Y = median time of Y / median time of X (above 1: X is faster).",
        numeric=[k != "distribution" for k in keys] + [True] * (len(columns) - len(keys)),
    )


def _fmt_ratio(x: float | None) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.2f}"


# --------------------------------------------------------------------------
# Java


def lower_is_better(unit: str | None) -> bool:
    """True for time-per-operation units (``ms/op``), False for throughput."""
    return bool(unit) and "/op" in unit and not unit.startswith("ops")


@dataclass
class JavaBestRow:
    bench: str
    mode: str | None
    unit: str | None
    threads: int
    best_lock: str
    best_score: float
    baseline_lock: str | None
    baseline_score: float | None
    speedup: float | None  # over the baseline, above 1 = the best lock is better


def java_summary(rows: Sequence[dict]) -> list[JavaBestRow]:
    rows = [r for r in rows if stats.has_metric([r], "score") and r.get("lock") is not None]
    out = []
    for (bench, mode, unit, threads), grows in stats.group_by(
        rows, ["bench", "mode", "unit", "threads"]
    ).items():
        scores = {
            lock: stats.median(stats.values(lrows, "score"))
            for (lock,), lrows in stats.group_by(grows, ["lock"]).items()
        }
        low = lower_is_better(unit)
        ordered = sorted(scores, key=stats.order_key(stats.JAVA_LOCK_ORDER))
        best = (min if low else max)(ordered, key=lambda k: scores[k])
        base = next((b for b in JAVA_BASELINES if b in scores), None)
        speedup = None
        if base is not None and scores[base] > 0 and scores[best] > 0:
            speedup = scores[base] / scores[best] if low else scores[best] / scores[base]
        out.append(
            JavaBestRow(
                bench,
                mode,
                unit,
                threads,
                best,
                scores[best],
                base,
                scores.get(base) if base else None,
                speedup,
            )
        )
    out.sort(key=lambda r: (str(r.bench), str(r.mode), str(r.unit), stats.value_key(r.threads)))
    return out


def java_table(rows: Sequence[JavaBestRow]) -> Table:
    body = [
        [
            r.bench,
            stats.fmt_value(r.threads),
            r.best_lock,
            f"{stats.fmt_num(r.best_score)} {r.unit or ''}".strip(),
            "—"
            if r.baseline_lock is None
            else f"{r.baseline_lock}: {stats.fmt_num(r.baseline_score)}",
            _fmt_ratio(r.speedup),
        ]
        for r in rows
    ]
    return Table(
        title="Java: best lock per bench and thread count",
        columns=["bench", "threads", "best lock", "score", "baseline", "speed-up"],
        rows=body,
        caption="Speed-up of the best lock over the first baseline present "
        f"({', '.join(JAVA_BASELINES)}); above 1 = better, whatever the unit.",
        numeric=[False, True, False, True, False, True],
    )
