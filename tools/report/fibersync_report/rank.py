"""``fibersync-report rank``: how far one mutex is from the best, everywhere.

For every configuration (a C++ harness configuration without the mutex), the
median throughput of the chosen mutex is divided by the best median among the
*other* fibersync mutexes of that configuration, and by the median of the
runtime's own mutex (``library``) where the runtime has one. This is the
check behind ``adaptive_mutex``'s promise (docs/ADAPTIVE.md): within 10% of the
best fibersync mutex (ratio >= 0.9) and at least the library (ratio >= 1.0)
in every configuration. Medians over repetitions; a configuration without the
chosen mutex or without any other fibersync mutex is skipped. Mutexes named in
``ignore`` (variants of the chosen one in an A/B sweep, say) are left out.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from .load import BASELINE_MUTEX, CONFIG_KEYS, Results

#: The configuration of a run without its mutex.
POINT_KEYS: tuple[str, ...] = tuple(k for k in CONFIG_KEYS if k != "mutex")


@dataclass
class RankRow:
    point: dict[str, Any]
    subject: float  # median throughput of the chosen mutex
    best_other: str
    best_other_value: float
    library: float | None

    @property
    def vs_best(self) -> float:
        return self.subject / self.best_other_value if self.best_other_value > 0 else float("inf")

    @property
    def vs_library(self) -> float | None:
        if self.library is None or self.library <= 0:
            return None
        return self.subject / self.library


def rank(results: Results, subject: str, ignore: Sequence[str] = ()) -> list[RankRow]:
    """One row per configuration that has `subject` and another fibersync mutex
    (not in `ignore`)."""
    # Never the best other: the subject, the library, and the ignored (a bare string is one name).
    not_others = {subject, BASELINE_MUTEX, *((ignore,) if isinstance(ignore, str) else ignore)}
    samples: dict[tuple, dict[str, list[float]]] = {}
    points: dict[tuple, dict[str, Any]] = {}
    for run in results.runs:
        value = run.get("throughput_per_ms")
        if run.get("mutex") is None or not isinstance(value, (int, float)):
            continue
        key = tuple(run.get(k) for k in POINT_KEYS)
        points.setdefault(key, {k: run.get(k) for k in POINT_KEYS})
        samples.setdefault(key, {}).setdefault(run["mutex"], []).append(float(value))
    rows = []
    for key, by_mutex in samples.items():
        if subject not in by_mutex:
            continue
        others = {m: statistics.median(v) for m, v in by_mutex.items() if m not in not_others}
        if not others:
            continue
        best = max(others, key=others.get)
        library = statistics.median(by_mutex[BASELINE_MUTEX]) if BASELINE_MUTEX in by_mutex else None
        rows.append(RankRow(points[key], statistics.median(by_mutex[subject]), best, others[best], library))
    return rows


def _describe(point: dict[str, Any]) -> str:
    parts = [str(point.get("scenario")), str(point.get("runtime")), f"lts={point.get('lts')}"]
    for k in ("carriers", "topology", "pinning", "hold_fraction", "lock_rate_per_ms"):
        v = point.get(k)
        if v not in (None, "", "machine", "none"):
            parts.append(f"{k}={v}")
    return " ".join(parts)


def format_rank(
    rows: Sequence[RankRow], subject: str, worst: int = 15, best_floor: float = 0.9, ignored: Sequence[str] = ()
) -> str:
    """Markdown: totals, then the `worst` configurations by ratio to the best
    (and the mutexes left out of the comparison, if any)."""
    if not rows:
        return f"no configuration has {subject} and another fibersync mutex\n"
    within = sum(r.vs_best >= best_floor for r in rows)
    lib_rows = [r for r in rows if r.vs_library is not None]
    at_least_lib = sum(r.vs_library >= 1.0 for r in lib_rows)
    ratios = sorted(r.vs_best for r in rows)
    lines = [
        f"{subject}: {len(rows)} configurations; within {1 - best_floor:.0%} of the best other fibersync mutex "
        f"in {within} ({within / len(rows):.0%}); median ratio to best {statistics.median(ratios):.3f}, "
        f"worst {ratios[0]:.3f}",
        f"{subject} >= library in {at_least_lib} of {len(lib_rows)} configurations with a library mutex",
    ]
    if ignored:
        lines.append(f"left out of the comparison: {', '.join(ignored)}")
    lines += [
        "",
        f"| configuration | {subject} (acq/ms) | best other | its acq/ms | ratio to best | ratio to library |",
        "|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r.vs_best)[:worst]:
        lib = "n/a" if r.vs_library is None else f"{r.vs_library:.2f}"
        lines.append(
            f"| {_describe(r.point)} | {r.subject:.3g} | {r.best_other} | {r.best_other_value:.3g} | "
            f"{r.vs_best:.2f} | {lib} |"
        )
    lib_worst = sorted(lib_rows, key=lambda r: r.vs_library)[:5]
    if lib_worst and lib_worst[0].vs_library < 1.0:
        lines += ["", f"Worst ratios to library:", ""]
        lines += [f"- {_describe(r.point)}: {r.vs_library:.2f}" for r in lib_worst if r.vs_library < 1.0]
    return "\n".join(lines) + "\n"



def write_rank_figure(rows: Sequence[RankRow], subject: str, path) -> None:
    """Draw :func:`plot.rank_figure` into ``path`` (.png or .svg), all or
    nothing: it is written to a hidden file next to it and renamed over it."""
    import os
    from pathlib import Path

    from . import plot

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: the figure must be a .png or .svg file")
    if not path.parent.is_dir():
        raise ValueError(f"{path.parent}: no such directory")
    staged = path.with_name(f".{path.name}.part")
    try:
        plot.save_figure(plot.rank_figure(rows, subject), staged, fmt)
        os.replace(staged, path)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise ValueError(f"{path}: cannot write: {exc.strerror or exc}") from None
