"""The HTML report: self-contained, every figure embedded, tables and metadata present."""

from __future__ import annotations

import base64
import re
import shutil

from fibersync_report import cli
from support import DATA, PNG_MAGIC


def test_report_embeds_every_figure(report_dir):
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == len(list(report_dir.glob("*.png"))) == 10
    assert all(base64.b64decode(img).startswith(PNG_MAGIC) for img in images)
    assert page.count("<img") == len(images)


def test_report_is_self_contained(report_dir):
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    assert "data-images-loaded" in page  # set by the inline script once images decoded


def test_report_sections_and_tables(report_dir):
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    for anchor in (
        "s-paper-coop",
        "s-high-contention",
        "s-poisson-hold",
        "s-poisson-rate",
        "gauss",
        "java",
        "machine",
    ):
        assert f'<section id="{anchor}">' in page
    # best-mutex tables per scenario (4), Gaussian elimination, Java, machine metadata
    assert page.count("<table") == 7
    assert "paper-coop: best mutex per configuration" in page
    assert "Intel(R) Xeon(R) Gold 6230" in page and "fibersync-bench --preset paper" in page
    assert "CLOCK_MONOTONIC_RAW" in page  # calibration from the JSON context
    assert '<a href="throughput-paper-coop.svg">SVG</a>' in page


def test_cli_prints_report_path_and_defaults_next_to_input(tmp_path, capsys):
    shutil.copy(DATA / "known.csv", tmp_path / "known.csv")
    assert cli.main(["html", str(tmp_path / "known.csv")]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(tmp_path / "report" / "report.html")
    page = (tmp_path / "report" / "report.html").read_text()
    assert "No JSON result file was given" in page
    assert (
        (tmp_path / "report" / "throughput-high-contention.png").read_bytes().startswith(PNG_MAGIC)
    )
    assert not list((tmp_path / "report").glob(".*"))  # no temporary files left behind


def test_cli_output_option(tmp_path, capsys):
    out = tmp_path / "deep" / "out"
    assert cli.main(["html", str(DATA / "known.csv"), "-o", str(out), "--title", "Nightly"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "report.html")
    assert "<title>Nightly</title>" in (out / "report.html").read_text()
