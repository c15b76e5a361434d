"""phases: an interleaved A/B split by the machine's phase.

``scripts/phase-ab.sh`` runs a few configurations again and again, one
repetition of every mutex each time (a *cycle*), and between cycles times the
round trip of one cache line between two CPUs (``fibersync-line-probe``). It
writes ``phases.tsv`` (``cycle``, the round trip before and after it, in ns)
and the bench's files ``c<cycle>-<k>.csv/.json``. On a machine whose core to
core latency changes for seconds at a time (our EPYC VM: ~57 or ~413 ns,
docs/ADAPTIVE.md finding 34) a lock can be ahead in one phase and behind in
the other, and a sweep only sees the mixture its runs fell into.

A cycle is *fast* when both probes are at most ``fast_below`` and *slow* when
both are at least ``slow_above``; the others are *mixed*. By default the
thresholds are the two sides of the widest gap between the run's probes
(sorted, as a ratio of neighbours) if it is a gap between two phases: at
least twice as wide, and its upper side at least 3x the lowest probe. The
fast phase can spread over a ratio of two by itself (44-80 ns in one hour of
our EPYC VM, around two modes, with the slow one at 320-400), which fixed
multiples of the lowest probe cut in half. Without such a gap the defaults
are 1.5x and 3x the lowest probe, so a run made wholly in one phase has only
"fast" cycles (the round trips each row stands on are printed with it).
Per configuration, phase and mutex the table gives the median over cycles
of the mutex's throughput over the baseline's in the same cycle.

The bench also times the round trip before each of its runs
(``line_round_trip_ns``, docs/bench.md). Where every run of a configuration
in a cycle has that probe, the configuration's cycle is placed by those
probes (all at most ``fast_below``: fast; all at least ``slow_above``:
slow; else left out) instead of by the cycle's two, so that a long cycle
across a change of phase still counts for the configurations run wholly on
one side of it. The probes of either kind set the default thresholds.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .load import POINT_KEYS, LoadError, line_round_trip, load_results, point_key
from .rank import _describe

#: Default thresholds, as multiples of the lowest probe of the run, where
#: the probes show no gap between two phases.
FAST_FACTOR = 1.5
SLOW_FACTOR = 3.0
#: A gap between neighbouring probes (sorted) separates two phases if its
#: upper side is at least PHASE_GAP times its lower side and SLOW_FACTOR
#: times the lowest probe, and each side holds at least PHASE_MIN_PROBES
#: probes and PHASE_MIN_SHARE of them: a phase lasts seconds, so it shows
#: in several probes, where a probe that the kernel interrupted (tens of
#: microseconds, or milliseconds, in a sweep of thousands) would otherwise
#: make the widest gap and place every real slow phase in the fast one.
PHASE_GAP = 2.0
PHASE_MIN_PROBES = 2
PHASE_MIN_SHARE = 0.01
_RUN_FILE = re.compile(r"^c(\d+)-(\d+)\.(csv|json)$")


@dataclass
class PhaseRow:
    point: dict[str, Any]
    phase: str  # "fast" or "slow"
    cycles: int  # cycles in which the baseline ran
    ratios: dict[str, float] = field(default_factory=dict)  # mutex -> median ratio to the baseline
    baseline_median: float = 0.0  # the baseline's median throughput (per ms) in these cycles
    round_trip_median: float = 0.0  # the median probe (ns) of these cycles


@dataclass
class Phases:
    rows: list[PhaseRow]
    fast_below: float
    slow_above: float
    cycles: dict[str, int]  # cycles per phase ("fast", "slow", "mixed"), by the cycle's own two probes
    placed: dict[str, int] = field(default_factory=dict)  # configuration-cycles per phase, as placed
    note: str = ""  # without_a_gap_note() where both thresholds were derived


def phase_gap(round_trips: Sequence[float]) -> tuple[float, float] | None:
    """The sides of the widest gap between two phases in these probes (see
    PHASE_GAP), or None where they show a single phase."""
    ordered = sorted(round_trips)
    side = max(PHASE_MIN_PROBES, math.ceil(PHASE_MIN_SHARE * len(ordered)))
    widest = max(range(side, len(ordered) - side + 1), key=lambda i: ordered[i] / ordered[i - 1], default=None)
    if widest is not None:
        below, above = ordered[widest - 1], ordered[widest]
        if above >= PHASE_GAP * below and above >= SLOW_FACTOR * ordered[0]:
            return below, above
    return None


def default_thresholds(round_trips: Sequence[float]) -> tuple[float, float]:
    """(fast_below, slow_above) for these probes: the sides of the widest gap
    between two phases, else FAST_FACTOR and SLOW_FACTOR x the lowest."""
    gap = phase_gap(round_trips)
    if gap is not None:
        return gap
    lowest = min(round_trips)
    return FAST_FACTOR * lowest, SLOW_FACTOR * lowest


def without_a_gap_note(
    round_trips: Sequence[float], fast_below: float | None = None, slow_above: float | None = None
) -> str:
    """A sentence for a report whose thresholds are both derived (neither
    given) from probes that show no gap between phases (else ""): its
    "fast" is then only "near the fastest probe of these runs", which need
    not be the machine's fast phase (a sweep run wholly in a slow phase has
    its slow runs called fast)."""
    if fast_below is not None or slow_above is not None:
        return ""
    if not round_trips or phase_gap(round_trips) is not None:
        return ""
    return (
        f"The probes show no gap between two phases: the thresholds are {FAST_FACTOR:g} and "
        f"{SLOW_FACTOR:g} times the lowest probe ({min(round_trips):.0f} ns), so \"fast\" means near the "
        "fastest probe of these runs, which need not be the machine's fast phase."
    )


def thresholds(
    round_trips: Sequence[float], fast_below: float | None = None, slow_above: float | None = None
) -> tuple[float, float]:
    """(fast_below, slow_above): each the one given, else default_thresholds()'
    for these probes (which must then be some); a LoadError unless the fast
    threshold is below the slow one."""
    if fast_below is None or slow_above is None:
        default_fast, default_slow = default_thresholds(round_trips)
        fast_below = default_fast if fast_below is None else fast_below
        slow_above = default_slow if slow_above is None else slow_above
    if fast_below >= slow_above:
        raise LoadError(f"the fast threshold ({fast_below:g} ns) must be below the slow one ({slow_above:g} ns)")
    return fast_below, slow_above


def phase_of(round_trips: Sequence[float], fast_below: float, slow_above: float) -> str:
    """'fast' where every probe is at most fast_below, 'slow' where every one
    is at least slow_above, else 'mixed'."""
    if max(round_trips) <= fast_below:
        return "fast"
    if min(round_trips) >= slow_above:
        return "slow"
    return "mixed"


def read_probes(path: Path) -> dict[int, tuple[float, float]]:
    """phases.tsv: one line per cycle, ``cycle before_ns after_ns``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file (is this a phase-ab.sh directory?)") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LoadError(f"{path}: not a text file") from None
    probes: dict[int, tuple[float, float]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        try:
            if len(parts) != 3:
                raise ValueError
            cycle, before, after = int(parts[0]), float(parts[1]), float(parts[2])
            if not (0 < before < math.inf and 0 < after < math.inf):
                raise ValueError
        except ValueError:
            raise LoadError(f"{path}:{number}: expected 'cycle before_ns after_ns', got {line.strip()!r}") from None
        if cycle in probes:
            raise LoadError(f"{path}:{number}: cycle {cycle} a second time")
        probes[cycle] = (before, after)
    if not probes:
        raise LoadError(f"{path}: no cycles")
    return probes


def split(directory: str | Path, baseline: str, fast_below: float | None = None, slow_above: float | None = None) -> Phases:
    directory = Path(directory)
    if not directory.is_dir():
        raise LoadError(f"{directory}: no such directory")
    probes = read_probes(directory / "phases.tsv")
    try:
        files = sorted(f for f in directory.iterdir() if _RUN_FILE.match(f.name))
    except OSError as exc:
        raise LoadError(f"{directory}: cannot list: {exc.strerror or exc}") from None
    if not files:
        raise LoadError(f"{directory}: no c<cycle>-<k>.csv/.json files")
    results = load_results(files)
    # (point, cycle) -> the runs of that configuration in that cycle.
    groups: dict[tuple, list[dict[str, Any]]] = {}
    points: dict[tuple, dict[str, Any]] = {}
    for run in results.runs:
        value = run.get("throughput_per_ms")
        match = _RUN_FILE.match(Path(run.get("_source", "")).name)
        if match is None or run.get("mutex") is None or not isinstance(value, (int, float)):
            continue
        cycle = int(match.group(1))
        if cycle not in probes:
            continue  # a cycle cut short before its second probe
        key = point_key(run)
        points.setdefault(key, {k: run.get(k) for k in POINT_KEYS})
        groups.setdefault((key, cycle), []).append(run)

    # A configuration's cycle stands on the probes the bench took before each
    # of its runs where every run has one, else on the cycle's two.
    def group_probes(key: tuple, cycle: int) -> list[float]:
        own = [line_round_trip(run) for run in groups[(key, cycle)]]
        return [ns for ns in own if ns is not None] if all(ns is not None for ns in own) else list(probes[cycle])

    all_probes = [ns for p in probes.values() for ns in p] + [
        ns for runs in groups.values() for ns in map(line_round_trip, runs) if ns
    ]
    note = without_a_gap_note(all_probes, fast_below, slow_above)
    fast_below, slow_above = thresholds(all_probes, fast_below, slow_above)

    # (point, phase) -> cycle -> mutex -> throughput; and the probes each stands on.
    table: dict[tuple, dict[int, dict[str, float]]] = {}
    stood_on: dict[tuple, list[float]] = {}
    placed = {"fast": 0, "slow": 0, "mixed": 0}
    for (key, cycle), runs in groups.items():
        round_trips = group_probes(key, cycle)
        phase = phase_of(round_trips, fast_below, slow_above)
        placed[phase] += 1
        if phase == "mixed":
            continue
        by_mutex = table.setdefault((key, phase), {}).setdefault(cycle, {})
        for run in runs:
            by_mutex[run["mutex"]] = float(run["throughput_per_ms"])
        stood_on[(key, cycle)] = round_trips
    if not any(baseline in by_mutex for cycles in table.values() for by_mutex in cycles.values()):
        raise LoadError(f"the baseline {baseline} ran in no fast or slow cycle")
    rows = []
    for (key, phase), cycles in table.items():
        ratios: dict[str, list[float]] = {}
        base_values = []
        round_trips = []
        for cycle, by_mutex in cycles.items():
            base = by_mutex.get(baseline)
            if base is None or base <= 0:
                continue
            base_values.append(base)
            round_trips.extend(stood_on[(key, cycle)])
            for mutex, value in by_mutex.items():
                ratios.setdefault(mutex, []).append(value / base)
        if len(ratios) < 2:
            continue
        rows.append(
            PhaseRow(
                points[key],
                phase,
                len(base_values),
                {m: statistics.median(v) for m, v in sorted(ratios.items())},
                statistics.median(base_values),
                statistics.median(round_trips),
            )
        )
    rows.sort(key=lambda r: (_describe(r.point), r.phase))
    counts = {"fast": 0, "slow": 0, "mixed": 0}
    for cycle in probes:
        counts[phase_of(probes[cycle], fast_below, slow_above)] += 1
    return Phases(rows, fast_below, slow_above, counts, placed, note)


def format_phases(phases: Phases, baseline: str) -> str:
    mutexes = sorted({m for r in phases.rows for m in r.ratios if m != baseline})
    lines = [
        f"Cycles: {phases.cycles['fast']} fast (both probes <= {phases.fast_below:.0f} ns), "
        f"{phases.cycles['slow']} slow (both >= {phases.slow_above:.0f} ns), "
        f"{phases.cycles['mixed']} mixed.",
        f"Configurations' cycles, each placed by the probes before its runs where the bench took them "
        f"(else by its cycle's): {phases.placed.get('fast', 0)} fast, {phases.placed.get('slow', 0)} slow, "
        f"{phases.placed.get('mixed', 0)} left out.",
        *([phases.note] if phases.note else []),
        f"Each cell: the median over cycles of the mutex's throughput / {baseline}'s in the same cycle.",
        "",
        "| configuration | phase | round trip, ns | cycles | " + " | ".join(mutexes) + f" | {baseline} per ms |",
        "|---|---|---|---|" + "---|" * len(mutexes) + "---|",
    ]
    for r in phases.rows:
        cells = [f"{r.ratios[m]:.3f}" if m in r.ratios else "-" for m in mutexes]
        lines.append(
            f"| {_describe(r.point)} | {r.phase} | {r.round_trip_median:.0f} | {r.cycles} | "
            + " | ".join(cells)
            + f" | {r.baseline_median:.4g} |"
        )
    return "\n".join(lines) + "\n"
