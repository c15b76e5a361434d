"""Baseline vs contender: per-configuration ratios, Mann-Whitney U, verdicts, geomean.

For every configuration present in both result sets (C++: all configuration
columns; Java: bench, lock, threads, carriers, mode, unit) the metric is

* ``throughput_per_ms`` for mutex scenarios (higher is better),
* ``total_ms`` for Gaussian elimination (lower is better),
* ``score`` for Java (direction from the unit: ``ops/ms`` higher, ``ms/op`` lower).

``ratio`` is median(contender) / median(baseline) of that metric. The
verdict is ``faster`` or ``slower`` (for the contender) when the two-sided
Mann-Whitney U p-value is below :data:`ALPHA` and the medians differ by more
than :data:`MIN_CHANGE`, and ``inconclusive`` otherwise, always so with fewer
than :data:`MIN_REPS` repetitions on either side. The overall geomean is
taken over speed-ups (``ratio`` for higher-is-better metrics, ``1/ratio``
for times), so above 1 means the contender is faster overall.

Note that with 3 repetitions each the exact U test cannot go below
p = 0.1; 4 or more per side are needed for a ``faster``/``slower`` verdict.
"""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy.stats import mannwhitneyu

from . import stats
from .load import CONFIG_KEYS, JAVA_CONFIG_KEYS, Results, is_gauss
from .tables import lower_is_better

ALPHA = 0.05
MIN_CHANGE = 0.02
MIN_REPS = 3

FASTER, SLOWER, INCONCLUSIVE = "faster", "slower", "inconclusive"


@dataclass
class ComparisonRow:
    name: str
    source: str  # "cpp" or "java"
    config: dict[str, Any]
    metric: str
    unit: str
    higher_is_better: bool
    baseline: list[float]
    contender: list[float]
    median_baseline: float
    median_contender: float
    ratio: float  # median_contender / median_baseline
    p_value: float | None
    verdict: str

    @property
    def speedup(self) -> float:
        """Above 1 = contender better, whatever the metric's direction."""
        if not (self.ratio > 0 and math.isfinite(self.ratio)):
            return math.nan
        return self.ratio if self.higher_is_better else 1.0 / self.ratio


@dataclass
class Comparison:
    baseline_label: str
    contender_label: str
    rows: list[ComparisonRow] = field(default_factory=list)
    only_baseline: int = 0
    only_contender: int = 0
    fixed: dict[str, Any] = field(default_factory=dict)  # C++ settings shared by every row

    @property
    def geomean(self) -> float:
        return stats.geomean(r.speedup for r in self.rows)

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.rows if r.verdict == verdict)


# --------------------------------------------------------------------------


def _samples(results: Results) -> dict[tuple, tuple[str, dict, str, str, bool, list[float]]]:
    """config id -> (source, config, metric, unit, higher_is_better, values)."""
    out: dict[tuple, Any] = {}
    for run in results.runs:
        gauss = is_gauss(run)
        metric = "total_ms" if gauss else "throughput_per_ms"
        value = run.get(metric)
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
        ):
            continue
        config = {k: run.get(k) for k in CONFIG_KEYS if run.get(k) is not None}
        ident = ("cpp", metric) + tuple(run.get(k) for k in CONFIG_KEYS)
        unit = "ms" if gauss else ("lines/ms" if run.get("scenario") == "text-stats" else "acq/ms")
        entry = out.setdefault(ident, ("cpp", config, metric, unit, not gauss, []))
        entry[5].append(float(value))
    for row in results.java:
        value = row.get("score")
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
        ):
            continue
        config = {k: row.get(k) for k in JAVA_CONFIG_KEYS if row.get(k) is not None}
        ident = ("java", "score") + tuple(row.get(k) for k in JAVA_CONFIG_KEYS)
        unit = row.get("unit") or ""
        entry = out.setdefault(
            ident, ("java", config, "score", unit, not lower_is_better(unit), [])
        )
        entry[5].append(float(value))
    return out


_NAME_HEAD = ("scenario", "runtime", "mutex", "arch", "distribution")


def benchmark_name(source: str, config: dict[str, Any], omit: frozenset[str] = frozenset()) -> str:
    """A google/benchmark-like name: ``high-contention/os_threads/mcs/lts:8``.

    Keys in ``omit`` (settings shared by every compared configuration) are left out.
    """
    if source == "java":
        head = ["java", config.get("bench"), config.get("lock")]
        rest = [k for k in JAVA_CONFIG_KEYS if k not in ("bench", "lock", "unit")]
    else:
        head = [config.get(k) for k in _NAME_HEAD]
        rest = [k for k in CONFIG_KEYS if k not in _NAME_HEAD and k not in omit]
    parts = [str(v) for v in head if v is not None]
    parts += [f"{k}:{stats.fmt_value(config[k])}" for k in rest if config.get(k) is not None]
    return "/".join(parts)


def p_value(baseline: Sequence[float], contender: Sequence[float]) -> float | None:
    """Two-sided Mann-Whitney U p-value.

    1.0 when every value is the same; None when a side has no values.
    """
    if not len(baseline) or not len(contender):
        return None
    if len(set(baseline) | set(contender)) == 1:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mannwhitneyu(contender, baseline, alternative="two-sided")
    p = float(result.pvalue)
    return p if math.isfinite(p) else None


def verdict(
    ratio: float, p: float | None, n_baseline: int, n_contender: int, higher_is_better: bool = True
) -> str:
    if n_baseline < MIN_REPS or n_contender < MIN_REPS or p is None or not math.isfinite(ratio):
        return INCONCLUSIVE
    if p >= ALPHA or abs(ratio - 1.0) <= MIN_CHANGE:
        return INCONCLUSIVE
    better = ratio > 1.0 if higher_is_better else ratio < 1.0
    return FASTER if better else SLOWER


def compare(
    baseline: Results,
    contender: Results,
    baseline_label: str = "baseline",
    contender_label: str = "contender",
) -> Comparison:
    a, b = _samples(baseline), _samples(contender)
    out = Comparison(baseline_label, contender_label)
    out.only_baseline = sum(1 for k in a if k not in b)
    out.only_contender = sum(1 for k in b if k not in a)
    for ident, (source, config, metric, unit, higher, va) in a.items():
        if ident not in b:
            continue
        vb = b[ident][5]
        ma, mb = float(np.median(va)), float(np.median(vb))
        ratio = mb / ma if ma != 0 else (math.nan if mb != 0 else 1.0)
        p = p_value(va, vb)
        out.rows.append(
            ComparisonRow(
                name=benchmark_name(source, config),
                source=source,
                config=config,
                metric=metric,
                unit=unit,
                higher_is_better=higher,
                baseline=va,
                contender=vb,
                median_baseline=ma,
                median_contender=mb,
                ratio=ratio,
                p_value=p,
                verdict=verdict(ratio, p, len(va), len(vb), higher),
            )
        )
    out.rows.sort(key=_row_key)
    # Settings every C++ configuration shares (pinning, topology, ...) are
    # printed once instead of in every name.
    cpp = [r for r in out.rows if r.source == "cpp"]
    if len(cpp) > 1:
        for k in CONFIG_KEYS:
            if k in _NAME_HEAD or k == "lts":
                continue
            vals = {r.config.get(k) for r in cpp}
            if len(vals) == 1 and None not in vals:
                out.fixed[k] = vals.pop()
        for r in cpp:
            r.name = benchmark_name("cpp", r.config, frozenset(out.fixed))
    return out


def _row_key(r: ComparisonRow) -> tuple:
    c = r.config
    if r.source == "java":
        return (
            1,
            str(c.get("bench")),
            stats.order_key(stats.JAVA_LOCK_ORDER)(c.get("lock")),
            stats.value_key(c.get("threads")),
            r.name,
        )
    return (
        0,
        stats.order_key(stats.SCENARIO_ORDER)(c.get("scenario")),
        stats.order_key(stats.RUNTIME_ORDER)(c.get("runtime")),
        stats.order_key(stats.MUTEX_ORDER)(c.get("mutex")),
        tuple(stats.value_key(c.get(k)) for k in CONFIG_KEYS[3:]),
    )


# --------------------------------------------------------------------------
# Output


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "—"
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def format_table(cmp: Comparison) -> str:
    """An aligned text table in the manner of google/benchmark's compare.py."""
    header = ["Benchmark", "Metric", "Reps", "Baseline", "Contender", "Ratio", "p-value", "Verdict"]
    body = [
        [
            r.name,
            r.unit,
            f"{len(r.baseline)}/{len(r.contender)}",
            stats.fmt_num(r.median_baseline, 4),
            stats.fmt_num(r.median_contender, 4),
            f"{r.ratio:.3f}" if math.isfinite(r.ratio) else "—",
            _fmt_p(r.p_value),
            r.verdict,
        ]
        for r in cmp.rows
    ]
    geo = cmp.geomean
    footer = [
        "OVERALL_GEOMEAN",
        "speed-up",
        "",
        "",
        "",
        f"{geo:.3f}" if math.isfinite(geo) else "—",
        "",
        "",
    ]
    widths = [max(len(row[i]) for row in [header, footer, *body]) for i in range(len(header))]
    right = [False, False, True, True, True, True, True, False]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)
        ).rstrip()

    rule = "-" * len(line(header))
    out = [
        f"Comparing {cmp.baseline_label} (baseline) vs {cmp.contender_label} (contender)",
        line(header),
        rule,
    ]
    out += [line(row) for row in body]
    out += [rule, line(footer), ""]
    out.append(
        f"{len(cmp.rows)} configuration(s) in both: {cmp.count(FASTER)} faster, "
        f"{cmp.count(SLOWER)} slower, {cmp.count(INCONCLUSIVE)} inconclusive "
        f"(faster/slower: Mann-Whitney U p < {ALPHA} and change > {MIN_CHANGE:.0%}, "
        f">= {MIN_REPS} repetitions each)."
    )
    if cmp.fixed:
        out.append(
            "Same in every C++ configuration: "
            + ", ".join(f"{k}={stats.fmt_value(v)}" for k, v in cmp.fixed.items())
            + "."
        )
    if cmp.only_baseline or cmp.only_contender:
        out.append(
            f"Not compared: {cmp.only_baseline} only in the baseline, "
            f"{cmp.only_contender} only in the contender."
        )
    out.append(
        "Ratio = median(contender) / median(baseline); the geomean is of speed-ups "
        "(ratio for throughput, 1/ratio for times), above 1 = contender faster."
    )
    return "\n".join(out) + "\n"


CSV_COLUMNS = [
    "benchmark",
    "source",
    *CONFIG_KEYS,
    "bench",
    "lock",
    "threads",
    "mode",
    "unit",
    "metric",
    "higher_is_better",
    "n_baseline",
    "n_contender",
    "median_baseline",
    "median_contender",
    "ratio",
    "p_value",
    "verdict",
]


def to_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in cmp.rows:
        values = dict(r.config)
        values.update(
            benchmark=r.name,
            source=r.source,
            metric=r.metric,
            unit=r.unit,
            higher_is_better=int(r.higher_is_better),
            n_baseline=len(r.baseline),
            n_contender=len(r.contender),
            median_baseline=repr(r.median_baseline),
            median_contender=repr(r.median_contender),
            ratio=repr(r.ratio),
            p_value="" if r.p_value is None else repr(r.p_value),
            verdict=r.verdict,
        )
        w.writerow(["" if values.get(c) is None else values[c] for c in CSV_COLUMNS])
    geo = cmp.geomean
    w.writerow(
        ["OVERALL_GEOMEAN"]
        + [""] * (len(CSV_COLUMNS) - 4)
        + ["" if not math.isfinite(geo) else repr(geo), "", ""]
    )
    return buf.getvalue()


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
