"""compare: verdicts on synthetic data with known differences, table, CSV, geomean."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from fibersync_report import cli
from fibersync_report.compare import compare, format_table, p_value, verdict
from fibersync_report.load import load_results
from support import harness_runs, write_runs

rng = np.random.default_rng(7)


def runs(mutex, values, lts=4, scenario="high-contention", runtime="os_threads", **extra):
    return harness_runs(
        mutex, [float(v) for v in values], lts=lts, scenario=scenario, runtime=runtime, **extra
    )


@pytest.fixture()
def pair(tmp_path):
    base = rng.normal(1000.0, 15.0, size=5)
    same = [101.0, 99.0, 100.0, 102.0, 98.0]
    a = (
        runs("mcs", base)
        + runs("ttas", same)
        + runs("clh", [50, 51, 49]) * 1
        + runs("ticket", [10.0, 10.1])
        + runs("cna", [500, 505, 495, 502, 498])
        + runs("hmcs", [200.0, 201, 199, 202, 198])
        + runs("only_a", [1, 2, 3])
    )
    b = (
        runs("mcs", 2 * base + rng.normal(0, 15.0, size=5))  # a clear 2x speed-up
        + runs("ttas", same)  # identical distribution
        + runs("clh", [25, 26, 24])  # half speed, but only 3 repetitions: p >= 0.1
        + runs("ticket", [20.0, 20.2])  # 2x, but too few repetitions
        + runs("cna", [250, 252, 248, 251, 249])  # clearly slower
        + runs("hmcs", [201.5, 202.5, 200.5, 203.5, 199.9])  # +0.75 %: below the 2 % threshold
        + runs("only_b", [1, 2, 3])
    )
    return write_runs(tmp_path / "a.csv", a), write_runs(tmp_path / "b.csv", b)


def by_mutex(cmp):
    return {r.config["mutex"]: r for r in cmp.rows}


def test_verdicts(pair):
    cmp = compare(load_results([pair[0]]), load_results([pair[1]]))
    rows = by_mutex(cmp)
    assert rows["mcs"].verdict == "faster"
    assert rows["mcs"].ratio == pytest.approx(2.0, rel=0.05)
    assert rows["mcs"].p_value < 0.05
    assert rows["ttas"].verdict == "inconclusive" and rows["ttas"].p_value == pytest.approx(1.0)
    assert rows["clh"].verdict == "inconclusive" and rows["clh"].ratio == pytest.approx(0.5)
    assert rows["ticket"].verdict == "inconclusive"  # 2 repetitions each
    assert rows["cna"].verdict == "slower" and rows["cna"].ratio == pytest.approx(0.5, rel=0.02)
    assert rows["hmcs"].verdict == "inconclusive"
    assert cmp.only_baseline == 1 and cmp.only_contender == 1
    assert set(rows) == {"mcs", "ttas", "clh", "ticket", "cna", "hmcs"}


def test_geomean_of_ratios(tmp_path):
    a = runs("mcs", [100.0] * 5) + runs("ttas", [100.0] * 5) + runs("clh", [100.0] * 5)
    b = runs("mcs", [200.0] * 5) + runs("ttas", [50.0] * 5) + runs("clh", [800.0] * 5)
    cmp = compare(
        load_results([write_runs(tmp_path / "a.csv", a)]),
        load_results([write_runs(tmp_path / "b.csv", b)]),
    )
    assert cmp.geomean == pytest.approx(2.0)  # (2 * 0.5 * 8) ** (1/3)


def test_times_are_lower_is_better(tmp_path):
    def gauss(times):
        return [
            dict(
                scenario="gauss",
                runtime="native",
                arch="A2",
                distribution="block",
                lts=512,
                matrix_n=2048,
                repetition=i,
                total_ms=t,
            )
            for i, t in enumerate(times)
        ]

    cmp = compare(
        load_results([write_runs(tmp_path / "a.csv", gauss([100, 101, 99, 100.5, 99.5]))]),
        load_results([write_runs(tmp_path / "b.csv", gauss([50, 50.5, 49.5, 50.2, 49.8]))]),
    )
    (row,) = cmp.rows
    assert row.metric == "total_ms" and row.ratio == pytest.approx(0.5, rel=0.01)
    assert row.verdict == "faster" and cmp.geomean == pytest.approx(2.0, rel=0.01)


def test_rules():
    assert verdict(1.5, 0.01, 5, 5) == "faster"
    assert verdict(0.7, 0.01, 5, 5) == "slower"
    assert verdict(1.5, 0.06, 5, 5) == "inconclusive"
    assert verdict(1.01, 0.001, 5, 5) == "inconclusive"
    assert verdict(2.0, 0.001, 2, 5) == "inconclusive"
    assert verdict(0.5, 0.01, 5, 5, higher_is_better=False) == "faster"
    assert p_value([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]) == 1.0
    assert p_value([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)  # exact test
    assert p_value([], [1.0]) is None


def test_text_table_is_aligned(pair):
    cmp = compare(load_results([pair[0]]), load_results([pair[1]]), "A.csv", "B.csv")
    text = format_table(cmp)
    lines = text.splitlines()
    assert lines[0] == "Comparing A.csv (baseline) vs B.csv (contender)"
    header = lines[1]
    assert header.split() == [
        "Benchmark",
        "Metric",
        "Reps",
        "Baseline",
        "Contender",
        "Ratio",
        "p-value",
        "Verdict",
    ]
    rows = [ln for ln in lines if ln.startswith("high-contention/")]
    assert len(rows) == 6
    assert "high-contention/os_threads/mcs/lts:4" in text
    ratio_end = header.index("Ratio") + len("Ratio")
    verdict_at = header.index("Verdict")
    for ln in rows:
        assert ln[ratio_end - 1] != " " and ln[ratio_end] == " "  # right-aligned ratios
        assert ln[verdict_at:].strip() in ("faster", "slower", "inconclusive")
    assert any(ln.startswith("OVERALL_GEOMEAN") for ln in lines)


def test_cli_compare_with_csv(pair, tmp_path, capsys):
    out = tmp_path / "cmp.csv"
    assert cli.main(["compare", str(pair[0]), str(pair[1]), "--csv", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "(baseline) vs" in stdout and "faster" in stdout
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    verdicts = {r["mutex"]: r["verdict"] for r in rows if r["benchmark"] != "OVERALL_GEOMEAN"}
    assert verdicts["mcs"] == "faster" and verdicts["ttas"] == "inconclusive"
    assert verdicts["cna"] == "slower"
    geo = [r for r in rows if r["benchmark"] == "OVERALL_GEOMEAN"]
    assert len(geo) == 1 and math.isfinite(float(geo[0]["ratio"]))


def test_cli_compare_java_and_directories(tmp_path, capsys):
    from support import RESULTS

    assert cli.main(["compare", str(RESULTS), str(RESULTS)]) == 0
    out = capsys.readouterr().out
    assert "java/high-contention/NumaMcsLock/threads:8" in out
    assert "OVERALL_GEOMEAN" in out and " 1.000" in out
    assert "0 faster, 0 slower" in out  # a run compared with itself
