"""check-trace on valid and invalid synthetic Chrome traces."""

from __future__ import annotations

import copy
import json

import pytest

from fibersync_report import cli
from fibersync_report.trace import TraceError, check_trace, validate
from support import DATA

VALID = json.loads((DATA / "trace_valid.json").read_text())


def test_valid_fixture_summary():
    s = check_trace(DATA / "trace_valid.json")
    assert (s.events, s.tracks, s.spans, s.instants, s.flows, s.metadata) == (
        len(VALID["traceEvents"]),
        2,
        13,
        6,
        3,
        3,
    )
    assert s.migrations == 3


def test_cli_valid_and_expected_migrations(capsys):
    path = str(DATA / "trace_valid.json")
    assert cli.main(["check-trace", path]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "13 spans" in out and "6 instants" in out and "3 flows" in out and "2 tracks" in out
    assert cli.main(["check-trace", path, "--expect-migrations", "3"]) == 0
    capsys.readouterr()
    assert cli.main(["check-trace", path, "--expect-migrations", "2"]) == 1
    err = capsys.readouterr().err
    assert "expected 2 migrations, found 3" in err


def test_empty_trace_is_valid():
    s = validate({"traceEvents": [], "displayTimeUnit": "ns", "otherData": {}})
    assert (s.events, s.flows) == (0, 0)


def _mutated(fn):
    doc = copy.deepcopy(VALID)
    fn(doc)
    return doc


def _first(doc, ph):
    return next(e for e in doc["traceEvents"] if e["ph"] == ph)


def _drop_thread_name(doc):
    doc["traceEvents"] = [
        e
        for e in doc["traceEvents"]
        if not (e["ph"] == "M" and e["name"] == "thread_name" and e.get("tid") == 2)
    ]


def _second_start(doc):
    s = _first(doc, "s")
    doc["traceEvents"].append(dict(s, ts=s["ts"] + 1))


INVALID = {
    "missing dur": (lambda d: _first(d, "X").pop("dur"), "missing key 'dur'"),
    "negative ts": (lambda d: _first(d, "X").update(ts=-5), "'ts' is negative"),
    "string ts": (lambda d: _first(d, "i").update(ts="10"), "'ts' must be a number"),
    "bool pid": (lambda d: _first(d, "X").update(pid=True), "'pid' must be an integer"),
    "instant scope": (lambda d: _first(d, "i").pop("s"), "missing key 's'"),
    "unknown phase": (
        lambda d: d["traceEvents"].append({"ph": "B", "name": "x", "ts": 0}),
        "unsupported phase 'B'",
    ),
    "flow without finish": (
        lambda d: d["traceEvents"].remove(_first(d, "f")),
        "has a start ('s') but no finish",
    ),
    "flow without start": (
        lambda d: d["traceEvents"].remove(_first(d, "s")),
        "has a finish ('f') but no start",
    ),
    "two starts": (_second_start, "second 's' event"),
    "finish before start": (lambda d: _first(d, "f").update(ts=0), "before its start"),
    "finish without bp": (lambda d: _first(d, "f").pop("bp"), "missing key 'bp'"),
    "flow without cat": (lambda d: _first(d, "s").pop("cat"), "missing key 'cat'"),
    "tid not named": (_drop_thread_name, "tid 2 has no 'thread_name'"),
    "flow start outside spans": (
        lambda d: _first(d, "s").update(ts=_first(d, "s")["ts"] + 50),
        "is not inside an 'X' span of pid 1 tid 1",
    ),
    "flow finish on a track without spans": (
        lambda d: _first(d, "f").update(tid=3),
        "is not inside an 'X' span of pid 1 tid 3",
    ),
    "metadata without args.name": (lambda d: _first(d, "M").update(args={}), "'args.name'"),
    "no traceEvents": (lambda d: d.pop("traceEvents"), "missing 'traceEvents'"),
    "bad time unit": (lambda d: d.update(displayTimeUnit="s"), "'displayTimeUnit'"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_traces(tmp_path, capsys, case):
    mutate, message = INVALID[case]
    doc = _mutated(mutate)
    with pytest.raises(TraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(doc)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["check-trace", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and "invalid trace" in captured.err


def test_not_json_and_missing_file(tmp_path, capsys):
    bad = tmp_path / "t.json"
    bad.write_text('{"traceEvents": [')
    assert cli.main(["check-trace", str(bad)]) == 1
    assert "not JSON" in capsys.readouterr().err
    assert cli.main(["check-trace", str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err
