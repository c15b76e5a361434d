"""Reading result files: kinds by header, typing, tolerance, CSV/JSON twins."""

from __future__ import annotations

import json
import shutil

import pytest

from fibersync_report.load import (
    CONFIG_KEYS,
    LoadError,
    config_key,
    is_gauss,
    load_file,
    load_results,
)
from support import DATA, RESULTS


def test_directory_loads_every_kind(results):
    scen = {}
    for r in results.runs:
        scen[r["scenario"]] = scen.get(r["scenario"], 0) + 1
    assert scen == {
        "paper-coop": 3 * 5 * 7 * 5,  # 3 runtimes, 5 mutexes, lts 1..64, 5 repetitions
        "high-contention": 2 * 5 * 7 * 5,
        "poisson-hold": 3 * 11 * 3 * 5,  # 3 mutexes, hold 0..1 by 0.1, 1/2/4 threads
        "poisson-rate": 3 * 5 * 3 * 5,
        "gauss": 3 * 2 * 5 * 5,  # A0/A1/A2, block/cyclic, 5 thread counts
    }
    assert len(results.java) == 3 * 6 * 7
    assert {p.name for p, _ in results.contexts} == {"paper.json", "gauss.json"}
    assert results.contexts[0][1]["cpu_model"].startswith("Intel")


def test_values_are_typed_and_empty_cells_are_none(results):
    run = next(r for r in results.runs if r["scenario"] == "high-contention")
    assert isinstance(run["lts"], int) and isinstance(run["repetition"], int)
    assert isinstance(run["throughput_per_ms"], float)
    assert run["hold_fraction"] is None and run["arch"] is None
    gauss = [r for r in results.runs if is_gauss(r)]
    assert gauss and all(r["mutex"] is None and r["arch"] in ("A0", "A1", "A2") for r in gauss)
    java = results.java[0]
    assert java["source"] == "java" and isinstance(java["threads"], int)
    assert isinstance(java["score"], float) and java["unit"] == "ops/ms"


def test_json_keeps_per_lt_counts(results):
    run = next(r for r in results.runs if r["scenario"] == "paper-coop" and r["lts"] == 8)
    assert len(run["per_lt_acquisitions"]) == 8
    assert sum(run["per_lt_acquisitions"]) == run["acquisitions"]


def test_columns_by_name_missing_and_extra_tolerated():
    res = load_file(DATA / "known.csv")  # shuffled order, an extra 'note', most columns absent
    run = res.runs[0]
    assert run["note"] == "hand-made"
    assert run["carriers"] is None and run["latency_p99_ns"] is None
    assert run["scenario"] == "high-contention" and run["mutex"] == "library"
    assert config_key(run) == (
        ("scenario", "high-contention"),
        ("runtime", "os_threads"),
        ("mutex", "library"),
        ("lts", 4),
    )


def test_csv_json_twins_are_counted_once(tmp_path):
    # A harness invocation writes NAME.csv and NAME.json with the same runs.
    doc = json.loads((RESULTS / "paper.json").read_text())
    doc["runs"] = doc["runs"][:10]
    (tmp_path / "run.json").write_text(json.dumps(doc))
    header = ",".join(k for k in doc["runs"][0] if k != "per_lt_acquisitions")
    lines = [header] + [
        ",".join("" if r[k] is None else str(r[k]) for k in header.split(",")) for r in doc["runs"]
    ]
    (tmp_path / "run.csv").write_text("\n".join(lines) + "\n")
    assert len(load_results([tmp_path]).runs) == 10
    assert len(load_results([tmp_path / "run.csv", tmp_path / "run.json"]).runs) == 10
    assert len(load_results([tmp_path / "run.csv"]).runs) == 10


def test_repetition_index_and_scenario_name_from_json(tmp_path):
    doc = {
        "schema_version": 1,
        "context": {},
        "scenario": {"name": "default"},
        "runs": [
            {
                "runtime": "native",
                "mutex": "mcs",
                "lts": 2,
                "repetition_index": 3,
                "throughput_per_ms": 12.5,
            }
        ],
    }
    (tmp_path / "r.json").write_text(json.dumps(doc))
    run = load_results([tmp_path / "r.json"]).runs[0]
    assert run["repetition"] == 3 and run["scenario"] == "default"


def test_trace_files_in_a_directory_are_skipped(tmp_path):
    shutil.copy(DATA / "known.csv", tmp_path)
    shutil.copy(DATA / "trace_valid.json", tmp_path / "trace.json")
    assert len(load_results([tmp_path]).runs) == len(load_file(DATA / "known.csv").runs)


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "ragged.csv",
            "scenario,runtime,mutex,lts\nhigh-contention,os_threads,mcs\n",
            ":2: expected 4 fields",
        ),
        ("nan.csv", "scenario,mutex,lts,throughput_per_ms\nx,mcs,4,fast\n", "not a number: 'fast'"),
        ("header.csv", "a,b,c\n1,2,3\n", "not a fibersync result file"),
        ("empty.csv", "", "empty file"),
        ("dup.csv", "scenario,lts,lts\nx,1,2\n", "duplicate column"),
        ("cut.json", '{"schema_version": 1, "runs": [{"scenario": "x"', "malformed JSON"),
        ("v2.json", '{"schema_version": 2, "runs": []}', "unsupported schema_version 2"),
        ("noruns.json", '{"schema_version": 1}', "no 'runs' array"),
        ("list.json", "[1, 2]", "top level is not a JSON object"),
        (
            "badrun.json",
            '{"schema_version": 1, "runs": [{"scenario": "x", "lts": "many"}]}',
            "runs[0]",
        ),
    ],
)
def test_malformed_inputs_raise_one_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(LoadError) as info:
        load_results([path])
    text = str(info.value)
    assert message in text and str(path) in text and "\n" not in text


def test_missing_input(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        load_results([tmp_path / "nope.csv"])
    with pytest.raises(LoadError, match="no .csv or .json"):
        load_results([tmp_path])


def test_config_keys_cover_the_design():
    assert CONFIG_KEYS[:4] == ("scenario", "runtime", "mutex", "lts")
    assert {"hold_fraction", "lock_rate_per_ms", "arch", "distribution", "matrix_n"} <= set(
        CONFIG_KEYS
    )


@pytest.mark.parametrize("name", ["harness_gauss.csv", "harness_gauss.json"])
def test_real_harness_gauss_output_loads(name):
    # Written by: fibersync-bench --set workload=gauss --set name=gauss-tiny
    #   --runtime native --lts 16 --reps 1 --carriers 2 --set matrix_n=64
    #   --set event_arch=A0,A1,A2 --set distribution=block,cyclic
    res = load_file(DATA / name)
    assert len(res.runs) == 6
    assert {(r["arch"], r["distribution"]) for r in res.runs} == {
        (a, d) for a in ("A0", "A1", "A2") for d in ("block", "cyclic")
    }
    for r in res.runs:
        assert is_gauss(r), r
        assert r["mutex"] is None and r["throughput_per_ms"] is None
        assert r["matrix_n"] == 64 and r["lts"] == 16
        assert isinstance(r["back_ms"], float) and r["back_ms"] > 0
        assert r["residual"] < 1e-8
