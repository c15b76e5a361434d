"""Paths and small helpers shared by the tests (imported as a plain module)."""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
RESULTS = DATA / "results"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def harness_runs(mutex, values, lts=4, scenario="hot-handover", runtime="boost_fiber", **extra):
    """One harness run per value (its throughput), repetitions 0, 1, ..."""
    return [
        dict(
            scenario=scenario,
            runtime=runtime,
            mutex=mutex,
            lts=lts,
            repetition=i,
            throughput_per_ms=v,
            **extra,
        )
        for i, v in enumerate(values)
    ]


def write_runs(path: Path, rows: list[dict]) -> Path:
    """Write harness-style CSV rows (columns = union of the dicts' keys, in order)."""
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if row.get(c) is None else row[c] for c in columns])
    return path
