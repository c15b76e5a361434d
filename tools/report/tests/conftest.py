"""Shared fixtures: paths of the checked-in data and one report built per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from fibersync_report.html import build_report
from fibersync_report.load import load_results
from support import RESULTS


@pytest.fixture(scope="session")
def results():
    return load_results([RESULTS])


@pytest.fixture(scope="session")
def report_dir(tmp_path_factory, results) -> Path:
    """The full report of tests/data/results, built once (drawing takes a few seconds)."""
    out = tmp_path_factory.mktemp("report")
    path = build_report(results, out)
    assert path == out / "report.html"
    return out
