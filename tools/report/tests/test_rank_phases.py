"""rank --by-phase: ratios made from the runs of one phase of the machine alone."""

from __future__ import annotations

import pytest

from fibersync_report import cli
from fibersync_report.load import LoadError, load_results
from fibersync_report.rank import rank, rank_by_phase
from support import harness_runs as _runs
from support import write_runs

FAST, SLOW = 60, 400  # ns: the two phases of our EPYC VM, roughly


def _timed(mutex, values, trips, lts=4, **extra):
    """Runs of `mutex`, each with the line round trip the bench timed before it."""
    rows = _runs(mutex, values, lts=lts, **extra)
    for row, ns in zip(rows, trips, strict=True):
        row["line_round_trip_ns"] = ns
    return rows


def _section(out: str) -> str:
    assert out.count("## By the machine's phase") == 1
    return out.split("## By the machine's phase")[1]


def _remeasured_section(tmp_path, capsys, sweep, again) -> str:
    """The by-phase section of `rank` over the runs `sweep`, with the
    configurations of `again` measured again (--remeasured)."""
    first = write_runs(tmp_path / "sweep.csv", sweep)
    second = write_runs(tmp_path / "again.csv", again)
    assert cli.main(["rank", str(first), "--by-phase", "--remeasured", str(second)]) == 0
    return _section(capsys.readouterr().out)


def _list(section: str, heading: str) -> list[str]:
    """The '- ' lines under the line starting with `heading`."""
    block = section.split(heading)[1].split("\n\n", 2)
    return [line for line in "\n".join(block[1:2]).splitlines() if line.startswith("- ")]


def _by_phase_runs():
    return (
        # lts=1: adaptive's runs fell mostly in the slow phase, the library's
        # in the fast one. Over all runs adaptive is at 0.32 of the library;
        # phase by phase it is at 1.02 (fast) and 1.03 (slow).
        _timed("adaptive", [30, 31, 102], [SLOW, SLOW, FAST], lts=1)
        + _timed("ttas", [100, 32, 30], [FAST, SLOW, SLOW], lts=1)
        + _timed("library", [100, 98, 30], [FAST, FAST, SLOW], lts=1)
        # lts=2: below the library in both phases (0.90 and 0.93), and
        # below 0.9 of the best other in both (0.80 of ttas, 0.85 of mcs).
        + _timed("adaptive", [80, 80, 28, 28], [FAST, FAST, SLOW, SLOW], lts=2)
        + _timed("ttas", [100, 100, 30, 30], [FAST, FAST, SLOW, SLOW], lts=2)
        + _timed("mcs", [50, 50, 33, 33], [FAST, FAST, SLOW, SLOW], lts=2)
        + _timed("library", [89, 89, 30, 30], [FAST, FAST, SLOW, SLOW], lts=2)
        # lts=4: measured in the fast phase only: left out of the slow one.
        + _timed("adaptive", [95, 96], [FAST, FAST], lts=4)
        + _timed("ttas", [100, 100], [FAST, FAST], lts=4)
        + _timed("library", [90, 90], [FAST, FAST], lts=4)
    )


def test_a_gap_that_is_the_phases_is_not_the_locks(tmp_path, capsys):
    path = write_runs(tmp_path / "r.csv", _by_phase_runs())
    rows = rank(load_results([path]), "adaptive")
    by_lts = {r.point["lts"]: r for r in rows}
    assert by_lts[1].vs_library < 0.5  # the unfair comparison over all runs

    split = rank_by_phase(load_results([path]).runs, rows, "adaptive")
    assert (split.fast_below, split.slow_above) == (FAST, SLOW)
    cells = {(r.row.point["lts"], phase): c for r in split.rows for phase, c in r.cells.items()}
    assert cells[(1, "fast")].vs_library == pytest.approx(102 / 99)
    assert cells[(1, "slow")].vs_library == pytest.approx(30.5 / 30)
    assert cells[(1, "slow")].best_other == "ttas" and cells[(1, "slow")].vs_best == pytest.approx(30.5 / 31)
    # The best other is picked within each phase: ttas when fast, mcs when slow.
    assert cells[(2, "fast")].best_other == "ttas" and cells[(2, "fast")].vs_best == pytest.approx(0.8)
    assert cells[(2, "slow")].best_other == "mcs" and cells[(2, "slow")].vs_best == pytest.approx(28 / 33)
    assert (4, "slow") not in cells

    assert cli.main(["rank", str(path), "--by-phase"]) == 0
    section = _section(capsys.readouterr().out)
    assert "fast at most 60 ns, slow at least 400 ns (thresholds from the 31 probes of the inputs)" in section
    assert "The ranked configurations' runs: 18 fast, 13 slow, 0 unplaced" in section
    assert "| fast | 3 | 2 of 3 | 2 of 3 | 0, 0 |" in section
    assert "| slow | 2 | 1 of 2 | 1 of 2 | 1, 1 |" in section
    assert "at or above it in at least one in 2 of 3 configurations, below it in every one in 1:" in section
    below_library = _list(section, "adaptive against the library")
    assert below_library == ["- hot-handover boost_fiber lts=2: fast 0.90, slow 0.93 (all runs 0.91)"]
    below_best = _list(section, "Below 0.9 of the best other")
    assert below_best == ["- hot-handover boost_fiber lts=2: fast 0.80 (ttas), slow 0.85 (mcs) (all runs 0.83)"]
    assert "in every phase where adaptive and another ran: 1 of 3 configurations:" in section


def test_a_configuration_missing_from_a_phase_is_left_out_and_counted(tmp_path, capsys):
    runs = (
        # lts=1: fast only, below the library: listed on its one phase.
        _timed("adaptive", [90] * 3, [FAST] * 3, lts=1)
        + _timed("ttas", [90] * 3, [FAST] * 3, lts=1)
        + _timed("library", [100] * 3, [FAST] * 3, lts=1)
        # lts=2: the library ran only in the fast phase, adaptive and ttas
        # in both: no ratio to the library when slow, one to the best.
        + _timed("adaptive", [100, 30], [FAST, SLOW], lts=2)
        + _timed("ttas", [100, 30], [FAST, SLOW], lts=2)
        + _timed("library", [100, 100], [FAST, FAST], lts=2)
        # lts=8: adaptive's runs have no probe (an older bench): no cell at all.
        + _runs("adaptive", [50] * 2, lts=8)
        + _timed("ttas", [100, 30], [FAST, SLOW], lts=8)
        + _timed("library", [100, 30], [FAST, SLOW], lts=8)
    )
    path = write_runs(tmp_path / "r.csv", runs)
    assert cli.main(["rank", str(path), "--by-phase"]) == 0
    section = _section(capsys.readouterr().out)
    assert "The ranked configurations' runs: 15 fast, 4 slow, 2 unplaced" in section
    assert "| fast | 2 | 2 of 2 | 1 of 2 | 1, 1 |" in section
    assert "| slow | 1 | 1 of 1 | 0 of 0 | 2, 3 |" in section
    assert _list(section, "adaptive against the library") == [
        "- hot-handover boost_fiber lts=1: fast 0.90, slow n/a (all runs 0.90)"
    ]
    # Only two configurations had adaptive and the library in a common phase.
    assert "at or above it in at least one in 1 of 2 configurations, below it in every one in 1:" in section
    assert "in every phase where adaptive and another ran: 0 of 2 configurations." in section


def test_explicit_thresholds_replace_the_gap(tmp_path, capsys):
    # Probes at 60 and 100 ns: no gap between two phases, so 90 and 180 ns
    # (1.5x and 3x the lowest) and the 100 ns runs are unplaced.
    runs = (
        _timed("adaptive", [100, 50], [60, 100]) + _timed("ttas", [100, 100], [60, 100])
        + _timed("library", [100, 100], [60, 100])
    )  # fmt: skip
    path = write_runs(tmp_path / "r.csv", runs)
    assert cli.main(["rank", str(path), "--by-phase"]) == 0
    section = _section(capsys.readouterr().out)
    assert "fast at most 90 ns, slow at least 180 ns" in section and "3 fast, 0 slow, 3 unplaced" in section
    assert "| slow | 0 | 0 of 0 | 0 of 0 | 1, 1 |" in section
    # The section says that its "fast" is relative to these probes alone.
    assert "The probes show no gap between two phases" in section and "lowest probe (60 ns)" in section
    assert cli.main(["rank", str(path), "--by-phase", "--fast-below", "70", "--slow-above", "95"]) == 0
    section = _section(capsys.readouterr().out)
    assert "fast at most 70 ns, slow at least 95 ns (thresholds given)" in section
    assert "no gap" not in section
    assert "3 fast, 3 slow, 0 unplaced" in section
    assert "| slow | 1 | 0 of 1 | 0 of 1 | 0, 0 |" in section
    assert "at or above it in at least one in 1 of 1 configurations, below it in every one in 0." in section
    # One threshold given, the other derived.
    assert cli.main(["rank", str(path), "--by-phase", "--slow-above", "95"]) == 0
    section = _section(capsys.readouterr().out)
    assert "slow at least 95 ns (slow threshold given, fast from the 6 probes of the inputs)" in section
    assert "3 fast, 3 slow, 0 unplaced" in section
    assert "no gap" not in section  # the note is for two derived thresholds only


def test_bad_thresholds_and_missing_probes_are_one_error_line(tmp_path, capsys):
    timed = write_runs(tmp_path / "timed.csv", _timed("adaptive", [90], [FAST]) + _timed("ttas", [100], [FAST]))
    plain = write_runs(tmp_path / "plain.csv", _runs("adaptive", [90, 90]) + _runs("ttas", [100, 100]))
    figure, plan = tmp_path / "rank.png", tmp_path / "plan.json"
    for argv, needle in (
        ([str(plain), "--by-phase"], "--by-phase: no run has line_round_trip_ns"),
        ([str(timed), "--fast-below", "70"], "need --by-phase"),
        ([str(timed), "--slow-above", "500"], "need --by-phase"),
        ([str(timed), "--by-phase", "--fast-below", "300", "--slow-above", "200"], "must be below"),
        (
            [str(timed), "--by-phase", "--slow-above", "50"],
            "--by-phase: the fast threshold (90 ns) must be below the slow one (50 ns)",
        ),
    ):
        assert cli.main(["rank", *argv, "--plot", str(figure), "--recheck", str(plan)]) == 2, argv
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert captured.out == "" and len(err) == 1 and needle in err[0], (argv, err)
        assert not figure.exists() and not plan.exists()  # nothing written, not even the other outputs
    # Probes only in the results measured again are probes of the inputs.
    again = write_runs(
        tmp_path / "again.csv", _timed("adaptive", [90], [FAST], lts=8) + _timed("ttas", [100], [FAST], lts=8)
    )
    assert cli.main(["rank", str(plain), "--by-phase", "--remeasured", str(again)]) == 0
    assert "| fast | 1 | 1 of 1 |" in capsys.readouterr().out
    # A threshold that is not a positive number is a usage error.
    for bad in ("0", "-60", "nan", "fast"):
        with pytest.raises(SystemExit) as info:
            cli.main(["rank", str(timed), "--by-phase", "--fast-below", bad])
        assert info.value.code == 2
        assert "--fast-below" in capsys.readouterr().err


def test_rank_by_phase_needs_a_probe():
    with pytest.raises(LoadError, match="no run has line_round_trip_ns"):
        rank_by_phase(_runs("adaptive", [1]), [], "adaptive", fast_below=70, slow_above=300)


def test_without_the_flag_the_output_is_the_ranking_alone(tmp_path, capsys):
    path = write_runs(tmp_path / "r.csv", _by_phase_runs())
    assert cli.main(["rank", str(path)]) == 0
    plain = capsys.readouterr().out
    assert "machine's phase" not in plain
    assert cli.main(["rank", str(path), "--by-phase"]) == 0
    split = capsys.readouterr().out
    # The section follows the ranking as it was, after one blank line.
    assert split.startswith(plain + "\n## By the machine's phase\n")


def test_remeasured_runs_replace_the_sweeps_phase_by_phase(tmp_path, capsys):
    sweep = (
        # lts=1: below the library in both phases in the sweep...
        _timed("adaptive", [80, 25], [FAST, SLOW], lts=1) + _timed("ttas", [80, 25], [FAST, SLOW], lts=1)
        + _timed("library", [100, 30], [FAST, SLOW], lts=1)
        # lts=2: below in both, and not measured again.
        + _timed("adaptive", [80, 25], [FAST, SLOW], lts=2) + _timed("ttas", [80, 25], [FAST, SLOW], lts=2)
        + _timed("library", [100, 30], [FAST, SLOW], lts=2)
        # lts=4: below in both; measured again without adaptive, so its
        # second measurement ranks nothing and the sweep's runs stay.
        + _timed("adaptive", [80, 25], [FAST, SLOW], lts=4) + _timed("ttas", [80, 25], [FAST, SLOW], lts=4)
        + _timed("library", [100, 30], [FAST, SLOW], lts=4)
    )  # fmt: skip
    again = (
        # ...and at or above it in both when measured again.
        _timed("adaptive", [100, 100, 31, 31], [FAST, FAST, SLOW, SLOW], lts=1)
        + _timed("ttas", [100, 100, 30, 30], [FAST, FAST, SLOW, SLOW], lts=1)
        + _timed("library", [99, 99, 30, 30], [FAST, FAST, SLOW, SLOW], lts=1)
        + _timed("ttas", [1000, 10], [FAST, SLOW], lts=4) + _timed("library", [1000, 10], [FAST, SLOW], lts=4)
        # lts=64: only measured again, slow only.
        + _timed("adaptive", [20], [SLOW], lts=64) + _timed("ttas", [30], [SLOW], lts=64)
        + _timed("library", [30], [SLOW], lts=64)
    )
    section = _remeasured_section(tmp_path, capsys, sweep, again)
    # 18 runs of the sweep less lts=1's 6, and the 12 + 3 of lts=1 and lts=64 again.
    assert "The ranked configurations' runs: 12 fast, 15 slow, 0 unplaced" in section
    assert "| fast | 3 | 3 of 3 | 1 of 3 | 1, 1 |" in section
    assert _list(section, "adaptive against the library") == [
        "- hot-handover boost_fiber lts=64: fast n/a, slow 0.67 (all runs 0.67)",
        "- hot-handover boost_fiber lts=2: fast 0.80, slow 0.83 (all runs 0.81)",
        "- hot-handover boost_fiber lts=4: fast 0.80, slow 0.83 (all runs 0.81)",
    ]


def test_ignored_mutexes_are_nobodys_best_in_a_phase_either(tmp_path, capsys):
    runs = (
        _timed("adaptive", [100, 30], [FAST, SLOW]) + _timed("adaptive_twin", [200, 60], [FAST, SLOW])
        + _timed("ttas", [100, 30], [FAST, SLOW])
    )  # fmt: skip
    path = write_runs(tmp_path / "r.csv", runs)
    assert cli.main(["rank", str(path), "--by-phase", "--worst", "0"]) == 0
    section = _section(capsys.readouterr().out)
    assert _list(section, "Below 0.9 of the best other") == ["- and 1 more (--worst 0)"]
    assert "The ranked configurations' runs: 3 fast, 3 slow" in section
    assert cli.main(["rank", str(path), "--by-phase", "--ignore", "adaptive_twin"]) == 0
    section = _section(capsys.readouterr().out)
    assert "The ranked configurations' runs: 2 fast, 2 slow" in section
    assert "| fast | 1 | 1 of 1 | 0 of 0 | 0, 0 |" in section
    assert "in every phase where adaptive and another ran: 0 of 1 configurations." in section


def test_thresholds_stand_on_every_probe_of_the_inputs(tmp_path, capsys):
    # The sweep's slow runs of lts=1 are replaced by the runs measured again,
    # but their probes still show where the slow phase is: with them the
    # widest gap is 100 -> 400 ns and the 100 ns runs are fast; the probes of
    # the runs ranked alone (60, 100) would have left those unplaced.
    sweep = _timed("adaptive", [50], [SLOW], lts=1) + _timed("ttas", [100], [SLOW], lts=1)
    again = _timed("adaptive", [100, 90], [60, 100], lts=1) + _timed("ttas", [100, 100], [60, 100], lts=1)
    section = _remeasured_section(tmp_path, capsys, sweep, again)
    assert "fast at most 100 ns, slow at least 400 ns (thresholds from the 6 probes of the inputs)" in section
    assert "The ranked configurations' runs: 4 fast, 0 slow, 0 unplaced" in section
    assert "| fast | 1 | 1 of 1 | 0 of 0 | 0, 0 |" in section
