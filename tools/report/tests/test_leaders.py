"""leaders: per load, each mutex's geometric mean and lowest ratio to the best, on known data."""

from __future__ import annotations

import math

from fibersync_report import cli
from fibersync_report.leaders import format_leaders, leaders
from fibersync_report.load import load_results
from support import harness_runs as _runs
from support import write_runs


def _load(tmp_path, runs):
    return load_results([write_runs(tmp_path / "r.csv", runs)])


def test_geometric_mean_and_lowest_against_the_best_library_included(tmp_path):
    runs = (
        # lts 4: library best (200); adaptive 100 -> 0.5, ttas 150 -> 0.75
        _runs("adaptive", [90, 100, 500], lts=4)  # median 100 despite the outlier
        + _runs("ttas", [150, 150, 150], lts=4)
        + _runs("library", [200, 200, 200], lts=4)
        # lts 16: adaptive best (80); ttas 40 -> 0.5, library 20 -> 0.25
        + _runs("adaptive", [80, 80, 80], lts=16)
        + _runs("ttas", [40, 40, 40], lts=16)
        + _runs("library", [20, 20, 20], lts=16)
    )
    (group,) = leaders(_load(tmp_path, runs))
    assert group.configurations == 2
    adaptive, ttas, library = (group.standings[m] for m in ("adaptive", "ttas", "library"))
    assert math.isclose(adaptive.mean, math.sqrt(0.5 * 1.0)) and adaptive.lowest == 0.5
    assert math.isclose(ttas.mean, math.sqrt(0.75 * 0.5)) and ttas.lowest == 0.5
    assert math.isclose(library.mean, math.sqrt(1.0 * 0.25)) and library.lowest == 0.25
    assert group.leader == "adaptive"  # 0.71 against 0.61 and 0.5


def test_one_lt_is_left_out_unless_asked(tmp_path):
    runs = (
        _runs("adaptive", [10] * 3, lts=1)
        + _runs("ttas", [20] * 3, lts=1)  # ttas ahead at 1 LT only
        + _runs("adaptive", [20] * 3, lts=2)
        + _runs("ttas", [10] * 3, lts=2)
    )
    results = _load(tmp_path, runs)
    (default,) = leaders(results)
    assert default.configurations == 1 and default.standings["ttas"].mean == 0.5
    (everything,) = leaders(results, min_lts=1)
    assert everything.configurations == 2 and math.isclose(
        everything.standings["ttas"].mean, math.sqrt(0.5)
    )
    assert leaders(results, min_lts=3) == []


def test_a_mutex_missing_from_a_configuration_stands_nowhere_in_that_load(tmp_path):
    runs = (
        _runs("adaptive", [10] * 3, lts=2)
        + _runs("cna", [30] * 3, lts=2)  # cna only at 2 LTs
        + _runs("adaptive", [10] * 3, lts=4)
    )
    (group,) = leaders(_load(tmp_path, runs))
    assert "cna" not in group.standings
    assert group.leader == "adaptive"
    # ...but cna was the best at 2 LTs all the same.
    assert group.standings["adaptive"].lowest == 10 / 30
    text = format_leaders([group], ["adaptive", "cna"])
    assert "| hot-handover | boost_fiber | 2 | adaptive | 0.58 (0.33) | n/a |" in text


def test_loads_group_lt_counts_and_poisson_parameters_but_not_runtimes(tmp_path):
    runs = []
    for rate in (10.0, 1000.0):
        for lts in (2, 4):
            runs += _runs(
                "adaptive", [5] * 3, lts=lts, scenario="poisson-rate", lock_rate_per_ms=rate
            )
            runs += _runs("ttas", [4] * 3, lts=lts, scenario="poisson-rate", lock_rate_per_ms=rate)
    runs += _runs(
        "adaptive", [1] * 3, runtime="os_threads", scenario="poisson-rate", lock_rate_per_ms=10.0
    )
    groups = leaders(_load(tmp_path, runs))
    assert [(g.label["runtime"], g.configurations) for g in groups] == [
        ("boost_fiber", 4),
        ("os_threads", 1),
    ]
    assert math.isclose(groups[0].standings["ttas"].mean, 0.8)


def test_ignore_takes_a_mutex_out_of_the_best_too(tmp_path):
    runs = _runs("adaptive", [10] * 3) + _runs("adaptive_old", [20] * 3) + _runs("ttas", [5] * 3)
    results = _load(tmp_path, runs)
    (with_copy,) = leaders(results)
    assert with_copy.standings["adaptive"].mean == 0.5 and with_copy.leader == "adaptive_old"
    (without,) = leaders(results, ignore=["adaptive_old"])
    assert "adaptive_old" not in without.standings
    assert without.standings["adaptive"].mean == 1.0 and without.standings["ttas"].mean == 0.5


def test_settings_get_a_column_only_where_they_differ(tmp_path):
    same = _runs("adaptive", [1] * 3, carriers=2) + _runs(
        "adaptive", [1] * 3, runtime="native", carriers=2
    )
    text = format_leaders(leaders(_load(tmp_path, same)), ["adaptive"])
    assert "Every load: carriers=2." in text and "| setting |" not in text
    mixed = same + _runs("adaptive", [1] * 3, carriers=1)
    text = format_leaders(
        leaders(load_results([write_runs(tmp_path / "m.csv", mixed)])), ["adaptive"]
    )
    assert "| setting |" in text and "| carriers=1 |" in text


def test_cli_leaders_table_and_errors(tmp_path, capsys):
    path = write_runs(tmp_path / "r.csv", _runs("adaptive", [1, 2, 3]) + _runs("mcs", [2, 2, 2]))
    assert cli.main(["leaders", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| load | runtime | configurations | leader | adaptive | mcs |" in out
    assert "| hot-handover | boost_fiber | 1 | adaptive | 1.00 (1.00) | 1.00 (1.00) |" in out

    assert cli.main(["leaders", str(path), "--mutexes", "mcs", "--mutexes", "adaptive"]) == 0
    assert "| leader | mcs | adaptive |" in capsys.readouterr().out

    for argv, message in [
        (["leaders", str(path), "--mutexes", "adaptive,nope"], "--mutexes: no load has mutex nope"),
        (["leaders", str(path), "--ignore", "nope"], "--ignore: no run has mutex nope"),
        (["leaders", str(path), "--min-lts", "8"], "no configuration with 8 or more LTs"),
        (["leaders", str(tmp_path / "missing.csv")], "missing.csv"),
    ]:
        assert cli.main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert len(captured.err.strip().splitlines()) == 1 and message in captured.err


def test_the_leader_has_the_highest_mean_not_the_highest_lowest(tmp_path):
    runs = (
        # steady: 0.8 and 0.8; swinging: 1.0 and 0.7 -> mean 0.84 but lowest 0.7
        _runs("steady", [80] * 3, lts=2)
        + _runs("swinging", [100] * 3, lts=2)
        + _runs("steady", [80] * 3, lts=4)
        + _runs("swinging", [70] * 3, lts=4)
        + _runs("top", [100] * 3, lts=4)
    )
    (group,) = leaders(_load(tmp_path, runs))
    assert "top" not in group.standings  # not at 2 LTs
    assert group.standings["steady"].lowest > group.standings["swinging"].lowest
    assert group.leader == "swinging"


def test_a_tie_goes_to_the_first_name_whatever_the_input_order(tmp_path):
    runs = _runs("zz", [5] * 3) + _runs("aa", [5] * 3)
    (group,) = leaders(_load(tmp_path, runs))
    assert group.leader == "aa"


def test_topology_and_pinning_separate_loads_and_numbers_sort_as_numbers(tmp_path):
    runs = (
        _runs("adaptive", [1] * 3, carriers=10)
        + _runs("adaptive", [1] * 3, carriers=2)
        + _runs("adaptive", [1] * 3, carriers=2, topology="2x1", pinning="compact")
        + _runs("adaptive", [1] * 3, carriers=2, topology="machine", pinning="none")
    )
    groups = leaders(_load(tmp_path, runs))
    labels = [(g.label["carriers"], g.label["topology"], g.label["pinning"]) for g in groups]
    # machine/none is the unset setting: one load with the plain carriers=2 runs.
    assert labels == [(2, None, None), (2, "2x1", "compact"), (10, None, None)]
    # (two configurations in it, as rank counts them: the keys differ)
    assert groups[0].configurations == 2
    assert format_leaders([], ["adaptive"]).count("\n") == 4  # no groups: just the head


def test_a_configuration_without_a_positive_best_counts_nowhere(tmp_path):
    runs = _runs("adaptive", [0] * 3, lts=2) + _runs("ttas", [0] * 3, lts=2)
    runs += _runs("adaptive", [4] * 3, lts=4) + _runs("ttas", [2] * 3, lts=4)
    (group,) = leaders(_load(tmp_path, runs))
    assert group.configurations == 1 and group.standings["ttas"].mean == 0.5
    path = write_runs(tmp_path / "zero.csv", _runs("adaptive", [0] * 3))
    assert cli.main(["leaders", str(path)]) == 2


def test_cli_refuses_what_it_cannot_answer(tmp_path, capsys):
    path = write_runs(tmp_path / "r.csv", _runs("adaptive", [1] * 3) + _runs("mcs", [2] * 3))
    java = write_runs(
        tmp_path / "java.csv",
        [dict(benchmark="HighContention", lock="NumaMcsLock", threads=4, score=1.0, unit="ops/ms")],
    )
    for argv, message in [
        (["leaders", str(path), "--mutexes", "mcs", "--ignore", "mcs"], "--ignore leaves out: mcs"),
        (["leaders", str(path), "--ignore", "adaptive,mcs"], "after --ignore adaptive,mcs"),
    ]:
        assert cli.main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
        assert message in captured.err
    assert cli.main(["leaders", str(path), "--mutexes", "mcs,adaptive,mcs"]) == 0
    assert "| leader | mcs | adaptive |\n" in capsys.readouterr().out
    code = cli.main(["leaders", str(java)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and len(captured.err.strip().splitlines()) == 1
