"""phases: an interleaved A/B split by the cache-line round trip between cycles."""

from __future__ import annotations

import pytest

from fibersync_report import cli
from fibersync_report.load import LoadError
from fibersync_report.phases import default_thresholds, format_phases, read_probes, split
from support import harness_runs as _runs
from support import write_runs


def _cycle(directory, cycle, values, k=0, **extra):
    """One cycle's file: one repetition of each mutex (mutex -> throughput)."""
    runs = [r for mutex, v in values.items() for r in _runs(mutex, [v], **extra)]
    write_runs(directory / f"c{cycle}-{k}.csv", runs)


def _probes(directory, lines):
    (directory / "phases.tsv").write_text("".join(f"{c} {b} {a}\n" for c, b, a in lines))


def test_cycles_split_by_their_probes_and_ratios_are_paired_within_a_cycle(tmp_path):
    _probes(tmp_path, [(1, 60, 55), (2, 400, 420), (3, 58, 410), (4, 62, 57), (5, 390, 401)])
    # Fast cycles: adaptive at 1.0 and 1.1 of ttas; slow ones at 0.8 and 0.9,
    # although ttas itself runs at a third of its speed there.
    _cycle(tmp_path, 1, {"adaptive": 100, "ttas": 100})
    _cycle(tmp_path, 4, {"adaptive": 132, "ttas": 120})
    _cycle(tmp_path, 2, {"adaptive": 32, "ttas": 40})
    _cycle(tmp_path, 5, {"adaptive": 27, "ttas": 30})
    # The mixed cycle (one probe fast, one slow) is left out whatever it says.
    _cycle(tmp_path, 3, {"adaptive": 1, "ttas": 100})
    phases = split(tmp_path, "ttas")
    assert phases.cycles == {"fast": 2, "slow": 2, "mixed": 1}
    # The widest gap between the probes, 62 -> 390 ns, divides the phases.
    assert phases.fast_below == pytest.approx(62) and phases.slow_above == pytest.approx(390)
    rows = {r.phase: r for r in phases.rows}
    assert rows["fast"].cycles == 2 and rows["fast"].ratios["adaptive"] == pytest.approx(1.05)
    assert rows["slow"].ratios["adaptive"] == pytest.approx(0.85)
    assert rows["slow"].ratios["ttas"] == 1.0
    assert rows["slow"].baseline_median == pytest.approx(35)
    assert rows["slow"].round_trip_median == pytest.approx(400.5)


def test_configurations_are_kept_apart(tmp_path):
    _probes(tmp_path, [(1, 50, 50), (2, 52, 51)])
    for cycle in (1, 2):
        _cycle(tmp_path, cycle, {"adaptive": 90, "ttas": 100}, k=0, lts=4)
        _cycle(tmp_path, cycle, {"adaptive": 120, "ttas": 100}, k=1, lts=16, runtime="native")
    rows = {(r.point["runtime"], r.point["lts"]): r for r in split(tmp_path, "ttas").rows}
    assert rows[("boost_fiber", 4)].ratios["adaptive"] == pytest.approx(0.9)
    assert rows[("native", 16)].ratios["adaptive"] == pytest.approx(1.2)


def test_a_configuration_stands_on_the_probes_before_its_own_runs(tmp_path):
    # One long cycle, fast at its start and slow at its end: mixed by its own
    # probes. The bench timed the line before each run, so each configuration
    # of it is placed by those: k=0 ran in the fast phase, k=1 in the slow
    # one, k=2 across the change (left out), and k=3, a file without the
    # bench's probes, falls back to the cycle's (mixed: left out).
    _probes(tmp_path, [(1, 55, 410), (2, 400, 402)])
    _cycle(tmp_path, 1, {"adaptive": 100, "ttas": 100}, k=0, lts=1, line_round_trip_ns=56)
    _cycle(tmp_path, 1, {"adaptive": 30, "ttas": 40}, k=1, lts=2, line_round_trip_ns=405)
    write_runs(
        tmp_path / "c1-2.csv",
        _runs("adaptive", [1], lts=4, line_round_trip_ns=57) + _runs("ttas", [100], lts=4, line_round_trip_ns=399),
    )
    _cycle(tmp_path, 1, {"adaptive": 1, "ttas": 100}, k=3, lts=8)
    _cycle(tmp_path, 2, {"adaptive": 36, "ttas": 40}, k=1, lts=2, line_round_trip_ns=401)
    phases = split(tmp_path, "ttas")
    assert phases.cycles == {"fast": 0, "slow": 1, "mixed": 1}  # by the cycles' own probes
    assert phases.placed == {"fast": 1, "slow": 2, "mixed": 2}
    rows = {(r.point["lts"], r.phase): r for r in phases.rows}
    assert set(rows) == {(1, "fast"), (2, "slow")}
    assert rows[(1, "fast")].ratios["adaptive"] == pytest.approx(1.0)
    assert rows[(1, "fast")].round_trip_median == pytest.approx(56)
    assert rows[(2, "slow")].cycles == 2 and rows[(2, "slow")].ratios["adaptive"] == pytest.approx(0.825)
    assert rows[(2, "slow")].round_trip_median == pytest.approx(403)  # 405 405 401 401
    # The thresholds come from the probes of either kind: the widest gap is
    # 57 (a run's) -> 399 (a run's).
    assert phases.fast_below == pytest.approx(57) and phases.slow_above == pytest.approx(399)


def test_a_fast_phase_spread_over_a_ratio_of_two_is_one_phase(tmp_path):
    # Fast probes at 44-80 ns (around two modes) and slow ones at 320-400:
    # the widest gap, 80 -> 320, divides them. 1.5x the lowest (66 ns) would
    # have left the cycles at 70-80 ns out.
    _probes(tmp_path, [(1, 44, 46), (2, 78, 80), (3, 70, 75), (4, 320, 400), (5, 45, 72)])
    for cycle, adaptive in ((1, 100), (2, 90), (3, 110), (4, 50), (5, 120)):
        _cycle(tmp_path, cycle, {"adaptive": adaptive, "ttas": 100})
    phases = split(tmp_path, "ttas")
    assert (phases.fast_below, phases.slow_above) == (80, 320)
    assert phases.cycles == {"fast": 4, "slow": 1, "mixed": 0}
    rows = {r.phase: r for r in phases.rows}
    assert rows["fast"].cycles == 4 and rows["fast"].ratios["adaptive"] == pytest.approx(1.05)
    assert rows["slow"].ratios["adaptive"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "round_trips, expected",
    [
        ([55, 56, 57], (1.5 * 55, 3 * 55)),  # one phase: the multiples of the lowest
        ([55, 56, 150], (1.5 * 55, 3 * 55)),  # a gap, but its top below 3x the lowest
        ([55, 100, 190], (1.5 * 55, 3 * 55)),  # no gap twice as wide: 100/55, 190/100
        ([55, 60, 170, 180], (60, 170)),
        ([400], (1.5 * 400, 3 * 400)),  # a single probe
        ([55, 60, 170, 180, 9000], (60, 170)),  # one interrupted probe is no phase
        ([55, 60, 170], (1.5 * 55, 3 * 55)),  # nor is one slow probe
        # a sweep: 1000 fast, 100 slow, and three interrupted probes above
        ([50] * 500 + [60] * 500 + [350] * 100 + [14000, 590000, 10**7], (60, 350)),
    ],
)
def test_default_thresholds(round_trips, expected):
    assert default_thresholds(round_trips) == pytest.approx(expected)


def test_a_run_without_a_gap_says_its_fast_phase_is_relative(tmp_path):
    # Every probe in one phase (here the machine's slow one, 325-525 ns):
    # the cycles near the lowest probe are "fast", and the table says so.
    _probes(tmp_path, [(1, 325, 330), (2, 340, 350), (3, 500, 525)])
    for cycle in (1, 2, 3):
        _cycle(tmp_path, cycle, {"adaptive": 90, "ttas": 100})
    phases = split(tmp_path, "ttas")
    assert phases.cycles == {"fast": 2, "slow": 0, "mixed": 1}
    assert "no gap between two phases" in phases.note and "(325 ns)" in phases.note
    assert phases.note in format_phases(phases, "ttas")
    # Not where the probes show two phases, nor with thresholds given.
    _probes(tmp_path, [(1, 55, 56), (2, 340, 350), (3, 60, 58)])
    assert split(tmp_path, "ttas").note == ""
    _probes(tmp_path, [(1, 325, 330), (2, 340, 350), (3, 500, 525)])
    assert split(tmp_path, "ttas", fast_below=400, slow_above=450).note == ""
    assert split(tmp_path, "ttas", fast_below=400).note == ""
    assert split(tmp_path, "ttas", slow_above=900).note == ""


def test_explicit_thresholds(tmp_path):
    _probes(tmp_path, [(1, 60, 60), (2, 100, 100)])
    _cycle(tmp_path, 1, {"adaptive": 100, "ttas": 100})
    _cycle(tmp_path, 2, {"adaptive": 50, "ttas": 100})
    # By default 100 ns is neither (above 90, below 180): left out.
    assert split(tmp_path, "ttas").cycles == {"fast": 1, "slow": 0, "mixed": 1}
    slow = [r for r in split(tmp_path, "ttas", fast_below=70, slow_above=95).rows if r.phase == "slow"]
    assert slow and slow[0].ratios["adaptive"] == pytest.approx(0.5)
    with pytest.raises(LoadError, match="must be below"):
        split(tmp_path, "ttas", fast_below=200, slow_above=100)


def test_malformed_and_missing_inputs(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        read_probes(tmp_path / "phases.tsv")
    (tmp_path / "phases.tsv").write_text("1 60\n")
    with pytest.raises(LoadError, match=r"phases.tsv:1: expected"):
        read_probes(tmp_path / "phases.tsv")
    (tmp_path / "phases.tsv").write_text("1 60 -3\n")
    with pytest.raises(LoadError, match="expected"):
        read_probes(tmp_path / "phases.tsv")
    (tmp_path / "phases.tsv").write_text("1 60 nan\n")
    with pytest.raises(LoadError, match="expected"):
        read_probes(tmp_path / "phases.tsv")
    (tmp_path / "phases.tsv").write_text("1 60 60\n1 61 61\n")
    with pytest.raises(LoadError, match="a second time"):
        read_probes(tmp_path / "phases.tsv")
    (tmp_path / "phases.tsv").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(LoadError, match="not a text file"):
        read_probes(tmp_path / "phases.tsv")
    _probes(tmp_path, [(1, 60, 60)])
    with pytest.raises(LoadError, match="no c<cycle>"):
        split(tmp_path, "ttas")
    _cycle(tmp_path, 1, {"adaptive": 100, "mcs": 100})
    with pytest.raises(LoadError, match="baseline ttas"):
        split(tmp_path, "ttas")


def test_cli_prints_a_table_or_one_error_line(tmp_path, capsys):
    _probes(tmp_path, [(1, 60, 60), (2, 400, 400)])
    _cycle(tmp_path, 1, {"adaptive": 100, "ttas": 100})
    _cycle(tmp_path, 2, {"adaptive": 30, "ttas": 40})
    assert cli.main(["phases", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| hot-handover boost_fiber lts=4 | slow | 400 | 1 | 0.750 |" in out
    assert "1 fast" in out and "1 slow" in out
    assert cli.main(["phases", str(tmp_path / "nosuch")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such directory" in err[0]
    assert cli.main(["phases", str(tmp_path), "--baseline", "mcs"]) == 2
    assert "baseline mcs" in capsys.readouterr().err
