"""Grouping, medians and orderings shared by the tables, plots and comparisons."""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence

import numpy as np

#: Display order of known names; unknown ones follow in alphabetical order.
MUTEX_ORDER = ("ttas", "ticket", "mcs", "clh", "hmcs", "cna", "numa_mcs", "adaptive", "library")
RUNTIME_ORDER = ("os_threads", "boost_fiber", "native", "argobots")
SCENARIO_ORDER = (
    "paper-coop",
    "hot-handover",
    "high-contention",
    "low-contention",
    "poisson-hold",
    "poisson-rate",
    "text-stats",
    "default",
    "gauss",
)
JAVA_LOCK_ORDER = (
    "NumaMcsLock",
    "McsLock",
    "TtasLock",
    "ReentrantLockUnfair",
    "ReentrantLockFair",
    "synchronized",
)
ARCH_ORDER = ("A0", "A1", "A2")


def order_key(order: Sequence[str]) -> Callable[[Any], tuple]:
    """Sort key putting names of ``order`` first (in that order), then the rest."""
    index = {name: i for i, name in enumerate(order)}

    def key(value: Any) -> tuple:
        if value is None:
            return (2, 0, "")
        if value in index:
            return (0, index[value], "")
        return (1, 0, str(value))

    return key


def value_key(value: Any) -> tuple:
    """Sort key for mixed config values: None last, numbers numerically."""
    if value is None:
        return (2, 0.0, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def group_by(rows: Iterable[dict], keys: Sequence[str]) -> dict[tuple, list[dict]]:
    """Rows grouped by the values of ``keys`` (a missing key groups as None)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(k) for k in keys), []).append(row)
    return groups


def values(rows: Iterable[dict], metric: str) -> np.ndarray:
    """Finite numeric values of ``metric`` over ``rows``."""
    out = []
    for row in rows:
        v = row.get(metric)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
    return np.asarray(out, dtype=float)


def has_metric(rows: Iterable[dict], metric: str) -> bool:
    return any(
        isinstance(r.get(metric), (int, float)) and not isinstance(r.get(metric), bool)
        for r in rows
    )


def median(xs: np.ndarray) -> float:
    return float(np.median(xs)) if len(xs) else math.nan


def iqr(xs: np.ndarray) -> tuple[float, float]:
    """25th and 75th percentiles (linear interpolation)."""
    if not len(xs):
        return (math.nan, math.nan)
    q25, q75 = np.percentile(xs, [25, 75])
    return float(q25), float(q75)


def present_keys(rows: Sequence[dict], keys: Sequence[str]) -> list[str]:
    """Those of ``keys`` that have a value in at least one row."""
    return [k for k in keys if any(r.get(k) is not None for r in rows)]


def varying_keys(
    rows: Sequence[dict], candidates: Sequence[str], within: Sequence[str]
) -> list[str]:
    """Candidate keys that take more than one value inside a group of ``within``.

    A key that only changes together with the ``within`` keys (for example
    ``carriers`` equal to ``lts`` for OS threads) does not split the data and
    is not returned.
    """
    out = []
    groups = group_by(rows, within)
    for k in candidates:
        if k in within:
            continue
        if any(len({r.get(k) for r in g}) > 1 for g in groups.values()):
            out.append(k)
    return out


def geomean(xs: Iterable[float]) -> float:
    arr = np.asarray([x for x in xs if x > 0 and math.isfinite(x)], dtype=float)
    if not len(arr):
        return math.nan
    return float(np.exp(np.mean(np.log(arr))))


def fmt_num(x: float | None, digits: int = 3) -> str:
    """Compact human formatting: 3 significant digits, thousands separated."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    ax = abs(x)
    if ax >= 10**digits:
        return f"{x:,.0f}"
    if ax == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(ax))))
    return f"{x:.{decimals}f}"


def fmt_value(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)
