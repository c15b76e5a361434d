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

Each row also has a paired ratio: the median over repetitions of the chosen
mutex's throughput divided by the best other's in the same repetition. The
harness runs repetition r of every mutex before repetition r + 1 of any, so a
slow minute of the machine lands on one repetition of every mutex; the paired
ratio cancels it where the ratio of medians does not (docs/ADAPTIVE.md, "How
close it comes"). It is None where the repetition numbers do not pair (a
repetition missing or repeated, e.g. two sweeps merged).

Each row also has a resampled interval: a 90% bootstrap interval
(scipy.stats.bootstrap, percentile method) of the ratio of the chosen mutex's
median to the best median of the others, where every resample picks its own
best. Where the repetitions pair, whole repetitions are resampled (every
mutex's repetition r together), as the harness ran them; otherwise each
mutex's runs are resampled on their own. A configuration is *clearly below*
the floor when the whole interval is, *clearly within* when the whole
interval is at or above it, and *undecided* otherwise.

The interval leans against the chosen mutex, on purpose. The best of
several noisy medians sits above the best lock's true throughput, so the
observed ratio is biased low; every resample re-picks its best, which
lowers the interval by that bias once more. "Clearly within" is therefore
strong evidence, "clearly below" weak. In a simulation (the chosen mutex
and 7 others, 5 repetitions, 5-10% noise per run) the interval held the
true ratio in about 55% of cases, not 90%; a mutex equal to the best was
called clearly within in 1-33% of cases and clearly below in 0-5%, one at
0.95 of the best clearly below in 4-14%, one at 0.85 in 77-96%. (The basic
method, which reflects the resamples about the observed ratio and so
corrects the bias once, did better on that simulation but worse on real
runs, whose spread is skewed: it called clearly below a configuration
whose per-repetition ratios had a median of 1.05.) So this is a guide to
where to measure again, not a test; the ratio of medians stays the
headline. There is no interval with fewer than 5 runs of any mutex
compared (with 3, it put a configuration clearly below that 9 repetitions
the next day put at 1.05; docs/BENCHMARKS.md, session 18).

The ratio to the library has its own interval, of the chosen mutex's median
over the library's (the same resampling, one other mutex and so no best to
re-pick: no lean either way). *Clearly below* the library means the whole
interval is under 1; *undecided* is a tie within the noise of those runs.
On the 2-core machine the two speak differently of a 2% gap: at 15
repetitions most of the lock's 0.97-0.98s against the library were clearly
below, most of its 0.99-1.00s undecided (docs/BENCHMARKS.md, session 37).

Where the runs recorded it (``line_round_trip_ns``: the bench times a cache
line's round trip between two CPUs before each run), a row also has the
median over its configuration's runs of that round trip: the machine's
phase the configuration was measured in (docs/bench.md).

A sweep's doubtful configurations are measured again with more repetitions
(scripts/recheck-adaptive.sh); ``--remeasured`` ranks the sweep with each
such configuration's row taken from the second measurement instead.

The machine's phase can also be taken out of the comparison
(``--by-phase``, rank_by_phase()): each run is fast or slow by the round
trip timed before it (the thresholds of ``fibersync-report phases``, over
every probe of the inputs), and each configuration is ranked again within
each phase from that phase's runs alone. On our EPYC VM a lock's ratio to
another differs by phase (0.97 fast, 0.88 slow), so a configuration whose
chosen mutex ran mostly in the slow phase and whose library ran in the
fast one looks below the library over all runs without being below it in
either phase. Below in every phase where both ran is the finding that the
phases do not explain.
"""

from __future__ import annotations

import inspect
import math
import statistics
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .load import BASELINE_MUTEX, POINT_KEYS, LoadError, Results, line_round_trip, point_key


class _MedianRatios:
    """The ratios of a ranked row, over all runs (RankRow) or one phase's
    (PhaseCell): `subject` over `best_other_value` (None where no other
    mutex ran) and over `library` (None where the library did not run)."""

    subject: float
    best_other_value: float | None
    library: float | None

    @property
    def vs_best(self) -> float | None:
        if self.best_other_value is None:
            return None
        return self.subject / self.best_other_value if self.best_other_value > 0 else float("inf")

    @property
    def vs_library(self) -> float | None:
        if self.library is None or self.library <= 0:
            return None
        return self.subject / self.library


@dataclass
class RankRow(_MedianRatios):
    point: dict[str, Any]
    subject: float  # median throughput of the chosen mutex
    best_other: str
    best_other_value: float
    library: float | None
    paired_vs_best: float | None = None  # median of per-repetition ratios to best_other
    interval: tuple[float, float] | None = None  # resampled 90% interval of vs_best (module docstring)
    medians: dict[str, float] = field(default_factory=dict)  # every mutex of the configuration but the ignored
    library_interval: tuple[float, float] | None = None  # resampled 90% interval of vs_library
    line_round_trip_ns: float | None = None  # median over the configuration's runs that timed one


def rank(results: Results, subject: str, ignore: Sequence[str] = ()) -> list[RankRow]:
    """One row per configuration that has `subject` and another fibersync mutex
    (not in `ignore`)."""
    # Never the best other: the subject, the library, and the ignored (a bare string is one name).
    ignored = {ignore} if isinstance(ignore, str) else set(ignore)
    not_others = {subject, BASELINE_MUTEX, *ignored}
    # (repetition, throughput) per mutex per configuration.
    samples: dict[tuple, dict[str, list[tuple[Any, float]]]] = {}
    points: dict[tuple, dict[str, Any]] = {}
    round_trips: dict[tuple, list[float]] = {}  # the bench's line probe before each run, where it took one
    for run in results.runs:
        value = run.get("throughput_per_ms")
        if run.get("mutex") is None or not isinstance(value, (int, float)):
            continue
        key = point_key(run)
        points.setdefault(key, {k: run.get(k) for k in POINT_KEYS})
        samples.setdefault(key, {}).setdefault(run["mutex"], []).append((run.get("repetition"), float(value)))
        round_trip = line_round_trip(run)
        if round_trip is not None:
            round_trips.setdefault(key, []).append(round_trip)
    rows = []
    for key, by_mutex in samples.items():
        if subject not in by_mutex:
            continue
        medians = {m: statistics.median(v for _, v in runs) for m, runs in by_mutex.items()}
        others = {m: v for m, v in medians.items() if m not in not_others}
        if not others:
            continue
        best = max(others, key=others.get)
        paired = _paired_ratio(by_mutex[subject], by_mutex[best])
        interval = _resampled_interval(by_mutex[subject], [by_mutex[m] for m in sorted(others)])
        library_interval = (
            _resampled_interval(by_mutex[subject], [by_mutex[BASELINE_MUTEX]]) if BASELINE_MUTEX in by_mutex else None
        )
        rows.append(
            RankRow(
                points[key],
                medians[subject],
                best,
                others[best],
                medians.get(BASELINE_MUTEX),
                paired,
                interval,
                {m: v for m, v in medians.items() if m not in ignored},
                library_interval,
                statistics.median(round_trips[key]) if key in round_trips else None,
            )
        )
    return rows


def replace_remeasured(rows: Sequence[RankRow], remeasured: Sequence[RankRow]) -> tuple[list[RankRow], int]:
    """`rows` (a sweep's) with the row of every configuration that
    `remeasured` (a recheck's, with more repetitions) also has replaced by
    that one; remeasured configurations the sweep lacks are added. Returns
    the rows and how many were replaced."""
    again = {point_key(r.point): r for r in remeasured}
    merged = [again.pop(point_key(r.point), r) for r in rows]
    replaced = len(remeasured) - len(again)  # what is left in `again` was not in the sweep
    merged += again.values()
    return merged, replaced


def remeasured_runs(
    runs: Sequence[dict[str, Any]], again: Sequence[dict[str, Any]], remeasured: Sequence[RankRow]
) -> list[dict[str, Any]]:
    """The runs behind replace_remeasured(rows, remeasured): `runs` (a
    sweep's) less those of every configuration that `remeasured` (ranked
    from the runs `again`) has a row for, plus `again`'s runs of those
    configurations. A configuration that `again` has but could not rank is
    not taken from it, as replace_remeasured() takes only rows."""
    keys = {point_key(r.point) for r in remeasured}
    return [r for r in runs if point_key(r) not in keys] + [r for r in again if point_key(r) in keys]


#: The machine's phases that rank_by_phase() compares in, in printed order.
PHASES = ("fast", "slow")


@dataclass
class PhaseCell(_MedianRatios):
    """A configuration's runs in one phase of the machine: the medians of
    those runs alone, so that each ratio compares runs made at the same core
    to core latency."""

    subject: float  # median throughput of the chosen mutex's runs in the phase
    best_other: str | None  # the other fibersync mutex with the best median in the phase; None: none ran in it
    best_other_value: float | None
    library: float | None  # the library's median in the phase; None: it did not run in it


@dataclass
class PhaseRankRow:
    row: RankRow  # the configuration's row of the ranking (all its runs)
    cells: dict[str, PhaseCell]  # phase -> its runs there, for the phases in which the chosen mutex ran


@dataclass
class ByPhase:
    """rank_by_phase()'s answer, with what format_by_phase() says of how the
    runs were placed."""

    rows: list[PhaseRankRow]
    fast_below: float
    slow_above: float
    given: tuple[bool, bool]  # whether fast_below, slow_above were given rather than derived from the probes
    probes: int  # the probes the default thresholds stand on
    runs: dict[str, int]  # runs of the ranked configurations per phase ("fast", "slow", "unplaced")
    note: str = ""  # phases.without_a_gap_note() where both thresholds were derived


def rank_by_phase(
    runs: Sequence[dict[str, Any]],
    rows: Sequence[RankRow],
    subject: str,
    ignore: Sequence[str] = (),
    round_trips: Sequence[float] | None = None,
    fast_below: float | None = None,
    slow_above: float | None = None,
) -> ByPhase:
    """The configurations of `rows` (rank()'s, or replace_remeasured()'s,
    with `runs` the runs they stand on) ranked again within each phase of
    the machine. A run is fast when the line round trip the bench timed
    before it is at most `fast_below`, slow when it is at least
    `slow_above`, and unplaced otherwise (between the two, or no probe).
    The thresholds default to phases.default_thresholds() of `round_trips`
    (default: every probe of `runs`), which must hold some probe: without
    one no run has a phase. A LoadError if not, or if the fast threshold
    is not below the slow one.

    A lock's ratio to another can differ by phase (0.97 fast, 0.88 slow),
    so a configuration whose chosen mutex ran in the slow phase and whose
    library ran in the fast one is compared unfairly by its medians over
    all runs; within one phase both sides ran at the same latency."""
    from .phases import phase_of, thresholds, without_a_gap_note  # phases imports this module

    if round_trips is None:
        round_trips = [ns for ns in map(line_round_trip, runs) if ns is not None]
    if not round_trips:
        raise LoadError("no run has line_round_trip_ns (the line's round trip the bench times before each run)")
    given = (fast_below is not None, slow_above is not None)
    note = without_a_gap_note(round_trips, fast_below, slow_above)
    fast_below, slow_above = thresholds(round_trips, fast_below, slow_above)

    ignored = {ignore} if isinstance(ignore, str) else set(ignore)
    ranked = {point_key(r.point): r for r in rows}
    # (configuration, phase) -> mutex -> throughputs of its runs in that phase.
    values: dict[tuple, dict[str, list[float]]] = {}
    counts = {"fast": 0, "slow": 0, "unplaced": 0}
    for run in runs:
        value = run.get("throughput_per_ms")
        key = point_key(run)
        if key not in ranked or run.get("mutex") in (None, *ignored) or not isinstance(value, (int, float)):
            continue
        ns = line_round_trip(run)
        phase = "unplaced" if ns is None else phase_of([ns], fast_below, slow_above)
        phase = "unplaced" if phase == "mixed" else phase
        counts[phase] += 1
        if phase != "unplaced":
            values.setdefault((key, phase), {}).setdefault(run["mutex"], []).append(float(value))

    phase_rows = []
    for key, row in ranked.items():
        cells = {}
        for phase in PHASES:
            by_mutex = values.get((key, phase), {})
            if subject not in by_mutex:
                continue
            medians = {m: statistics.median(v) for m, v in by_mutex.items()}
            others = {m: v for m, v in medians.items() if m not in (subject, BASELINE_MUTEX)}
            best = max(sorted(others), key=others.get, default=None)
            cells[phase] = PhaseCell(medians[subject], best, others.get(best), medians.get(BASELINE_MUTEX))
        phase_rows.append(PhaseRankRow(row, cells))
    return ByPhase(phase_rows, fast_below, slow_above, given, len(round_trips), counts, note)


def _phase_ratios(row: PhaseRankRow, ratio: str, with_best: bool = False) -> str:
    """'fast 0.95, slow 0.88' (`ratio`: "vs_best" or "vs_library"), 'n/a'
    for a phase without that ratio, each to best followed by its best other."""
    parts = []
    for phase in PHASES:
        cell = row.cells.get(phase)
        value = None if cell is None else getattr(cell, ratio)
        if value is None:
            parts.append(f"{phase} n/a")
        else:
            parts.append(f"{phase} {value:.2f}" + (f" ({cell.best_other})" if with_best else ""))
    return ", ".join(parts)


def _below_everywhere(row: PhaseRankRow, ratio: str, floor: float) -> bool | None:
    """Whether `ratio` is below `floor` in every phase that has it; None
    where no phase has it."""
    ratios = [r for r in (getattr(c, ratio) for c in row.cells.values()) if r is not None]
    return all(r < floor for r in ratios) if ratios else None


def format_by_phase(by_phase: ByPhase, subject: str, worst: int = 15, best_floor: float = 0.9) -> str:
    """Markdown, the section "By the machine's phase": per phase the totals
    of the ratios made from that phase's runs alone, then the configurations
    below the library in every phase where both ran and those below
    `best_floor` of the best other in every phase where one ran (the
    `worst` of each, worst first): a configuration below overall but at or
    above in one phase owes its overall ratio to the phases its runs fell
    into, not to the lock. A configuration is placed in a phase where it
    has either ratio there."""
    rows = by_phase.rows
    derived = f"from the {by_phase.probes} probes of the inputs"
    origin = {
        (False, False): f"thresholds {derived}",
        (True, True): "thresholds given",
        (True, False): f"fast threshold given, slow {derived}",
        (False, True): f"slow threshold given, fast {derived}",
    }[by_phase.given]
    counts = by_phase.runs
    lines = [
        "## By the machine's phase",
        "",
        f"Each run is placed by the line round trip the bench timed before it: fast at most "
        f"{by_phase.fast_below:.0f} ns, slow at least {by_phase.slow_above:.0f} ns ({origin}). The ranked "
        f"configurations' runs: {counts['fast']} fast, {counts['slow']} slow, {counts['unplaced']} unplaced "
        "(between the two, or no probe).",
        *([by_phase.note] if by_phase.note else []),
        f"Each ratio: the median of {subject}'s runs in the phase over the best median of another fibersync "
        f"mutex's runs in it, or over the library's; a configuration and phase without a run of {subject} or "
        "of the compared mutex is left out.",
        "",
        f"| phase | configurations placed | within {1 - best_floor:.0%} of the best other | at least the library "
        "| left out: to best, to library |",
        "|---|---|---|---|---|",
    ]
    with_library = [r for r in rows if r.row.library is not None]
    for phase in PHASES:
        to_best = [c.vs_best for r in rows if (c := r.cells.get(phase)) is not None and c.vs_best is not None]
        to_lib = [c.vs_library for r in rows if (c := r.cells.get(phase)) is not None and c.vs_library is not None]
        placed = sum(
            (c := r.cells.get(phase)) is not None and (c.vs_best is not None or c.vs_library is not None)
            for r in rows
        )
        lines.append(
            f"| {phase} | {placed} | {sum(v >= best_floor for v in to_best)} of {len(to_best)} | "
            f"{sum(v >= 1.0 for v in to_lib)} of {len(to_lib)} | "
            f"{len(rows) - len(to_best)}, {len(with_library) - len(to_lib)} |"
        )

    lib_verdicts = [(r, _below_everywhere(r, "vs_library", 1.0)) for r in rows]
    below_lib = [r for r, below in lib_verdicts if below]
    compared = sum(below is not None for _, below in lib_verdicts)
    lines += [
        "",
        f"{subject} against the library in the phases where both ran: at or above it in at least one in "
        f"{compared - len(below_lib)} of {compared} configurations, below it in every one in {len(below_lib)}"
        + (":" if below_lib else "."),
    ]
    lines += _phase_list(below_lib, "vs_library", worst, False)

    best_verdicts = [(r, _below_everywhere(r, "vs_best", best_floor)) for r in rows]
    below_best = [r for r, below in best_verdicts if below]
    compared = sum(below is not None for _, below in best_verdicts)
    lines += [
        "",
        f"Below {best_floor} of the best other in every phase where {subject} and another ran: "
        f"{len(below_best)} of {compared} configurations" + (":" if below_best else "."),
    ]
    lines += _phase_list(below_best, "vs_best", worst, True)
    return "\n".join(lines) + "\n"


def _phase_list(rows: Sequence[PhaseRankRow], ratio: str, worst: int, with_best: bool) -> list[str]:
    """The list lines of format_by_phase(): the `worst` rows by their best
    phase's ratio, each with every phase's ratio and the one over all runs."""

    def best_phase(r: PhaseRankRow) -> float:
        return max(v for c in r.cells.values() if (v := getattr(c, ratio)) is not None)

    ordered = sorted(rows, key=lambda r: (best_phase(r), _describe(r.row.point)))
    lines = [""] if ordered else []
    for r in ordered[:worst]:
        overall = getattr(r.row, ratio)
        over_all = "n/a" if overall is None else f"{overall:.2f}"
        lines.append(f"- {_describe(r.row.point)}: {_phase_ratios(r, ratio, with_best)} (all runs {over_all})")
    if len(ordered) > worst:
        lines.append(f"- and {len(ordered) - worst} more (--worst {worst})")
    return lines


#: Confidence level and number of resamples of the interval; the seed keeps
#: the output of one input the same from run to run.
INTERVAL_LEVEL = 0.9
INTERVAL_RESAMPLES = 2000
INTERVAL_SEED = 20260
#: Fewest runs of every mutex compared for an interval (module docstring).
INTERVAL_MIN_RUNS = 5


def _same_repetitions(samples: Sequence[list[tuple[Any, float]]]) -> bool:
    """Whether every sample numbers its runs' repetitions once each, with the
    same set of numbers: then repetition r of one pairs with r of another."""
    numbered = [dict(s) for s in samples]
    return all(
        None not in d and len(d) == len(s) and d.keys() == numbered[0].keys() for d, s in zip(numbered, samples)
    )


def _resampled_interval(
    subject: list[tuple[Any, float]], others: list[list[tuple[Any, float]]]
) -> tuple[float, float] | None:
    """Bootstrap interval of median(subject) / max(median(other) for each other),
    re-picking the best in every resample; whole repetitions are resampled
    when every sample numbers the same repetitions once each."""
    from scipy.stats import DegenerateDataWarning, bootstrap  # slow to import: only when ranking

    samples = [subject, *others]
    if any(len(s) < INTERVAL_MIN_RUNS for s in samples):
        return None
    paired = _same_repetitions(samples)
    if paired:
        reps = sorted(dict(subject), key=str)
        data = [np.array([by_rep[r] for r in reps], dtype=float) for by_rep in map(dict, samples)]
    else:  # sorted: the same runs in another file order give the same interval
        data = [np.array(sorted(v for _, v in s), dtype=float) for s in samples]
    if any(not np.all(np.isfinite(d)) or np.any(d < 0) for d in data):
        return None

    def ratio(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        best = np.max([np.median(x, axis=axis) for x in xs[1:]], axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.median(xs[0], axis=axis) / best

    # SciPy 1.15 named the generator `rng`; older releases only know
    # `random_state`, which newer ones are to drop.
    seed_keyword = "rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state"
    with warnings.catch_warnings():
        # All-equal samples, and a best median of 0 in a resample, warn; the
        # interval is still the answer (see the end).
        warnings.simplefilter("ignore", DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        res = bootstrap(
            tuple(data),
            ratio,
            paired=paired,
            vectorized=True,
            n_resamples=INTERVAL_RESAMPLES,
            confidence_level=INTERVAL_LEVEL,
            method="percentile",
            **{seed_keyword: np.random.default_rng(INTERVAL_SEED)},
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if np.isnan(low) or np.isnan(high) or low == np.inf:
        return None
    # A ratio is never negative; a high end of inf (a best median of 0 in
    # some resample) still leaves a usable low end.
    return max(low, 0.0), high


def format_interval(interval: tuple[float, float]) -> str:
    """'[low, high]', both ends rounded down to 2 decimals: against a floor
    of 0.9 (or any other of 2 decimals) the printed ends then decide as the
    exact ones do (0.8996 prints as 0.89, not as 0.90)."""

    def down(x: float) -> str:
        return f"{math.floor(x * 100) / 100:.2f}" if math.isfinite(x) else "inf"

    return f"[{down(interval[0])}, {down(interval[1])}]"


def interval_verdict(interval: tuple[float, float] | None, floor: float) -> str:
    """'within', 'below' or 'undecided' for a ratio floor; 'n/a' without an interval."""
    if interval is None:
        return "n/a"
    if interval[0] >= floor:
        return "within"
    if interval[1] < floor:
        return "below"
    return "undecided"


def _paired_ratio(subject: list[tuple[Any, float]], other: list[tuple[Any, float]]) -> float | None:
    """Median of subject / other over the repetitions both have; None unless
    each side numbers its repetitions once each and they are the same set."""
    if not _same_repetitions([subject, other]):
        return None
    a, b = dict(subject), dict(other)
    if any(b[r] <= 0 for r in b):
        return None
    return statistics.median(a[r] / b[r] for r in a)


def _describe(point: dict[str, Any]) -> str:
    parts = [str(point.get("scenario")), str(point.get("runtime")), f"lts={point.get('lts')}"]
    for k in ("carriers", "topology", "pinning", "hold_fraction", "lock_rate_per_ms"):
        v = point.get(k)
        if v not in (None, "", "machine", "none"):
            parts.append(f"{k}={v}")
    return " ".join(parts)


def _library_band(row: RankRow) -> str:
    """' [low, high], clearly below' (or 'undecided', 'clearly at or above'), then ', line N ns' where the
    runs timed the line's round trip; '' with neither."""
    verdict = interval_verdict(row.library_interval, 1.0)
    band = ""
    if verdict != "n/a":
        words = {"within": "clearly at or above", "below": "clearly below", "undecided": "undecided"}[verdict]
        band = f" {format_interval(row.library_interval)}, {words}"
    if row.line_round_trip_ns is not None:
        band += f", line {row.line_round_trip_ns:.0f} ns"
    return band


def format_rank(
    rows: Sequence[RankRow], subject: str, worst: int = 15, best_floor: float = 0.9, ignored: Sequence[str] = ()
) -> str:
    """Markdown: totals, then the `worst` configurations by ratio to the best
    and the `worst` below the library (and the mutexes left out of the
    comparison, if any)."""
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
    paired = sorted(r.paired_vs_best for r in rows if r.paired_vs_best is not None)
    if paired:
        paired_within = sum(p >= best_floor for p in paired)
        lines.append(
            f"paired by repetition (median of per-repetition ratios to the same best other): within "
            f"{1 - best_floor:.0%} in {paired_within} of {len(paired)}; median {statistics.median(paired):.3f}, "
            f"worst {paired[0]:.3f}"
        )
    verdicts = [interval_verdict(r.interval, best_floor) for r in rows]
    if any(v != "n/a" for v in verdicts):
        lines.append(
            f"resampled {INTERVAL_LEVEL:.0%} interval of the ratio to best (re-picking the best): clearly at or above "
            f"{best_floor} in {verdicts.count('within')}, clearly below in {verdicts.count('below')}, undecided in "
            f"{verdicts.count('undecided')}"
            + (
                f", no interval in {verdicts.count('n/a')} (fewer than {INTERVAL_MIN_RUNS} runs of a mutex)"
                if "n/a" in verdicts
                else ""
            )
        )
    lib_verdicts = [interval_verdict(r.library_interval, 1.0) for r in lib_rows]
    if any(v != "n/a" for v in lib_verdicts):
        lines.append(
            f"resampled {INTERVAL_LEVEL:.0%} interval of the ratio to library: clearly at or above 1 in "
            f"{lib_verdicts.count('within')}, clearly below in {lib_verdicts.count('below')}, undecided (a tie) in "
            f"{lib_verdicts.count('undecided')}"
            + (f", no interval in {lib_verdicts.count('n/a')}" if "n/a" in lib_verdicts else "")
        )
    timed = sorted(r.line_round_trip_ns for r in rows if r.line_round_trip_ns is not None)
    if timed:
        lines.append(
            f"line round trip between two CPUs before each run (the median of each configuration's runs): "
            f"{timed[0]:.0f}-{timed[-1]:.0f} ns, median {statistics.median(timed):.0f} ns, in {len(timed)} of "
            f"{len(rows)} configurations"
        )
    if ignored:
        lines.append(f"left out of the comparison: {', '.join(ignored)}")
    lines += [
        "",
        f"| configuration | {subject} (acq/ms) | best other | its acq/ms | ratio to best | paired | "
        f"{INTERVAL_LEVEL:.0%} interval | ratio to library |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r.vs_best)[:worst]:
        lib = "n/a" if r.vs_library is None else f"{r.vs_library:.2f}"
        pair = "n/a" if r.paired_vs_best is None else f"{r.paired_vs_best:.2f}"
        band = "n/a" if r.interval is None else format_interval(r.interval)
        lines.append(
            f"| {_describe(r.point)} | {r.subject:.3g} | {r.best_other} | {r.best_other_value:.3g} | "
            f"{r.vs_best:.2f} | {pair} | {band} | {lib} |"
        )
    below_lib = sorted((r for r in lib_rows if r.vs_library < 1.0), key=lambda r: r.vs_library)[:worst]
    if below_lib:
        lines += ["", "Worst ratios to library:", ""]
        lines += [f"- {_describe(r.point)}: {r.vs_library:.2f}{_library_band(r)}" for r in below_lib]
    return "\n".join(lines) + "\n"



#: A configuration is measured again with the other mutexes whose median is
#: at least this fraction of the best other's (and the chosen one and the
#: library): a lock at less than half the best is not the best of a longer
#: run, and leaving such locks out (the FIFO locks in text-stats on OS
#: threads at 64 threads: 70 acq/ms, 14 s a run) keeps a recheck to minutes.
RECHECK_CONTENDER_FLOOR = 0.5

#: Configuration keys the harness takes as options of their own; every other
#: key of a configuration is a scenario field, given with --set.
_BENCH_OPTIONS = {
    "scenario": "--preset",
    "runtime": "--runtime",
    "lts": "--lts",
    "carriers": "--carriers",
    "pinning": "--pinning",
    "topology": "--topology",
}


def recheck_reasons(row: RankRow, best_floor: float = 0.9) -> list[str]:
    """Why a configuration is worth measuring again with more repetitions:
    its interval does not put it clearly at or above the floor (without an
    interval: its ratio is below the floor), or it is below the library.
    Empty if neither."""
    reasons = []
    verdict = interval_verdict(row.interval, best_floor)
    if verdict in ("below", "undecided"):
        reasons.append(f"interval {verdict}")
    elif verdict == "n/a" and row.vs_best < best_floor:
        reasons.append(f"ratio {row.vs_best:.2f}, no interval")
    if row.vs_library is not None and row.vs_library < 1.0:
        reasons.append(f"library ratio {row.vs_library:.2f}")
    return reasons


def _bench_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def recheck_plan(rows: Sequence[RankRow], subject: str, best_floor: float = 0.9) -> list[dict[str, Any]]:
    """The configurations that recheck_reasons() names, worst first, each
    with the fibersync-bench arguments that run it again (less --reps and
    --duration-ms, which the caller chooses): the configuration's own
    scenario, runtime, LTs, carriers, pinning, topology and swept fields,
    and the mutexes: the chosen one, the library where the configuration
    has it, and every other within RECHECK_CONTENDER_FLOOR of the best."""
    plan = []
    for row in sorted(rows, key=lambda r: r.vs_best):
        reasons = recheck_reasons(row, best_floor)
        if not reasons:
            continue
        contenders = [
            m
            for m, v in row.medians.items()
            if m not in (subject, BASELINE_MUTEX) and v >= RECHECK_CONTENDER_FLOOR * row.best_other_value
        ]
        mutexes = [subject, *sorted(contenders), *([BASELINE_MUTEX] if BASELINE_MUTEX in row.medians else [])]
        args: list[str] = []
        for key in POINT_KEYS:
            value = row.point.get(key)
            if value is None or value == "":
                continue
            text = _bench_value(value)
            args += [_BENCH_OPTIONS[key], text] if key in _BENCH_OPTIONS else ["--set", f"{key}={text}"]
        plan.append(
            {
                "configuration": _describe(row.point),
                "reasons": reasons,
                "mutexes": mutexes,
                "bench_args": args + ["--mutex", ",".join(mutexes)],
            }
        )
    return plan


def write_recheck_plan(plan: list[dict[str, Any]], path) -> None:
    """Write recheck_plan() as JSON into ``path``, all or nothing."""
    import json

    _write_whole(path, lambda staged: staged.write_text(json.dumps(plan, indent=1) + "\n"))


def _write_whole(path, write) -> None:
    """Call ``write(staged)`` for a hidden file next to ``path`` and rename it
    over ``path``: the file is written whole or not at all. A missing
    directory or a failed write is a ValueError naming the path."""
    import os
    from pathlib import Path

    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"{path.parent}: no such directory")
    staged = path.with_name(f".{path.name}.part")
    try:
        write(staged)
        os.replace(staged, path)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise ValueError(f"{path}: cannot write: {exc.strerror or exc}") from None


def write_rank_figure(rows: Sequence[RankRow], subject: str, path) -> None:
    """Draw :func:`plot.rank_figure` into ``path`` (.png or .svg), all or
    nothing: it is written to a hidden file next to it and renamed over it."""
    from pathlib import Path

    from . import plot

    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: the figure must be a .png or .svg file")
    _write_whole(path, lambda staged: plot.save_figure(plot.rank_figure(rows, subject), staged, fmt))
