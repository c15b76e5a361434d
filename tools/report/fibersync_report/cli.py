"""Command line: ``fibersync-report {html,compare,rank,leaders,phases,check-trace}``.

Exit status: 0 success; 1 ``check-trace`` found an invalid trace or a
migration count other than ``--expect-migrations``; 2 bad usage or an input
that is missing or malformed (one line on stderr, no output file written).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from . import __version__

PROG = "fibersync-report"
EXIT_OK, EXIT_CHECK_FAILED, EXIT_INPUT = 0, 1, 2


def _error(message: str, code: int = EXIT_INPUT) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def _cmd_html(args: argparse.Namespace) -> int:
    from .html import ReportError, build_report
    from .load import LoadError, load_results

    outdir = Path(args.output) if args.output else Path(args.results[0]).parent / "report"
    try:
        results = load_results(args.results)
        report = build_report(results, outdir, title=args.title)
    except (LoadError, ReportError) as exc:
        return _error(str(exc))
    print(report)
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare, format_table, to_csv, write_text_atomically
    from .load import LoadError, load_results

    try:
        baseline = load_results([args.baseline])
        contender = load_results([args.contender])
    except LoadError as exc:
        return _error(str(exc))
    if baseline.empty:
        return _error(f"{args.baseline}: no runs")
    if contender.empty:
        return _error(f"{args.contender}: no runs")
    result = compare(baseline, contender, str(args.baseline), str(args.contender))
    if args.csv:
        try:
            write_text_atomically(args.csv, to_csv(result))
        except OSError as exc:
            return _error(f"{args.csv}: cannot write: {exc.strerror or exc}")
    sys.stdout.write(format_table(result))
    return EXIT_OK


def _names(parts: list[str]) -> list[str]:
    """The names of a repeatable comma-list option, once each, in the order given."""
    return list(dict.fromkeys(m.strip() for part in parts for m in part.split(",") if m.strip()))


def _unknown_ignored(ignore: list[str], results) -> str | None:
    """The error for --ignore names that no run has, if any: a misspelt name
    would leave the copy it meant in the comparison, silently."""
    present = {run.get("mutex") for run in results.runs}
    unknown = [m for m in ignore if m not in present]
    return f"--ignore: no run has mutex {', '.join(unknown)}" if unknown else None


def _cmd_rank(args: argparse.Namespace) -> int:
    from .load import LoadError, load_results
    from .rank import format_rank, rank

    if not args.by_phase and (args.fast_below is not None or args.slow_above is not None):
        return _error("--fast-below and --slow-above need --by-phase")
    try:
        results = load_results(args.results)
    except LoadError as exc:
        return _error(str(exc))
    ignore = sorted(_names(args.ignore))
    if args.mutex in ignore:
        return _error(f"--ignore names the ranked mutex {args.mutex}")
    if (problem := _unknown_ignored(ignore, results)) is not None:
        return _error(problem)
    rows = rank(results, args.mutex, ignore)
    if not rows:
        after = f" (after --ignore {','.join(ignore)})" if ignore else ""
        return _error(f"no configuration has {args.mutex} and another fibersync mutex{after}")
    header = ""
    runs, probed = results.runs, results.runs  # the runs behind the rows; every run of the inputs
    if args.remeasured:
        from .rank import remeasured_runs, replace_remeasured

        try:
            again = load_results(args.remeasured)
        except LoadError as exc:
            return _error(str(exc))
        remeasured = rank(again, args.mutex, ignore)
        if not remeasured:
            return _error(f"--remeasured: no configuration has {args.mutex} and another fibersync mutex")
        rows, replaced = replace_remeasured(rows, remeasured)
        runs, probed = remeasured_runs(results.runs, again.runs, remeasured), results.runs + again.runs
        header = (
            f"{len(remeasured)} configuration{'s' if len(remeasured) != 1 else ''} measured again (--remeasured): "
            f"{replaced} in place of their first results, {len(remeasured) - replaced} not in them\n"
        )
    by_phase = ""
    if args.by_phase:  # before any file is written: its errors leave none
        from .load import line_round_trip
        from .rank import format_by_phase, rank_by_phase

        try:
            phased = rank_by_phase(
                runs,
                rows,
                args.mutex,
                ignore,
                [ns for ns in map(line_round_trip, probed) if ns is not None],
                args.fast_below,
                args.slow_above,
            )
        except LoadError as exc:
            return _error(f"--by-phase: {exc}")
        by_phase = "\n" + format_by_phase(phased, args.mutex, worst=args.worst)
    if args.plot:
        from .rank import write_rank_figure

        try:
            write_rank_figure(rows, args.mutex, args.plot)
        except ValueError as exc:
            return _error(str(exc))
    if args.recheck:
        from .rank import recheck_plan, write_recheck_plan

        try:
            write_recheck_plan(recheck_plan(rows, args.mutex), args.recheck)
        except ValueError as exc:
            return _error(str(exc))
    sys.stdout.write(header + format_rank(rows, args.mutex, worst=args.worst, ignored=ignore) + by_phase)
    return EXIT_OK


def _cmd_phases(args: argparse.Namespace) -> int:
    from .load import LoadError
    from .phases import format_phases, split

    try:
        phases = split(args.directory, args.baseline, args.fast_below, args.slow_above)
    except LoadError as exc:
        return _error(str(exc))
    if not phases.rows:
        return _error(f"no configuration has {args.baseline} and another mutex in a fast or slow cycle")
    sys.stdout.write(format_phases(phases, args.baseline))
    return EXIT_OK


def _cmd_leaders(args: argparse.Namespace) -> int:
    from .leaders import format_leaders, leaders, mutexes_of
    from .load import LoadError, load_results

    try:
        results = load_results(args.results)
    except LoadError as exc:
        return _error(str(exc))
    if not results.runs:
        return _error("no C++ harness runs in the input (leaders reads fibersync-bench results)")
    ignore = sorted(_names(args.ignore))
    if (problem := _unknown_ignored(ignore, results)) is not None:
        return _error(problem)
    columns = _names(args.mutexes)
    if ignored_columns := [m for m in columns if m in ignore]:
        return _error(
            f"--mutexes names a mutex that --ignore leaves out: {', '.join(ignored_columns)}"
        )
    groups = leaders(results, args.min_lts, ignore)
    if not groups:
        after = f" after --ignore {','.join(ignore)}" if ignore else ""
        return _error(
            f"no configuration with {args.min_lts} or more LTs and a positive best "
            f"throughput{after}"
        )
    known = mutexes_of(groups)
    columns = columns or known
    unknown = [m for m in columns if m not in known]
    if unknown:
        return _error(
            f"--mutexes: no load has mutex {', '.join(unknown)} in every configuration "
            f"(known: {', '.join(known)})"
        )
    sys.stdout.write(format_leaders(groups, columns, args.min_lts))
    return EXIT_OK


def _cmd_check_trace(args: argparse.Namespace) -> int:
    from .trace import TraceError, check_trace

    try:
        summary = check_trace(args.file)
    except TraceError as exc:
        return _error(f"{args.file}: invalid trace: {exc}", EXIT_CHECK_FAILED)
    except FileNotFoundError:
        return _error(f"{args.file}: no such file")
    except OSError as exc:
        return _error(f"{args.file}: cannot read: {exc.strerror or exc}")
    print(f"{args.file}: valid trace: {summary.line()}")
    if args.expect_migrations is not None and summary.migrations != args.expect_migrations:
        return _error(
            f"{args.file}: expected {args.expect_migrations} migrations, "
            f"found {summary.migrations}",
            EXIT_CHECK_FAILED,
        )
    return EXIT_OK


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text}")
    return value


def _threshold_options(p: argparse.ArgumentParser, fast: str, slow: str) -> None:
    """--fast-below and --slow-above, the thresholds of phases.thresholds();
    `fast` and `slow` say what is fast and slow (ending in 'at most' and 'at least')."""
    p.add_argument(
        "--fast-below",
        type=_positive_float,
        metavar="NS",
        help=f"{fast} NS (default: the lower side of the widest gap between two phases of the probes, else "
        "1.5x the lowest probe)",
    )
    p.add_argument(
        "--slow-above",
        type=_positive_float,
        metavar="NS",
        help=f"{slow} NS (default: the upper side of that gap, else 3x the lowest probe)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plots, comparisons and a one-page HTML report from fibersync benchmark "
        "results (fibersync-bench CSV/JSON, the Java module's CSV).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "html",
        help="write report.html plus PNG and SVG figures",
        description="Write a self-contained report.html and every figure as PNG "
        "and SVG into OUTDIR; print the report's path.",
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="result files (.csv/.json) or directories holding them",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUTDIR",
        help="output directory (default: report/ next to the first RESULTS)",
    )
    p.add_argument("--title", default="fibersync benchmark report", help="page title")
    p.set_defaults(func=_cmd_html)

    p = sub.add_parser(
        "compare",
        help="compare two runs: baseline A vs contender B",
        description="Per configuration present in both: ratio of medians B/A, "
        "Mann-Whitney U p-value, verdict; overall geomean.",
    )
    p.add_argument("baseline", metavar="A", help="baseline result file or directory")
    p.add_argument("contender", metavar="B", help="contender result file or directory")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV to FILE")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "rank",
        help="one mutex against the best other fibersync mutex and the library, per configuration",
        description="Per configuration: median throughput of MUTEX / best median of the other "
        "fibersync mutexes, and / the library mutex; totals and the worst configurations (Markdown).",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories")
    p.add_argument("--mutex", default="adaptive", help="the mutex to rank (default: adaptive)")
    p.add_argument("--worst", type=_non_negative, default=15, metavar="N", help="list the N worst (default 15)")
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="M[,M...]",
        help="leave these mutexes out of the comparison (e.g. A/B copies of MUTEX); repeatable",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the ratio of every configuration, one panel per scenario, into FILE (.png or .svg)",
    )
    p.add_argument(
        "--remeasured",
        nargs="+",
        metavar="FILE",
        help="results of configurations measured again (scripts/recheck-adaptive.sh): each such "
        "configuration's row comes from these instead of RESULTS (give it after RESULTS: it takes every "
        "file name up to the next option)",
    )
    p.add_argument(
        "--recheck",
        metavar="FILE",
        help="also write, as JSON, the configurations worth measuring again (interval not clearly within 10%%, "
        "or below the library) with the fibersync-bench arguments that run them",
    )
    p.add_argument(
        "--by-phase",
        action="store_true",
        help="also rank within each phase of the machine (fast or slow line round trip, timed by the bench "
        "before each run: line_round_trip_ns), each ratio from the runs of one phase alone",
    )
    _threshold_options(
        p,
        "with --by-phase, a run is fast when the round trip before it is at most",
        "with --by-phase, a run is slow when the round trip before it is at least",
    )
    p.set_defaults(func=_cmd_rank)

    p = sub.add_parser(
        "leaders",
        help="which mutex leads each load and runtime, and how close every mutex stays",
        description="Per load (scenario and runtime): each mutex's median throughput over the best "
        "median of each configuration, the library included; geometric mean and lowest ratio "
        "(Markdown).",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="result files or directories")
    p.add_argument(
        "--mutexes",
        action="append",
        default=[],
        metavar="M[,M...]",
        help="the columns (default: every mutex that ran in every configuration of some load); "
        "repeatable",
    )
    p.add_argument(
        "--min-lts",
        type=_non_negative,
        default=2,
        metavar="N",
        help="leave out configurations with fewer LTs (default 2: one LT is the uncontended path)",
    )
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="M[,M...]",
        help="leave these mutexes out entirely (e.g. the copies of an A/B sweep); repeatable",
    )
    p.set_defaults(func=_cmd_leaders)

    p = sub.add_parser(
        "phases",
        help="an interleaved A/B (scripts/phase-ab.sh) split by the machine's phase",
        description="Per configuration and phase (fast or slow cache-line round trip between cycles): "
        "each mutex's median ratio to the baseline within a cycle (Markdown).",
    )
    p.add_argument("directory", metavar="DIR", help="the output directory of scripts/phase-ab.sh")
    p.add_argument("--baseline", default="ttas", help="the mutex every ratio is to (default: ttas)")
    _threshold_options(
        p, "a cycle is fast when both its probes are at most", "a cycle is slow when both its probes are at least"
    )
    p.set_defaults(func=_cmd_phases)

    p = sub.add_parser(
        "check-trace",
        help="validate a Chrome trace from fibersync-bench --trace",
        description="Validate a Chrome trace-event JSON file and print a summary.",
    )
    p.add_argument("file", metavar="FILE", help="trace JSON file")
    p.add_argument(
        "--expect-migrations",
        type=_non_negative,
        metavar="N",
        help="exit 1 unless the trace has exactly N migrations (flow pairs)",
    )
    p.set_defaults(func=_cmd_check_trace)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
