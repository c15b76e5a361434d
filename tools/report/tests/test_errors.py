"""Error handling: one line on stderr, exit status 2, no output written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fibersync_report import cli, plot
from support import DATA

BAD = {
    "truncated.json": '{"schema_version": 1, "context": {"host": "x"}, "runs": [{"scenario": "hot',
    "ragged.csv": "scenario,runtime,mutex,lts,repetition,throughput_per_ms\n"
    "hot-handover,native,mcs,4,0,12.5\nhot-handover,native,mcs,4,1\n",
    "letters.csv": "scenario,runtime,mutex,lts,repetition,throughput_per_ms\n"
    "hot-handover,native,mcs,four,0,12.5\n",
    "unknown.csv": "name,value\nx,1\n",
    "binary.csv": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe",
}


def make_bad(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    content = BAD[name]
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def assert_one_error_line(capsys, *needles: str) -> None:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("fibersync-report: error: ")
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize("name", sorted(BAD))
def test_html_malformed_input(tmp_path, capsys, name):
    out = tmp_path / "out"
    assert (
        cli.main(["html", str(DATA / "known.csv"), str(make_bad(tmp_path, name)), "-o", str(out)])
        == 2
    )
    assert_one_error_line(capsys, name)
    assert not out.exists()


def test_html_missing_input(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["html", str(tmp_path / "absent.csv"), "-o", str(out)]) == 2
    assert_one_error_line(capsys, "absent.csv", "no such file")
    assert not out.exists()
    assert not (tmp_path / "report").exists()


def test_html_default_output_not_created_on_error(tmp_path, capsys):
    bad = make_bad(tmp_path, "ragged.csv")
    assert cli.main(["html", str(bad)]) == 2
    assert_one_error_line(capsys, "ragged.csv:3")
    assert not (tmp_path / "report").exists()


def test_failure_while_drawing_leaves_previous_report_intact(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("previous report")
    calls = []

    def failing_save(p, outdir):
        calls.append(p.stem)
        if len(calls) == 2:
            raise RuntimeError("disk full (simulated)")
        return real_save(p, outdir)

    real_save = plot.save
    monkeypatch.setattr(plot, "save", failing_save)
    with pytest.raises(RuntimeError):
        cli.main(["html", str(DATA / "results" / "poisson.csv"), "-o", str(out)])
    assert (out / "report.html").read_text() == "previous report"
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]


def test_compare_errors(tmp_path, capsys):
    csv_out = tmp_path / "cmp.csv"
    assert (
        cli.main(
            ["compare", str(DATA / "known.csv"), str(tmp_path / "absent"), "--csv", str(csv_out)]
        )
        == 2
    )
    assert_one_error_line(capsys, "absent")
    assert (
        cli.main(
            [
                "compare",
                str(make_bad(tmp_path, "truncated.json")),
                str(DATA / "known.csv"),
                "--csv",
                str(csv_out),
            ]
        )
        == 2
    )
    assert_one_error_line(capsys, "truncated.json", "malformed JSON")
    assert not csv_out.exists()


def test_console_script_entry_point(tmp_path):
    """The installed command (or python -m) reports errors the same way."""
    script = Path(sys.executable).parent / "fibersync-report"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "fibersync_report"]
    proc = subprocess.run(
        cmd + ["html", str(tmp_path / "nope.json")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().endswith("nope.json: no such file or directory")
    proc = subprocess.run(
        cmd + ["check-trace", str(DATA / "trace_valid.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "3 flows" in proc.stdout


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["html"])
    assert info.value.code == 2
    capsys.readouterr()
