"""Summary tables on data with known answers."""

from __future__ import annotations

import pytest

from fibersync_report import tables
from fibersync_report.html import render_table
from fibersync_report.load import load_file
from support import DATA


@pytest.fixture(scope="module")
def known():
    return tables.best_mutex_summary(load_file(DATA / "known.csv").runs)


def test_best_mutex_and_ratio_to_library(known):
    got = [
        (
            r.config["runtime"],
            r.config["lts"],
            r.best_mutex,
            r.best_median,
            r.ratio,
            r.bound_fraction,
            r.candidates,
        )
        for r in known
    ]
    assert got == [
        # medians: library 100, mcs 150, ttas 120; bound_fraction of mcs: median 0.6
        ("os_threads", 4, "mcs", 150.0, pytest.approx(1.5), pytest.approx(0.6), 3),
        # library 80, ttas 90, mcs 70; no bound_fraction column values
        ("os_threads", 8, "ttas", 90.0, pytest.approx(1.125), None, 3),
        # the runtime's own mutex wins: ratio 1
        ("boost_fiber", 4, "library", 200.0, pytest.approx(1.0), None, 2),
    ]
    assert all(r.scenario == "high-contention" for r in known)


def test_rendered_table(known):
    table = tables.best_mutex_table(known)
    assert table.columns[:2] == ["runtime", "LTs"]
    assert table.rows[0] == ["os_threads", "4", "mcs", "150", "1.50", "0.60"]
    assert table.rows[1] == ["os_threads", "8", "ttas", "90.0", "1.12", "—"]
    html = render_table(table, highlight_col="best mutex")
    assert html.count("<tr>") == 1 + len(known)
    assert '<td class="best">mcs</td>' in html


def test_missing_baseline_gives_no_ratio():
    runs = [
        {"scenario": "default", "runtime": "native", "mutex": m, "lts": 2, "throughput_per_ms": v}
        for m, v in (("mcs", 5.0), ("ttas", 7.0))
    ]
    (row,) = tables.best_mutex_summary(runs)
    assert row.best_mutex == "ttas" and row.ratio is None and row.baseline_median is None


def test_fixture_summary_covers_every_mutex_scenario(results):
    rows = tables.best_mutex_summary(results.runs)
    assert {r.scenario for r in rows} == {
        "paper-coop",
        "high-contention",
        "poisson-hold",
        "poisson-rate",
    }
    paper = [r for r in rows if r.scenario == "paper-coop"]
    assert len(paper) == 3 * 7  # one row per runtime and LT count
    hc = [r for r in rows if r.scenario == "high-contention"]
    assert all(r.bound_fraction is not None and 0 < r.bound_fraction < 1 for r in hc)


def test_gauss_speedups():
    runs = []
    for arch, back, fwd in (("A0", 400.0, 100.0), ("A1", 320.0, 100.0), ("A2", 100.0, 50.0)):
        for rep, jitter in enumerate((0.0, 1.0, -1.0)):
            runs.append(
                {
                    "scenario": "gauss",
                    "runtime": "native",
                    "arch": arch,
                    "distribution": "block",
                    "lts": 64,
                    "matrix_n": 512,
                    "repetition": rep,
                    "forward_ms": fwd + jitter,
                    "back_ms": back + jitter,
                    "total_ms": fwd + back + 2 * jitter,
                }
            )
    (row,) = tables.gauss_summary(runs)
    assert row.speedups[("A1", "A0", "back_ms")] == pytest.approx(1.25)
    assert row.speedups[("A2", "A0", "back_ms")] == pytest.approx(4.0)
    assert row.speedups[("A2", "A1", "back_ms")] == pytest.approx(3.2)
    assert row.speedups[("A2", "A0", "forward_ms")] == pytest.approx(2.0)
    assert row.speedups[("A2", "A0", "total_ms")] == pytest.approx(500 / 150)
    table = tables.gauss_table([row])
    assert "back A2/A0" in table.columns and "4.00" in table.rows[0]


def test_java_best_lock_respects_the_unit():
    rows = [
        {"bench": "b", "mode": m, "unit": u, "threads": 4, "lock": lock, "score": s}
        for m, u in (("thrpt", "ops/ms"), ("avgt", "ms/op"))
        for lock, s in (("NumaMcsLock", 120.0), ("ReentrantLockUnfair", 100.0), ("TtasLock", 50.0))
    ]
    thrpt, avgt = sorted(tables.java_summary(rows), key=lambda r: r.mode != "thrpt")
    assert (thrpt.best_lock, thrpt.speedup) == ("NumaMcsLock", pytest.approx(1.2))
    assert (avgt.best_lock, avgt.speedup) == (
        "TtasLock",
        pytest.approx(2.0),
    )  # 100 ms/op -> 50 ms/op
