"""rank: ratios to the best other fibersync mutex and to the library, on known data."""

from __future__ import annotations

from fibersync_report import cli
from fibersync_report.load import load_results
from fibersync_report.rank import format_interval, format_rank, rank
from support import harness_runs as _runs
from support import write_runs


def test_ratios_use_medians_and_exclude_library_from_best(tmp_path):
    runs = (
        _runs("adaptive", [90, 100, 500])  # median 100 despite the outlier
        + _runs("ttas", [110, 120, 130])  # median 120: the best other
        + _runs("mcs", [50, 60, 70])
        + _runs("library", [200, 200, 200])  # faster, but not a fibersync mutex
        + _runs("adaptive", [10, 10, 10], lts=16)
        + _runs("mcs", [9, 9, 9], lts=16)
        + _runs("adaptive", [5, 5, 5], lts=64, runtime="native")
        + _runs("ttas", [4, 4, 4], lts=64, runtime="native")
    )
    path = write_runs(tmp_path / "r.csv", runs)
    rows = {(r.point["runtime"], r.point["lts"]): r for r in rank(load_results([path]), "adaptive")}
    assert len(rows) == 3
    four = rows[("boost_fiber", 4)]
    assert four.best_other == "ttas"
    assert abs(four.vs_best - 100 / 120) < 1e-9
    assert abs(four.vs_library - 0.5) < 1e-9
    assert rows[("boost_fiber", 16)].vs_best > 1
    assert rows[("native", 64)].vs_library is None  # no library mutex there
    text = format_rank(list(rows.values()), "adaptive")
    assert "within 10% of the best other fibersync mutex in 2 (67%)" in text
    assert "adaptive >= library in 0 of 1" in text
    # Worst first.
    assert text.index("lts=4") < text.index("lts=16")


def test_worst_limits_both_lists(tmp_path):
    # Seven configurations, each below the library and the best other.
    runs = []
    for lts in range(1, 8):
        runs += _runs("adaptive", [lts] * 3, lts=lts) + _runs("ttas", [10] * 3, lts=lts)
        runs += _runs("library", [10] * 3, lts=lts)
    rows = rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive")
    lib_list = lambda text: [l for l in text.split("Worst ratios to library:")[1].splitlines() if l.startswith("- ")]
    assert len(lib_list(format_rank(rows, "adaptive", worst=6))) == 6
    three = format_rank(rows, "adaptive", worst=3)
    assert len(lib_list(three)) == 3 and "lts=1:" in three and "lts=4:" not in three
    assert sum(l.startswith("| hot-handover") for l in three.splitlines()) == 3


def test_cli_rank_and_missing_subject(tmp_path, capsys):
    path = write_runs(tmp_path / "r.csv", _runs("adaptive", [1, 2, 3]) + _runs("mcs", [2, 2, 2]))
    assert cli.main(["rank", str(path)]) == 0
    assert "| hot-handover boost_fiber lts=4 |" in capsys.readouterr().out
    assert cli.main(["rank", str(path), "--mutex", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nosuch" in err[0]


def test_rank_figure_has_a_panel_per_scenario_with_its_count():
    from fibersync_report.plot import rank_figure
    from fibersync_report.rank import RankRow

    def row(scenario, runtime, lts, subject, best):
        point = dict(scenario=scenario, runtime=runtime, lts=lts)
        return RankRow(point, subject, "ttas", best, None)

    rows = [
        row("hot-handover", "boost_fiber", 4, 95, 100),  # 0.95: within
        row("hot-handover", "native", 4, 50, 100),  # 0.50: not
        row("paper-coop", "os_threads", 16, 10, 10),
    ]
    fig = rank_figure(rows, "adaptive")
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert sorted(titles) == ["hot-handover (1 of 2 >= 0.9)", "paper-coop (1 of 1 >= 0.9)"]
    assert "2 of 3 at or above 0.9" in fig._suptitle.get_text()
    # A row with a resampled interval gets a bar from its low to its high end.
    from matplotlib.collections import LineCollection

    banded = RankRow(dict(scenario="paper-coop", runtime="native", lts=8), 9, "ttas", 10, None, None, (0.7, 1.05))
    fig = rank_figure(rows + [banded], "adaptive")
    bars = [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == 1
    (segment,) = bars[0].get_segments()
    assert [round(y, 6) for y in segment[:, 1]] == [0.7, 1.05]


def test_cli_rank_plot_writes_the_figure_or_nothing(tmp_path, capsys):
    from support import PNG_MAGIC

    path = write_runs(tmp_path / "r.csv", _runs("adaptive", [1, 2, 3]) + _runs("mcs", [2, 2, 2]))
    png = tmp_path / "rank.png"
    assert cli.main(["rank", str(path), "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "rank.png"]  # no staged file left
    capsys.readouterr()
    for bad, needle in ((tmp_path / "rank.pdf", "must be a .png or .svg"), (tmp_path / "no" / "r.png", "no such directory")):
        assert cli.main(["rank", str(path), "--plot", str(bad)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]
        assert not bad.exists()


def test_ignored_mutexes_are_not_the_best_other(tmp_path, capsys):
    # An A/B sweep: two copies of the subject must not be ranked against each other.
    runs = _runs("adaptive", [100, 100, 100]) + _runs("adaptive_twin", [150, 150, 150]) + _runs("ttas", [80, 80, 80])
    path = write_runs(tmp_path / "r.csv", runs)
    (row,) = rank(load_results([path]), "adaptive")
    assert row.best_other == "adaptive_twin"
    (row,) = rank(load_results([path]), "adaptive", ignore=["adaptive_twin"])
    assert row.best_other == "ttas" and abs(row.vs_best - 1.25) < 1e-9
    # A bare string is one name, not a set of characters or substrings.
    (row,) = rank(load_results([path]), "adaptive", ignore="adaptive_twin")
    assert row.best_other == "ttas"
    assert cli.main(["rank", str(path), "--ignore", "adaptive_twin, "]) == 0
    out = capsys.readouterr().out
    assert "| hot-handover boost_fiber lts=4 | 100 | ttas | 80 | 1.25 | 1.25 | n/a |" in out
    assert "left out of the comparison: adaptive_twin" in out
    # A misspelt name, the subject itself, or nothing left to compare: one error line each.
    for bad, needle in (
        (["--ignore", "adaptive_twni"], "no run has mutex adaptive_twni"),
        (["--ignore", "adaptive"], "names the ranked mutex adaptive"),
        (["--ignore", "adaptive_twin", "--ignore", "ttas"], "after --ignore adaptive_twin,ttas"),
    ):
        assert cli.main(["rank", str(path), *bad]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert captured.out == "" and len(err) == 1 and needle in err[0], err


def test_paired_ratio_compares_each_repetition_with_the_same_repetition(tmp_path):
    # A slow stretch of the machine hits repetitions 1 and 2 of adaptive but
    # only repetition 2 of ttas: the ratio of medians (52 / 104 = 0.5) blames
    # the lock, the per-repetition ratios (0.95, 0.48, 0.95) do not.
    runs = _runs("adaptive", [100, 50, 52]) + _runs("ttas", [105, 104, 55])
    # Where the repetitions do not pair (a repetition repeated), no paired ratio.
    runs += _runs("adaptive", [10, 10], lts=8) + _runs("adaptive", [10], lts=8) + _runs("ttas", [10, 10, 10], lts=8)
    path = write_runs(tmp_path / "r.csv", runs)
    rows = {r.point["lts"]: r for r in rank(load_results([path]), "adaptive")}
    four = rows[4]
    assert abs(four.vs_best - 0.5) < 1e-9
    assert abs(four.paired_vs_best - 52 / 55) < 1e-9
    assert rows[8].paired_vs_best is None
    text = format_rank(list(rows.values()), "adaptive")
    assert "within 10% of the best other fibersync mutex in 1 (50%)" in text
    assert "paired by repetition (median of per-repetition ratios to the same best other): within 10% in 1 of 1" in text
    assert "| 0.50 | 0.95 | n/a |" in text


def test_resampled_interval_separates_a_real_gap_from_noise(tmp_path):
    runs = (
        # lts=1: a clear gap, every repetition near half of ttas.
        _runs("adaptive", [50, 51, 49, 50, 52], lts=1)
        + _runs("ttas", [100, 101, 99, 100, 102], lts=1)
        # lts=2: a clear tie.
        + _runs("adaptive", [100, 101, 99, 100, 102], lts=2)
        + _runs("ttas", [100, 102, 99, 101, 100], lts=2)
        # lts=4: the median ratio is 0.85, but the repetitions scatter by 2x.
        + _runs("adaptive", [85, 60, 130, 70, 120], lts=4)
        + _runs("ttas", [100, 130, 65, 125, 75], lts=4)
        # lts=8: three repetitions are too few for an interval.
        + _runs("adaptive", [50, 50, 50], lts=8)
        + _runs("ttas", [100, 100, 100], lts=8)
    )
    rows = {r.point["lts"]: r for r in rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive")}
    low, high = rows[1].interval
    assert low <= rows[1].vs_best <= high < 0.9
    assert rows[2].interval[0] >= 0.9
    low, high = rows[4].interval
    assert low < 0.9 <= high and rows[4].vs_best < 0.9
    assert rows[8].interval is None
    text = format_rank(list(rows.values()), "adaptive")
    assert (
        "clearly at or above 0.9 in 1, clearly below in 1, undecided in 1, no interval in 1 (fewer than 5 runs "
        "of a mutex)" in text
    )
    assert "| 0.50 | 0.50 | n/a | n/a |" in text  # lts=8: no interval column value
    assert f"| {format_interval(rows[1].interval)} |" in text


def test_printed_intervals_decide_as_the_exact_ones():
    # Rounded down: an end just under 0.9 must not print as 0.90.
    assert format_interval((0.8996, 0.8999)) == "[0.89, 0.89]"
    assert format_interval((0.9, 1.2349)) == "[0.90, 1.23]"
    assert format_interval((0.5, float("inf"))) == "[0.50, inf]"


def test_resampled_interval_needs_five_runs_and_pairs_by_repetition_number():
    from fibersync_report.rank import _resampled_interval

    four = list(enumerate([100, 101, 99, 100]))
    assert _resampled_interval(four, [four]) is None
    # The same repetitions listed in another order pair the same way.
    subject = [(0, 50), (1, 100), (2, 60), (3, 90), (4, 70)]
    other = [(0, 50), (1, 100), (2, 60), (3, 90), (4, 70)]
    assert _resampled_interval(subject, [other[::-1]]) == _resampled_interval(subject, [other]) == (1.0, 1.0)


def test_resampled_interval_re_picks_the_best_and_keeps_repetitions_whole():
    from fibersync_report.rank import _resampled_interval

    reps = lambda values: list(enumerate(values))
    subject = reps([100, 100, 100, 100, 100])
    noisy = [80, 120, 90, 110, 100]
    # A second lock as good as the first on average but not in the same
    # repetitions: the best of the two medians of a resample is usually
    # above either's, so the subject's interval moves down. With the best
    # fixed, the two cases would give the same interval.
    alone = _resampled_interval(subject, [reps(noisy)])
    two = _resampled_interval(subject, [reps(noisy), reps(noisy[::-1])])
    assert two[0] <= alone[0] and two[1] < alone[1]
    # Slow repetitions of every lock (the machine) cancel when whole
    # repetitions are resampled; numbered differently, they do not.
    slow = [100, 100, 40, 100, 60]
    assert _resampled_interval(reps(slow), [reps(slow)]) == (1.0, 1.0)
    unpaired = _resampled_interval(reps(slow), [[(r + 10, v) for r, v in reps(slow)]])
    assert unpaired[0] < 1.0 < unpaired[1]


def test_recheck_plan_names_the_doubtful_configurations_and_how_to_run_them(tmp_path):
    from fibersync_report.rank import recheck_plan

    steady = [100, 101, 99, 100, 102]
    runs = (
        # lts=1: clearly within and above the library: not rechecked.
        _runs("adaptive", steady, lts=1) + _runs("ttas", steady, lts=1) + _runs("library", [90] * 5, lts=1)
        # lts=2: undecided (scattered repetitions); mcs at 0.6 of the best is
        # run again, clh at 0.4 is not.
        + _runs("adaptive", [85, 60, 130, 70, 120], lts=2)
        + _runs("ttas", [100, 130, 65, 125, 75], lts=2)
        + _runs("mcs", [60] * 5, lts=2)
        + _runs("clh", [40] * 5, lts=2)
        # lts=4: clearly within the best, but below the library.
        + _runs("adaptive", steady, lts=4) + _runs("ttas", steady, lts=4) + _runs("library", [110] * 5, lts=4)
        # lts=8: three repetitions, no interval: the ratio alone decides (0.5).
        + _runs("adaptive", [50] * 3, lts=8) + _runs("ttas", [100] * 3, lts=8)
    )
    # A swept scenario field and a virtual topology travel with the configuration.
    for run in runs:
        run.update(carriers=2, pinning="compact", topology="2x1", hold_fraction=0.9, lock_rate_per_ms=100.0)
    rows = rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive")
    entries = recheck_plan(rows, "adaptive")
    plan = {entry["bench_args"][entry["bench_args"].index("--lts") + 1]: entry for entry in entries}
    assert sorted(plan, key=int) == ["2", "4", "8"]
    assert plan["2"]["reasons"] == ["interval undecided"]
    assert plan["2"]["mutexes"] == ["adaptive", "mcs", "ttas"]
    assert plan["4"]["reasons"] == ["library ratio 0.91"]
    assert plan["4"]["mutexes"] == ["adaptive", "ttas", "library"]
    assert plan["8"]["reasons"] == ["ratio 0.50, no interval"]
    assert plan["4"]["bench_args"] == [
        "--preset", "hot-handover", "--runtime", "boost_fiber", "--lts", "4", "--carriers", "2",
        "--pinning", "compact", "--topology", "2x1", "--set", "hold_fraction=0.9", "--set", "lock_rate_per_ms=100",
        "--mutex", "adaptive,ttas,library",
    ]  # fmt: skip
    # Worst first.
    assert [e["configuration"].split("lts=")[1].split()[0] for e in entries] == ["8", "2", "4"]
    # A mutex left out of the ranking (an A/B copy) is left out of the recheck too.
    twin = rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive", ignore=["mcs"])
    (two,) = [e for e in recheck_plan(twin, "adaptive") if " lts=2 " in e["configuration"]]
    assert two["mutexes"] == ["adaptive", "ttas"]


def test_cli_rank_recheck_writes_the_plan_or_nothing(tmp_path, capsys):
    import json

    runs = _runs("adaptive", [50] * 3) + _runs("ttas", [100] * 3) + _runs("adaptive", [9] * 3, lts=8)
    runs += _runs("ttas", [9] * 3, lts=8)
    path = write_runs(tmp_path / "r.csv", runs)
    plan = tmp_path / "plan.json"
    assert cli.main(["rank", str(path), "--recheck", str(plan)]) == 0
    (entry,) = json.loads(plan.read_text())
    assert entry["configuration"] == "hot-handover boost_fiber lts=4"
    assert entry["bench_args"][-2:] == ["--mutex", "adaptive,ttas"]
    capsys.readouterr()
    assert cli.main(["rank", str(path), "--recheck", str(tmp_path / "no" / "plan.json")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == "" and len(err) == 1 and "no such directory" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json", "r.csv"]


def test_library_interval_tells_a_real_gap_from_a_tie(tmp_path):
    steady = [100, 101, 99, 100, 102]
    runs = (
        # lts=1: 3% behind the library in every repetition: clearly below.
        _runs("adaptive", [97, 98, 96, 97, 99], lts=1) + _runs("ttas", steady, lts=1)
        + _runs("library", steady, lts=1)
        # lts=2: the median 1% behind, but the library's runs scatter around
        # the lock's: undecided, a tie.
        + _runs("adaptive", [99, 100, 98, 99, 101], lts=2) + _runs("ttas", steady, lts=2)
        + _runs("library", [104, 96, 100, 93, 107], lts=2)
        # lts=4: ahead in every repetition: clearly at or above.
        + _runs("adaptive", [110, 111, 109, 110, 112], lts=4) + _runs("ttas", steady, lts=4)
        + _runs("library", steady, lts=4)
        # lts=32: ahead too, as is lts=4 (two, so that no two counts are equal).
        + _runs("adaptive", [120, 121, 119, 120, 122], lts=32) + _runs("ttas", steady, lts=32)
        + _runs("library", steady, lts=32)
        # lts=8: three runs, no interval; lts=16: no library at all.
        + _runs("adaptive", [90] * 3, lts=8) + _runs("ttas", [100] * 3, lts=8) + _runs("library", [100] * 3, lts=8)
        + _runs("adaptive", steady, lts=16) + _runs("ttas", steady, lts=16)
    )  # fmt: skip
    rows = {r.point["lts"]: r for r in rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive")}
    low, high = rows[1].library_interval
    assert low <= rows[1].vs_library <= high < 1.0
    low, high = rows[2].library_interval
    assert rows[2].vs_library < 1.0 and low < 1.0 <= high
    assert rows[4].library_interval[0] >= 1.0
    assert rows[8].library_interval is None and rows[16].library_interval is None
    text = format_rank(list(rows.values()), "adaptive")
    assert (
        "resampled 90% interval of the ratio to library: clearly at or above 1 in 2, clearly below in 1, "
        "undecided (a tie) in 1, no interval in 1" in text
    )
    below = text.split("Worst ratios to library:")[1]
    assert f"lts=1: 0.97 {format_interval(rows[1].library_interval)}, clearly below" in below
    assert f"lts=2: 0.99 {format_interval(rows[2].library_interval)}, undecided" in below
    assert "lts=8: 0.90\n" in below  # no interval: the ratio alone


def test_remeasured_rows_replace_the_sweeps(tmp_path, capsys):
    from fibersync_report.rank import replace_remeasured

    sweep = (
        _runs("adaptive", [80] * 3, lts=1) + _runs("ttas", [100] * 3, lts=1)  # 0.80 in the sweep
        + _runs("adaptive", [100] * 3, lts=2) + _runs("ttas", [100] * 3, lts=2)  # not measured again
    )  # fmt: skip
    again = (
        _runs("adaptive", [95] * 15, lts=1) + _runs("ttas", [100] * 15, lts=1)  # 0.95 measured again
        + _runs("adaptive", [50] * 5, lts=64) + _runs("ttas", [100] * 5, lts=64)  # not in the sweep
    )  # fmt: skip
    first = write_runs(tmp_path / "sweep.csv", sweep)
    second = write_runs(tmp_path / "again.csv", again)
    rows, replaced = replace_remeasured(
        rank(load_results([first]), "adaptive"), rank(load_results([second]), "adaptive")
    )
    assert replaced == 1
    by_lts = {r.point["lts"]: r.vs_best for r in rows}
    assert by_lts == {1: 0.95, 2: 1.0, 64: 0.5}

    assert cli.main(["rank", str(first), "--remeasured", str(second)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 configurations measured again (--remeasured): 1 in place of their first results, 1 not in them\n")
    assert "within 10% of the best other fibersync mutex in 2 (67%)" in out
    # Unreadable or unrankable remeasured results: one error line, exit 2.
    assert cli.main(["rank", str(first), "--remeasured", str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    only_ttas = write_runs(tmp_path / "ttas.csv", _runs("ttas", [1] * 3))
    assert cli.main(["rank", str(first), "--remeasured", str(only_ttas)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--remeasured" in err[0]


def test_line_round_trip_is_the_median_of_the_configurations_runs(tmp_path):
    # The bench times a cache line's round trip before each run; a
    # configuration measured in a slow phase shows it in the worst list.
    def timed(mutex, values, trips, lts):
        rows = _runs(mutex, values, lts=lts)
        for row, ns in zip(rows, trips):
            row["line_round_trip_ns"] = ns
        return rows

    runs = (
        timed("adaptive", [95, 95, 95], [400, 410, 60], lts=1)
        + timed("ttas", [100, 100, 100], [405, 395, 420], lts=1)
        + timed("library", [100, 100, 100], [390, 415, 58], lts=1)
        # lts=2 ran without the probe (--no-line-probe, or an older file).
        + _runs("adaptive", [99] * 3, lts=2) + _runs("ttas", [100] * 3, lts=2) + _runs("library", [100] * 3, lts=2)
    )  # fmt: skip
    rows = {r.point["lts"]: r for r in rank(load_results([write_runs(tmp_path / "r.csv", runs)]), "adaptive")}
    assert rows[1].line_round_trip_ns == 400  # the median of nine: 58 60 390 395 400 405 410 415 420
    assert rows[2].line_round_trip_ns is None
    text = format_rank(list(rows.values()), "adaptive")
    assert "line round trip between two CPUs before each run" in text and "400-400 ns" in text
    assert "in 1 of 2 configurations" in text
    below = text.split("Worst ratios to library:")[1]
    assert "lts=1: 0.95, line 400 ns\n" in below
    assert "lts=2: 0.99\n" in below
    # Without any probe there is no such line.
    plain = [r for r in runs if "line_round_trip_ns" not in r]
    plain_rows = rank(load_results([write_runs(tmp_path / "p.csv", plain)]), "adaptive")
    assert "line round trip" not in format_rank(plain_rows, "adaptive")
