"""``fibersync-report leaders``: which mutex to pick, per load and runtime.

``rank`` follows one mutex through every configuration; this table answers
the user's question the other way round. For every configuration (a C++
harness configuration without the mutex) with at least ``min_lts`` LTs,
each mutex's median throughput is divided by the best median of that
configuration, the runtime's own mutex (``library``) included. Configurations
are grouped by load: scenario, runtime, and the carriers, topology and
pinning where they are set, so a group spans the LT counts and the Poisson
rates and hold fractions of one preset. Per group every mutex gets two
numbers: the geometric mean of its ratios (how close it stays) and the
lowest one (how far it can fall). A mutex counts in a group only if it ran
in every configuration of it; elsewhere its cell is n/a, since a mean over
some LT counts would not compare with one over all. The leader is the
mutex with the highest mean. With one LT every lock runs its uncontended
path, and the differences are the machine's (docs/ADAPTIVE.md, "How close
it comes"), so by default those configurations are left out.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from .load import BASELINE_MUTEX, POINT_KEYS, Results, point_key

#: What separates one load from another; the rest of POINT_KEYS (LT counts,
#: Poisson parameters, ...) varies within a group.
GROUP_KEYS: tuple[str, ...] = ("scenario", "runtime", "carriers", "topology", "pinning")
#: Values of GROUP_KEYS that mean "not set": one setting, never named in a label.
_UNSET = (None, "", "machine", "none")


@dataclass
class Standing:
    """One mutex in one group: geometric mean and lowest of its ratios to the best."""

    mean: float
    lowest: float


@dataclass
class LoadGroup:
    label: dict[str, Any]  # GROUP_KEYS values of the group
    configurations: int
    standings: dict[str, Standing]  # only mutexes that ran in every configuration

    @property
    def leader(self) -> str:
        if not self.standings:
            return "n/a"
        # A tie goes to the first name: the same input, the same leader.
        return max(sorted(self.standings), key=lambda m: self.standings[m].mean)


def leaders(results: Results, min_lts: int = 2, ignore: Sequence[str] = ()) -> list[LoadGroup]:
    """One LoadGroup per load that has a configuration with >= min_lts LTs and
    a positive best median; groups in the order scenario, runtime, rest.
    Mutexes in `ignore` (the copies of an A/B sweep, say) are left out
    entirely: they are neither a column nor anyone's best."""
    left_out = {ignore} if isinstance(ignore, str) else set(ignore)
    samples: dict[tuple, dict[str, list[float]]] = {}
    for run in results.runs:
        mutex, value, lts = run.get("mutex"), run.get("throughput_per_ms"), run.get("lts")
        if mutex is None or mutex in left_out or not isinstance(value, (int, float)):
            continue
        if not isinstance(lts, (int, float)) or lts < min_lts:
            continue
        key = point_key(run)
        samples.setdefault(key, {}).setdefault(mutex, []).append(float(value))
    # An unset topology or pinning and its default name are one setting.
    group_of = {
        k: tuple(_setting(dict(zip(POINT_KEYS, k))[g]) for g in GROUP_KEYS) for k in samples
    }
    ratios: dict[tuple, dict[str, list[float]]] = {}
    counts: dict[tuple, int] = {}
    for key, by_mutex in samples.items():
        medians = {m: statistics.median(v) for m, v in by_mutex.items()}
        best = max(medians.values())
        if best <= 0:
            continue
        group = group_of[key]
        counts[group] = counts.get(group, 0) + 1
        for m, v in medians.items():
            ratios.setdefault(group, {}).setdefault(m, []).append(v / best)
    groups = []
    for group in sorted(counts, key=lambda g: tuple(map(_order, g))):
        standings = {
            m: Standing(_geometric_mean(r), min(r))
            for m, r in ratios[group].items()
            if len(r) == counts[group]
        }
        groups.append(LoadGroup(dict(zip(GROUP_KEYS, group)), counts[group], standings))
    return groups


def _setting(value: Any) -> Any:
    return None if value in _UNSET else value


def _order(value: Any) -> tuple:
    """Sort key of a setting: unset first, then numbers by value (2 before
    10), then names."""
    if value is None:
        return (0, 0, "")
    if isinstance(value, (int, float)):
        return (1, value, "")
    return (2, 0, str(value))


def _geometric_mean(values: Sequence[float]) -> float:
    if any(v <= 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def mutexes_of(groups: Sequence[LoadGroup]) -> list[str]:
    """Every mutex that stands in some group, by name, the library last."""
    names = sorted({m for g in groups for m in g.standings} - {BASELINE_MUTEX})
    return names + ([BASELINE_MUTEX] if any(BASELINE_MUTEX in g.standings for g in groups) else [])


def _label(label: dict[str, Any]) -> tuple[str, str, str]:
    rest = " ".join(f"{k}={label[k]}" for k in GROUP_KEYS[2:] if label.get(k) is not None)
    return str(label.get("scenario")), str(label.get("runtime")), rest


def format_leaders(groups: Sequence[LoadGroup], columns: Sequence[str], min_lts: int = 2) -> str:
    """Markdown: one row per load, the leader and a 'mean (lowest)' cell per
    mutex of `columns`."""
    settings = {_label(g.label)[2] for g in groups}
    show_rest = len(settings) > 1  # one setting for all is said once, above the table
    head = (
        ["load", "runtime"]
        + (["setting"] if show_rest else [])
        + ["configurations", "leader", *columns]
    )
    common = next(iter(settings), "") if not show_rest else ""
    lines = [
        f"Per load: each mutex's median throughput over the best median of every configuration "
        f"with >= {min_lts} LTs (the library included); geometric mean of those ratios (lowest in "
        f"brackets); n/a where the mutex did not run in every configuration of the load."
        + (f" Every load: {common}." if common else ""),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for g in groups:
        scenario, runtime, rest = _label(g.label)
        cells = (
            [scenario, runtime]
            + ([rest or "-"] if show_rest else [])
            + [str(g.configurations), g.leader]
        )
        for m in columns:
            s = g.standings.get(m)
            cells.append("n/a" if s is None else f"{s.mean:.2f} ({s.lowest:.2f})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
