"""Figures of the report, drawn with matplotlib's Agg canvas (no pyplot, no display).

Every builder returns a list of :class:`Plot` (a figure plus its file stem,
title and caption); :func:`save` writes it as PNG and SVG. The figures are:

* :func:`throughput_plots` - throughput vs number of LTs per mutex, median
  line and 25-75 % band over repetitions, log2 x axis, one panel per runtime,
  one figure per scenario (the C++ paper's figure layout);
* :func:`fairness_plots` - Jain's index, bypass p99 and same-node hand-overs;
* :func:`speedup_plots` - poisson-hold / poisson-rate: speed-up over one
  thread vs fraction of time held / lock rate, one curve per mutex and
  thread count (the lock-contention article's curves);
* :func:`gauss_plots` - Gaussian elimination speed-ups A1/A0, A2/A0, A2/A1;
* :func:`java_plots` - Java score vs threads per lock with error bars;
* :func:`rank_figure` - ``fibersync-report rank --plot``: one mutex's ratio to
  the best other fibersync mutex, per configuration (not in the HTML report).

A mutex (or Java lock) keeps its colour and marker in every figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from . import stats
from .load import BASELINE_MUTEX, CONFIG_KEYS, JAVA_BASELINES, is_gauss
from .tables import GAUSS_PAIRS, GAUSS_PHASES, lower_is_better

PANEL_W, PANEL_H = 4.6, 3.3
DPI = 100

_MUTEX_STYLE = {
    "ttas": ("#1f77b4", "o"),
    "ticket": ("#ff7f0e", "v"),
    "mcs": ("#2ca02c", "s"),
    "clh": ("#d62728", "^"),
    "hmcs": ("#9467bd", "D"),
    "cna": ("#8c564b", "P"),
    "numa_mcs": ("#e377c2", "X"),
    "adaptive": ("#17becf", "*"),
    BASELINE_MUTEX: ("#000000", "."),
}
_JAVA_STYLE = {
    "NumaMcsLock": ("#e377c2", "X"),
    "McsLock": ("#2ca02c", "s"),
    "TtasLock": ("#1f77b4", "o"),
    "ReentrantLockUnfair": ("#000000", "."),
    "ReentrantLockFair": ("#7f7f7f", "."),
    "synchronized": ("#8c564b", "."),
}
_EXTRA_COLORS = ("#bcbd22", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5")
_EXTRA_MARKERS = ("h", "<", ">", "p", "d", "8", "H")
_LINESTYLES = ("-", "--", ":", "-.")
_LTS_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


@dataclass
class Plot:
    """One figure of the report."""

    stem: str  # file name without extension
    section: str  # report section (scenario name, "gauss", "java")
    title: str
    caption: str
    figure: Figure


def _style(name: str, table: dict[str, tuple[str, str]], extra: dict[str, int]) -> dict[str, Any]:
    if name in table:
        color, marker = table[name]
    else:
        i = extra.setdefault(name, len(extra))
        color, marker = (
            _EXTRA_COLORS[i % len(_EXTRA_COLORS)],
            _EXTRA_MARKERS[i % len(_EXTRA_MARKERS)],
        )
    baseline = name == BASELINE_MUTEX or name in JAVA_BASELINES
    return {
        "color": color,
        "marker": marker,
        "linestyle": "--" if baseline else "-",
        "linewidth": 1.6 if baseline else 1.4,
        "markersize": 6 if marker != "*" else 8,
    }


_extra_mutex: dict[str, int] = {}
_extra_lock: dict[str, int] = {}


def mutex_style(mutex: str) -> dict[str, Any]:
    return _style(mutex, _MUTEX_STYLE, _extra_mutex)


def lock_style(lock: str) -> dict[str, Any]:
    return _style(lock, _JAVA_STYLE, _extra_lock)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def new_figure(nrows: int, ncols: int, legend_right: bool = True) -> tuple[Figure, Any]:
    width = max(PANEL_W * ncols, 6.0) + (2.0 if legend_right else 0)
    fig = Figure(figsize=(width, PANEL_H * nrows + 0.6), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _log2_axis(ax, xs: Sequence[float]) -> None:
    """log2 x axis with a tick at every measured value, labelled as an integer."""
    ax.set_xscale("log", base=2)
    ticks = sorted({float(x) for x in xs if x and x > 0})
    if len(ticks) > 9:  # keep labels readable: every other value
        ticks = ticks[::2] if ticks[-1] == ticks[::2][-1] else ticks[::2] + [ticks[-1]]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _finish(fig: Figure, title: str, handles_labels: dict[str, Any], subtitle: str = "") -> None:
    fig.suptitle(title + (f"\n{subtitle}" if subtitle else ""), fontsize=12)
    if handles_labels:
        fig.legend(
            list(handles_labels.values()),
            list(handles_labels.keys()),
            loc="outside right upper",
            fontsize=9,
            frameon=False,
        )


def _collect(ax, into: dict[str, Any]) -> None:
    for h, label in zip(*ax.get_legend_handles_labels()):
        into.setdefault(label, h)


def _variants(rows: Sequence[dict], candidates: Sequence[str], within: Sequence[str]):
    """Split ``rows`` by the keys that vary independently of ``within``.

    Yields ``(suffix, rows)``: one entry (suffix "") when nothing else varies.
    """
    keys = stats.varying_keys(rows, candidates, within)
    if not keys:
        yield "", {}, list(rows)
        return
    groups = stats.group_by(rows, keys)
    for gkey in sorted(groups, key=lambda t: tuple(stats.value_key(v) for v in t)):
        label = ", ".join(f"{k}={stats.fmt_value(v)}" for k, v in zip(keys, gkey))
        yield label, dict(zip(keys, gkey)), groups[gkey]


def _reps(rows: Sequence[dict], keys: Sequence[str]) -> int:
    groups = stats.group_by(rows, keys)
    return max((len(g) for g in groups.values()), default=0)


def _median_band(
    ax,
    rows: Sequence[dict],
    xkey: str,
    metric: str,
    label: str,
    style: dict,
    band: bool = True,
    xscale: float = 1.0,
) -> bool:
    points = []
    for (x,), xrows in stats.group_by(rows, [xkey]).items():
        vals = stats.values(xrows, metric)
        if x is None or not len(vals):
            continue
        q25, q75 = stats.iqr(vals)
        points.append((float(x) * xscale, stats.median(vals), q25, q75))
    if not points:
        return False
    points.sort()
    xs, med, q25s, q75s = zip(*points)
    ax.plot(xs, med, label=label, **style)
    if band and len(xs) > 1:
        ax.fill_between(xs, q25s, q75s, color=style["color"], alpha=0.18, linewidth=0)
    elif band:
        ax.errorbar(
            xs,
            med,
            yerr=[[m - q for m, q in zip(med, q25s)], [q - m for m, q in zip(med, q75s)]],
            color=style["color"],
            linestyle="none",
            capsize=3,
        )
    return True


def _grid(ax) -> None:
    ax.grid(True, which="major", alpha=0.3)


# --------------------------------------------------------------------------
# Throughput and fairness per scenario

_SWEEP_SCENARIOS = {"poisson-hold": "hold_fraction", "poisson-rate": "lock_rate_per_ms"}
_SPLIT_CANDIDATES = [k for k in CONFIG_KEYS if k not in ("scenario", "runtime", "mutex", "lts")]


def _scenario_groups(runs: Sequence[dict]) -> list[tuple[str, list[dict]]]:
    mruns = [r for r in runs if not is_gauss(r) and r.get("mutex") is not None and r.get("lts")]
    groups = stats.group_by(mruns, ["scenario"])
    order = stats.order_key(stats.SCENARIO_ORDER)
    return [(s, groups[(s,)]) for (s,) in sorted(groups, key=lambda t: order(t[0]))]


def throughput_unit(scenario: str) -> str:
    return "lines/ms" if scenario == "text-stats" else "acquisitions/ms"


def throughput_plots(runs: Sequence[dict]) -> list[Plot]:
    out = []
    for scenario, srows in _scenario_groups(runs):
        if scenario in _SWEEP_SCENARIOS or not stats.has_metric(srows, "throughput_per_ms"):
            continue
        for suffix, _, vrows in _variants(srows, _SPLIT_CANDIDATES, ["runtime", "mutex", "lts"]):
            out.append(_throughput_figure(scenario, suffix, vrows))
    return out


def _runtimes(rows: Sequence[dict]) -> list[str]:
    return sorted({r.get("runtime") for r in rows}, key=stats.order_key(stats.RUNTIME_ORDER))


def _mutexes(rows: Sequence[dict]) -> list[str]:
    return sorted({r.get("mutex") for r in rows}, key=stats.order_key(stats.MUTEX_ORDER))


def _throughput_figure(scenario: str, suffix: str, rows: Sequence[dict]) -> Plot:
    runtimes = _runtimes(rows)
    ncols = min(3, len(runtimes))
    nrows = math.ceil(len(runtimes) / ncols)
    fig, axes = new_figure(nrows, ncols)
    handles: dict[str, Any] = {}
    unit = throughput_unit(scenario)
    for i, runtime in enumerate(runtimes):
        ax = axes[i // ncols][i % ncols]
        rrows = [r for r in rows if r.get("runtime") == runtime]
        for mutex in _mutexes(rrows):
            mrows = [r for r in rrows if r.get("mutex") == mutex]
            _median_band(ax, mrows, "lts", "throughput_per_ms", mutex, mutex_style(mutex))
        _log2_axis(ax, [r["lts"] for r in rrows])
        ax.set_ylim(bottom=0)
        ax.set_title(str(runtime if runtime is not None else "(no runtime)"), fontsize=11)
        ax.set_xlabel("lightweight threads (LTs)")
        ax.set_ylabel(f"throughput ({unit})")
        _grid(ax)
        _collect(ax, handles)
    for j in range(len(runtimes), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    reps = _reps(rows, ["runtime", "mutex", "lts"])
    title = f"{scenario}: throughput vs LTs" + (f" ({suffix})" if suffix else "")
    _finish(fig, title, handles, f"line = median, band = 25–75 % over {reps} repetitions")
    return Plot(
        stem=slug(f"throughput-{scenario}-{suffix}"),
        section=scenario,
        title=title,
        caption=f"Throughput ({unit}) per mutex; line = median, shaded band = interquartile "
        "range over repetitions; the dashed black line is the runtime's own mutex "
        f"({BASELINE_MUTEX}).",
        figure=fig,
    )


_FAIRNESS_METRICS = (
    ("jain_index", "Jain's fairness index", "Jain's index (1 = fair)"),
    ("bypass_p99", "bypass p99", "bypasses, p99 (acquisitions)"),
    ("same_node_handover", "same-node hand-overs", "same-NUMA-node hand-overs"),
)


def fairness_plots(runs: Sequence[dict]) -> list[Plot]:
    out = []
    for scenario, srows in _scenario_groups(runs):
        if scenario in _SWEEP_SCENARIOS:
            continue
        metrics = [m for m in _FAIRNESS_METRICS if stats.has_metric(srows, m[0])]
        if not metrics:
            continue
        for suffix, _, vrows in _variants(srows, _SPLIT_CANDIDATES, ["runtime", "mutex", "lts"]):
            out.append(_fairness_figure(scenario, suffix, vrows, metrics))
    return out


def _fairness_figure(scenario, suffix, rows, metrics) -> Plot:
    runtimes = _runtimes(rows)
    fig, axes = new_figure(len(runtimes), len(metrics))
    handles: dict[str, Any] = {}
    for i, runtime in enumerate(runtimes):
        rrows = [r for r in rows if r.get("runtime") == runtime]
        for j, (metric, short, ylabel) in enumerate(metrics):
            ax = axes[i][j]
            for mutex in _mutexes(rrows):
                mrows = [r for r in rrows if r.get("mutex") == mutex]
                _median_band(ax, mrows, "lts", metric, mutex, mutex_style(mutex))
            _log2_axis(ax, [r["lts"] for r in rrows])
            vals = stats.values(rrows, metric)
            if metric == "same_node_handover" and len(vals) and vals.max() <= 1.0:
                ylabel = "same-NUMA-node hand-overs (fraction)"
            if metric == "jain_index" or (metric == "same_node_handover" and "fraction" in ylabel):
                ax.set_ylim(0, 1.05)
            else:
                ax.set_ylim(bottom=0)
            ax.set_title(f"{runtime}: {short}", fontsize=11)
            ax.set_xlabel("lightweight threads (LTs)")
            ax.set_ylabel(ylabel)
            _grid(ax)
            _collect(ax, handles)
    title = f"{scenario}: fairness and locality" + (f" ({suffix})" if suffix else "")
    _finish(fig, title, handles, "line = median, band = 25–75 % over repetitions")
    return Plot(
        stem=slug(f"fairness-{scenario}-{suffix}"),
        section=scenario,
        title=title,
        caption="Jain's index of per-LT acquisitions (1 = every LT got the same share), "
        "99th percentile of bypasses (acquisitions by others between two of one LT), and "
        "hand-overs that stayed on one NUMA node. Line = median, band = interquartile range.",
        figure=fig,
    )


# --------------------------------------------------------------------------
# Poisson sweeps: speed-up over one thread


def with_speedup(rows: Sequence[dict], sweep: str) -> list[dict]:
    """Rows with ``speedup_vs_1`` filled in from throughput where the harness left it empty.

    The reference is the median throughput at 1 LT of the same runtime, mutex,
    sweep value and other settings.
    """
    if all(r.get("speedup_vs_1") is not None for r in rows):
        return list(rows)
    singles = [r for r in rows if r.get("lts") == 1]
    # The 1-LT reference has the same settings, except that carriers may follow
    # the thread count (OS threads: one carrier per LT); then match without it.
    exact = [k for k in CONFIG_KEYS if k != "lts"]
    loose = [k for k in exact if k != "carriers"]
    refs = [
        (
            keys,
            {
                gkey: stats.median(stats.values(grows, "throughput_per_ms"))
                for gkey, grows in stats.group_by(singles, keys).items()
            },
        )
        for keys in (exact, loose)
    ]
    out = []
    for r in rows:
        if r.get("speedup_vs_1") is None:
            ref = next(
                (
                    table[tuple(r.get(k) for k in keys)]
                    for keys, table in refs
                    if tuple(r.get(k) for k in keys) in table
                ),
                None,
            )
            tp = r.get("throughput_per_ms")
            if ref and tp is not None and ref > 0:
                r = dict(r, speedup_vs_1=tp / ref)
        out.append(r)
    return out


def speedup_plots(runs: Sequence[dict]) -> list[Plot]:
    out = []
    for scenario, srows in _scenario_groups(runs):
        sweep = _SWEEP_SCENARIOS.get(scenario)
        if sweep is None:
            continue
        srows = [r for r in with_speedup(srows, sweep) if r.get(sweep) is not None]
        if not stats.has_metric(srows, "speedup_vs_1"):
            continue
        candidates = [k for k in _SPLIT_CANDIDATES if k != sweep]
        for suffix, _, vrows in _variants(srows, candidates, ["runtime", "mutex", "lts", sweep]):
            out.append(_speedup_figure(scenario, sweep, suffix, vrows))
    return out


def _speedup_figure(scenario, sweep, suffix, rows) -> Plot:
    runtimes = _runtimes(rows)
    ncols = min(3, len(runtimes))
    nrows = math.ceil(len(runtimes) / ncols)
    fig, axes = new_figure(nrows, ncols)
    handles: dict[str, Any] = {}
    all_lts = sorted({r["lts"] for r in rows})
    hold = sweep == "hold_fraction"
    for i, runtime in enumerate(runtimes):
        ax = axes[i // ncols][i % ncols]
        rrows = [r for r in rows if r.get("runtime") == runtime]
        for mutex in _mutexes(rrows):
            for lts in all_lts:
                lrows = [r for r in rrows if r.get("mutex") == mutex and r["lts"] == lts]
                if not lrows:
                    continue
                style = mutex_style(mutex)
                k = all_lts.index(lts)
                style.update(
                    linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                    marker=_LTS_MARKERS[k % len(_LTS_MARKERS)],
                    markersize=4,
                )
                label = f"{mutex}, {lts} LT" + ("s" if lts != 1 else "")
                _median_band(
                    ax, lrows, sweep, "speedup_vs_1", label, style, xscale=100.0 if hold else 1.0
                )
        ax.axhline(1.0, color="#999999", linewidth=0.8, zorder=0)
        if hold:
            ax.set_xlim(0, 100)
            ax.set_xlabel("time the lock is held (%)")
        else:
            ax.set_xscale("log")
            ax.set_xlabel("lock rate (acquisitions/ms)")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("speed-up over 1 thread (×)")
        ax.set_title(str(runtime), fontsize=11)
        _grid(ax)
        _collect(ax, handles)
    for j in range(len(runtimes), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    what = "fraction of time held" if hold else "lock rate"
    title = f"{scenario}: speed-up vs {what}" + (f" ({suffix})" if suffix else "")
    _finish(fig, title, handles, "line = median, band = 25–75 % over repetitions")
    return Plot(
        stem=slug(f"speedup-{scenario}-{suffix}"),
        section=scenario,
        title=title,
        caption="Throughput at N threads divided by throughput at 1 thread of the same mutex and "
        f"{what}; one curve per mutex (colour) and thread count (line style). Above 1: "
        "the threads gained from running in parallel; below 1: a single thread would be faster.",
        figure=fig,
    )


# --------------------------------------------------------------------------
# Gaussian elimination

_PAIR_COLORS = {("A1", "A0"): "#1f77b4", ("A2", "A0"): "#d62728", ("A2", "A1"): "#2ca02c"}
_PHASE_LABELS = {
    "forward_ms": "forward elimination",
    "back_ms": "back substitution",
    "total_ms": "total",
}


def gauss_plots(runs: Sequence[dict]) -> list[Plot]:
    rows = [r for r in runs if is_gauss(r) and r.get("lts") and r.get("arch")]
    if not rows:
        return []
    candidates = [
        k for k in CONFIG_KEYS if k not in ("scenario", "mutex", "arch", "lts", "distribution")
    ]
    out = []
    for suffix, _, vrows in _variants(rows, candidates, ["arch", "lts", "distribution"]):
        out.append(_gauss_figure(suffix, vrows))
    return out


def _gauss_figure(suffix, rows) -> Plot:
    phases = [p for p in GAUSS_PHASES if stats.has_metric(rows, p)]
    fig, axes = new_figure(1, max(1, len(phases)))
    handles: dict[str, Any] = {}
    dists = sorted({r.get("distribution") for r in rows}, key=stats.value_key)
    medians: dict[tuple, float] = {}
    for (arch, dist, lts), grows in stats.group_by(rows, ["arch", "distribution", "lts"]).items():
        for p in phases:
            xs = stats.values(grows, p)
            if len(xs):
                medians[(arch, dist, lts, p)] = stats.median(xs)
    all_lts = sorted({r["lts"] for r in rows})
    for j, phase in enumerate(phases):
        ax = axes[0][j]
        for fast, slow in GAUSS_PAIRS:
            for k, dist in enumerate(dists):
                pts = []
                for lts in all_lts:
                    tf = medians.get((fast, dist, lts, phase))
                    ts = medians.get((slow, dist, lts, phase))
                    if tf and ts is not None:
                        pts.append((lts, ts / tf))
                if not pts:
                    continue
                xs, ys = zip(*pts)
                label = f"{fast}/{slow}" + (f", {dist}" if dist is not None else "")
                ax.plot(
                    xs,
                    ys,
                    label=label,
                    color=_PAIR_COLORS[(fast, slow)],
                    linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                    marker=_LTS_MARKERS[k % len(_LTS_MARKERS)],
                    markersize=5,
                )
        ax.axhline(1.0, color="#999999", linewidth=0.8, zorder=0)
        _log2_axis(ax, all_lts)
        ax.set_ylim(bottom=0)
        ax.set_title(_PHASE_LABELS[phase], fontsize=11)
        ax.set_xlabel("user threads")
        ax.set_ylabel("speed-up (median time ratio, ×)")
        _grid(ax)
        _collect(ax, handles)
    title = "Gaussian elimination: speed-up between blocking architectures" + (
        f" ({suffix})" if suffix else ""
    )
    reps = _reps(rows, ["arch", "distribution", "lts"])
    _finish(fig, title, handles, f"ratio of median times over {reps} repetitions")
    return Plot(
        stem=slug(f"gauss-speedup-{suffix}"),
        section="gauss",
        title=title,
        caption="X/Y = median time with architecture Y divided by median time with X "
        "(A0: OS-mediated, A1: scheduler-wide blocked queue, A2: per-event wait queue); "
        "above 1: X is faster. Line style = block distribution.",
        figure=fig,
    )


# --------------------------------------------------------------------------
# Java


def java_plots(rows: Sequence[dict]) -> list[Plot]:
    rows = [r for r in rows if r.get("threads") and stats.has_metric([r], "score")]
    out = []
    groups = stats.group_by(rows, ["bench", "mode", "unit"])
    for gkey in sorted(groups, key=lambda t: tuple(stats.value_key(v) for v in t)):
        bench, mode, unit = gkey
        for suffix, _, vrows in _variants(
            groups[gkey], ["carriers", "source"], ["lock", "threads"]
        ):
            out.append(_java_figure(bench, mode, unit, suffix, vrows))
    return out


def _java_figure(bench, mode, unit, suffix, rows) -> Plot:
    fig, axes = new_figure(1, 1)
    ax = axes[0][0]
    locks = sorted({r.get("lock") for r in rows}, key=stats.order_key(stats.JAVA_LOCK_ORDER))
    for lock in locks:
        pts = []
        for (threads,), trows in stats.group_by(
            [r for r in rows if r.get("lock") == lock], ["threads"]
        ).items():
            scores = stats.values(trows, "score")
            errs = stats.values(trows, "score_error")
            pts.append((threads, stats.median(scores), stats.median(errs) if len(errs) else 0.0))
        pts.sort()
        xs, ys, es = zip(*pts)
        style = lock_style(lock)
        ax.errorbar(xs, ys, yerr=es, label=lock, capsize=3, elinewidth=1, **style)
    _log2_axis(ax, [r["threads"] for r in rows])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("virtual threads")
    better = "lower is better" if lower_is_better(unit) else "higher is better"
    ax.set_ylabel(f"score ({unit or 'unitless'}, {better})")
    _grid(ax)
    handles: dict[str, Any] = {}
    _collect(ax, handles)
    title = (
        f"Java {bench}: score vs threads"
        + (f" ({mode})" if mode else "")
        + (f" ({suffix})" if suffix else "")
    )
    _finish(fig, title, handles, "error bars = JMH score error")
    return Plot(
        stem=slug(f"java-{bench}-{mode or ''}-{suffix}"),
        section="java",
        title=title,
        caption="JMH score per lock; error bars = JMH's score error. Dashed lines are the JDK "
        "baselines (ReentrantLock unfair/fair, synchronized).",
        figure=fig,
    )


# --------------------------------------------------------------------------


def all_plots(runs: Sequence[dict], java: Sequence[dict]) -> list[Plot]:
    plots = (
        throughput_plots(runs)
        + fairness_plots(runs)
        + speedup_plots(runs)
        + gauss_plots(runs)
        + java_plots(java)
    )
    seen: dict[str, int] = {}
    for p in plots:  # names that slugify alike still get files of their own
        n = seen[p.stem] = seen.get(p.stem, 0) + 1
        if n > 1:
            p.stem = f"{p.stem}-{n}"
    return plots


# --------------------------------------------------------------------------
# fibersync-report rank --plot

#: One colour and marker per runtime in the rank figure.
_RUNTIME_STYLE = {
    "os_threads": ("#444444", "o"),
    "boost_fiber": ("#1f77b4", "s"),
    "native": ("#2ca02c", "^"),
    "argobots": ("#d62728", "D"),
}


def rank_figure(rows: Sequence[Any], subject: str, best_floor: float = 0.9) -> Figure:
    """One panel per scenario: ratio to the best other fibersync mutex against
    LTs, one marker per configuration, coloured by runtime, with a vertical
    bar for its resampled interval where it has one; the target is the
    dashed line at ``best_floor``. ``rows`` are :class:`rank.RankRow`."""
    by_scenario: dict[str, list[Any]] = {}
    for r in rows:
        by_scenario.setdefault(str(r.point.get("scenario")), []).append(r)
    scenarios = sorted(by_scenario, key=stats.order_key(stats.SCENARIO_ORDER))
    ncols = min(4, len(scenarios))
    nrows = (len(scenarios) + ncols - 1) // ncols
    fig, axes = new_figure(nrows, ncols)
    runtimes = sorted({str(r.point.get("runtime")) for r in rows}, key=stats.order_key(stats.RUNTIME_ORDER))
    # Spread the runtimes a little along x so that equal ratios stay visible.
    shift = {rt: 2 ** ((i - (len(runtimes) - 1) / 2) * 0.08) for i, rt in enumerate(runtimes)}
    highs = [r.vs_best for r in rows] + [r.interval[1] for r in rows if r.interval and r.interval[1] != float("inf")]
    top = max(1.2, min(3.0, max(highs) * 1.05))
    handles: dict[str, object] = {}
    for i, scenario in enumerate(scenarios):
        ax = axes[i // ncols][i % ncols]
        srows = by_scenario[scenario]
        for rt in runtimes:
            pts = [r for r in srows if str(r.point.get("runtime")) == rt and r.point.get("lts")]
            if not pts:
                continue
            color, marker = _RUNTIME_STYLE.get(rt, ("#7f7f7f", "x"))
            h = ax.scatter(
                [float(r.point["lts"]) * shift[rt] for r in pts],
                [min(r.vs_best, top) for r in pts],
                color=color, marker=marker, s=22, alpha=0.8, label=rt,
            )
            handles.setdefault(rt, h)
            # The resampled interval of each ratio (rank.py), where it has one.
            banded = [r for r in pts if r.interval is not None]
            if banded:
                ax.vlines(
                    [float(r.point["lts"]) * shift[rt] for r in banded],
                    [min(r.interval[0], top) for r in banded],
                    [min(r.interval[1], top) for r in banded],
                    color=color, alpha=0.45, linewidth=1.0,
                )
        ax.axhline(1.0, color="#000000", linewidth=0.8)
        ax.axhline(best_floor, color="#d62728", linewidth=1.0, linestyle="--")
        _log2_axis(ax, [float(r.point["lts"]) for r in srows if r.point.get("lts")])
        ax.set_ylim(0, top)
        within = sum(r.vs_best >= best_floor for r in srows)
        ax.set_title(f"{scenario} ({within} of {len(srows)} >= {best_floor:g})", fontsize=10)
        ax.set_xlabel("LTs")
        if i % ncols == 0:
            ax.set_ylabel(f"{subject} / best other")
        _grid(ax)
    for j in range(len(scenarios), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    within = sum(r.vs_best >= best_floor for r in rows)
    fig.suptitle(
        f"{subject}: throughput / best other fibersync mutex, per configuration\n"
        f"{within} of {len(rows)} at or above {best_floor:g} (dashed line)",
        fontsize=12,
    )
    fig.legend(list(handles.values()), list(handles.keys()), loc="outside right upper", fontsize=9, frameon=False)
    return fig


def save_figure(figure: Figure, path: Path, fmt: str) -> None:
    """Write one figure as ``fmt`` ("png" or "svg") without timestamps, so
    that the same data gives the same file."""
    with matplotlib.rc_context({"svg.hashsalt": "fibersync", "svg.fonttype": "path"}):
        if fmt == "png":
            figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
        else:
            figure.savefig(path, format="svg", metadata={"Date": None, "Creator": None})


def save(plot: Plot, outdir: Path) -> tuple[Path, Path]:
    """Write ``STEM.png`` and ``STEM.svg`` into ``outdir``; returns both paths."""
    png = outdir / f"{plot.stem}.png"
    svg = outdir / f"{plot.stem}.svg"
    save_figure(plot.figure, png, "png")
    save_figure(plot.figure, svg, "svg")
    return png, svg
