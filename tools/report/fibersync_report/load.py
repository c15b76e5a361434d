"""Reading fibersync result files.

Three kinds of input are recognised by their content, never by their name:

* the C++ harness' CSV (``fibersync-bench``): header row with a ``scenario``
  column, one row per run (one repetition of one configuration);
* the C++ harness' JSON: ``{"schema_version": 1, "context": {...},
  "scenario": {...}, "runs": [...]}``, the same runs plus machine metadata;
* the Java module's CSV: header with ``bench``, ``lock``, ``threads`` and
  ``score`` columns, one row per (bench, lock, threads) measurement.

Columns are read by name; missing columns read as ``None``, extra columns are
kept. An empty cell means "not applicable" and reads as ``None``.

The harness writes ``NAME.csv`` and ``NAME.json`` side by side with the same
runs. When both are given (or found in one directory), the JSON is used, so
no run is counted twice.

Every problem is raised as :class:`LoadError` with a message naming the file
(and line or run), suitable for printing as one line.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

#: Columns that identify a configuration of the C++ harness (everything except
#: the repetition index and the measured metrics), in display order.
CONFIG_KEYS: tuple[str, ...] = (
    "scenario",
    "runtime",
    "mutex",
    "lts",
    "carriers",
    "pinning",
    "topology",
    "hold_fraction",
    "lock_rate_per_ms",
    "arch",
    "distribution",
    "matrix_n",
)
#: The configuration of a run without its mutex: what rank and leaders
#: compare mutexes within.
POINT_KEYS: tuple[str, ...] = tuple(k for k in CONFIG_KEYS if k != "mutex")


def point_key(run: dict) -> tuple:
    """What names a run's configuration: its values of POINT_KEYS, in order."""
    return tuple(run.get(k) for k in POINT_KEYS)


def line_round_trip(run: dict) -> float | None:
    """The cache-line round trip (ns) the bench timed before the run, or None
    where it took none (``--no-line-probe``, one CPU, an older file)."""
    ns = run.get("line_round_trip_ns")
    return float(ns) if isinstance(ns, (int, float)) and 0 < ns < math.inf else None


#: Columns of the C++ harness that hold text; every other column is numeric.
TEXT_COLUMNS: frozenset[str] = frozenset(
    {"scenario", "runtime", "mutex", "pinning", "topology", "arch", "distribution"}
)

#: Numeric columns that are counts and read as ``int``.
INT_COLUMNS: frozenset[str] = frozenset(
    {"lts", "carriers", "repetition", "matrix_n", "acquisitions", "latency_samples"}
)

#: Every column the C++ harness writes, in its order.
CPP_COLUMNS: tuple[str, ...] = (
    "scenario", "runtime", "mutex", "lts", "carriers", "pinning", "topology",
    "repetition", "duration_ms", "acquisitions", "throughput_per_ms", "jain_index",
    "bypass_mean", "bypass_p99", "bypass_max", "latency_p50_ns", "latency_p90_ns",
    "latency_p99_ns", "latency_samples", "latency_migrated", "yields_per_acq",
    "suspends_per_acq", "migrations_per_acq", "same_node_handover",
    "same_cluster_handover", "remote_handovers_per_1000", "cpu_time_ms",
    "cpu_utilization", "hold_fraction", "lock_rate_per_ms", "speedup_vs_1",
    "bound_per_ms", "bound_fraction", "arch", "distribution", "matrix_n",
    "forward_ms", "back_ms", "total_ms", "residual", "line_round_trip_ns",
)  # fmt: skip

#: Every column the Java module writes, in its order.
JAVA_COLUMNS: tuple[str, ...] = (
    "source", "bench", "lock", "threads", "carriers", "score", "score_error",
    "unit", "forks", "median_over_forks", "mode",
)  # fmt: skip
JAVA_TEXT_COLUMNS: frozenset[str] = frozenset({"source", "bench", "lock", "unit", "mode"})
JAVA_INT_COLUMNS: frozenset[str] = frozenset({"threads", "carriers", "forks"})
JAVA_CONFIG_KEYS: tuple[str, ...] = ("bench", "lock", "threads", "carriers", "mode", "unit")

#: The runtime's own mutex, the baseline of every C++ comparison.
BASELINE_MUTEX = "library"
#: Java baselines, the first one is the reference of the Java summary table.
JAVA_BASELINES: tuple[str, ...] = ("ReentrantLockUnfair", "ReentrantLockFair", "synchronized")

SUPPORTED_SCHEMA_VERSIONS = (1,)


class LoadError(Exception):
    """An input file is missing, unreadable or not a fibersync result file."""


@dataclass
class Results:
    """Everything read from a set of result files.

    ``runs`` are C++ harness runs: one dict per run with every known column
    (``None`` when absent or empty) plus any extra ones, and ``_source`` (the
    file it came from). ``java`` are Java rows, built the same way.
    ``contexts`` holds one ``(path, context dict)`` per JSON file.
    """

    runs: list[dict[str, Any]] = field(default_factory=list)
    java: list[dict[str, Any]] = field(default_factory=list)
    contexts: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    scenarios: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def extend(self, other: "Results") -> None:
        self.runs.extend(other.runs)
        self.java.extend(other.java)
        self.contexts.extend(other.contexts)
        self.scenarios.extend(other.scenarios)
        self.files.extend(other.files)

    @property
    def empty(self) -> bool:
        return not self.runs and not self.java


# --------------------------------------------------------------------------
# Public entry points


def load_results(paths: Iterable[str | Path]) -> Results:
    """Read result files and directories (top level of each) into one set.

    Raises :class:`LoadError` on the first missing, unreadable or malformed
    input. Trace files (Chrome trace JSON) found in a directory are skipped.
    """
    files = _expand(paths)
    results = Results()
    for path in files:
        results.extend(load_file(path))
    return results


def load_file(path: str | Path) -> Results:
    """Read one file, whatever its kind (detected from its content)."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        return _load_json(path, text)
    return _load_csv(path, text)


def is_trace_file(path: Path) -> bool:
    """True when ``path`` looks like a Chrome trace-event file (not results)."""
    try:
        with path.open("r", encoding="utf-8") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    stripped = head.lstrip()
    return stripped.startswith("{") and '"traceEvents"' in head and '"runs"' not in head


# --------------------------------------------------------------------------
# File discovery


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    paths = [Path(p) for p in paths]
    if not paths:
        raise LoadError("no input given")
    chosen: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(
                q
                for q in p.iterdir()
                if q.is_file()
                and q.suffix.lower() in (".csv", ".json")
                and not q.name.startswith(".")
            )
            found = [q for q in found if not (q.suffix.lower() == ".json" and is_trace_file(q))]
            if not found:
                raise LoadError(f"{p}: directory holds no .csv or .json result files")
            chosen.extend(found)
        elif p.exists():
            chosen.append(p)
        else:
            raise LoadError(f"{p}: no such file or directory")
    # NAME.csv and NAME.json written by one harness invocation hold the same
    # runs: keep the JSON (it has the context and per-LT counts).
    resolved = {q.resolve() for q in chosen}
    unique: list[Path] = []
    seen: set[Path] = set()
    for q in chosen:
        r = q.resolve()
        if r in seen:
            continue
        seen.add(r)
        if q.suffix.lower() == ".csv" and r.with_suffix(".json") in resolved:
            continue
        unique.append(q)
    return unique


def _read_text(path: Path) -> str:
    if not path.exists():
        raise LoadError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------
# Value parsing


def _parse_number(text: str, as_int: bool) -> int | float:
    value = float(text)  # raises ValueError
    if as_int and value.is_integer():
        return int(value)
    return value


def _parse_cell(column: str, raw: Any, text_cols: frozenset[str], int_cols: frozenset[str]) -> Any:
    """One cell (CSV text or JSON value) to ``None``, ``str``, ``int`` or ``float``."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = raw.strip()
        if raw == "":
            return None
        if column in text_cols:
            return raw
        try:
            number = _parse_number(raw, column in int_cols)
            return number if math.isfinite(number) else None  # "nan", "inf": no value
        except ValueError:
            if column in _KNOWN_NUMERIC:
                raise ValueError(f"column {column!r}: not a number: {raw!r}") from None
            return raw  # unknown extra column: keep the text
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)):
        if column in text_cols:
            return str(raw)
        if isinstance(raw, float) and not math.isfinite(raw):
            return None
        if column in int_cols and float(raw).is_integer():
            return int(raw)
        return raw
    if column in _KNOWN_NUMERIC or column in text_cols:
        raise ValueError(f"field {column!r}: unexpected value {raw!r}")
    return raw  # lists and objects of extra fields are kept as they are


_KNOWN_NUMERIC = (frozenset(CPP_COLUMNS) - TEXT_COLUMNS) | (
    frozenset(JAVA_COLUMNS) - JAVA_TEXT_COLUMNS - {"median_over_forks"}
)


# --------------------------------------------------------------------------
# CSV


def _csv_kind(header: list[str]) -> str | None:
    cols = set(header)
    if {"bench", "lock", "threads", "score"} <= cols:
        return "java"
    if "scenario" in cols:
        return "cpp"
    return None


def _load_csv(path: Path, text: str) -> Results:
    reader = csv.reader(io.StringIO(text, newline=""))
    numbered: list[tuple[int, list[str]]] = []  # (line of the row's end, cells)
    try:
        for row in reader:
            if any(c.strip() for c in row):  # blank lines are skipped
                numbered.append((reader.line_num, row))
    except csv.Error as exc:
        raise LoadError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None
    if not numbered:
        raise LoadError(f"{path}: empty file (expected a CSV header row)")
    header_line, header = numbered[0]
    header = [h.strip() for h in header]
    kind = _csv_kind(header)
    if kind is None:
        shown = ",".join(header[:6]) + (",..." if len(header) > 6 else "")
        raise LoadError(
            f"{path}: not a fibersync result file (CSV header {shown!r} has neither a "
            "'scenario' column nor the Java columns bench,lock,threads,score)"
        )
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        raise LoadError(f"{path}:{header_line}: duplicate column(s) {', '.join(dup)}")
    if kind == "java":
        known, text_cols, int_cols = JAVA_COLUMNS, JAVA_TEXT_COLUMNS, JAVA_INT_COLUMNS
    else:
        known, text_cols, int_cols = CPP_COLUMNS, TEXT_COLUMNS, INT_COLUMNS
    out = Results(files=[path])
    for line, row in numbered[1:]:
        if len(row) != len(header):
            raise LoadError(
                f"{path}:{line}: expected {len(header)} fields as in the header, got {len(row)}"
            )
        record: dict[str, Any] = {c: None for c in known}
        try:
            for col, raw in zip(header, row):
                record[col] = _parse_cell(col, raw, text_cols, int_cols)
        except ValueError as exc:
            raise LoadError(f"{path}:{line}: {exc}") from None
        record["_source"] = str(path)
        (out.java if kind == "java" else out.runs).append(record)
    return out


# --------------------------------------------------------------------------
# JSON


def _load_json(path: Path, text: str) -> Results:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise LoadError(f"{path}: not a fibersync result file (top level is not a JSON object)")
    if "traceEvents" in doc and "runs" not in doc:
        raise LoadError(
            f"{path}: this is a trace file, not results (use 'fibersync-report check-trace')"
        )
    if "runs" not in doc:
        raise LoadError(f"{path}: not a fibersync result file (no 'runs' array)")
    version = doc.get("schema_version")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise LoadError(
            f"{path}: unsupported schema_version {version!r} "
            f"(this tool reads {', '.join(map(str, SUPPORTED_SCHEMA_VERSIONS))})"
        )
    runs = doc["runs"]
    if not isinstance(runs, list):
        raise LoadError(f"{path}: 'runs' is not an array")
    context = doc.get("context", {})
    if not isinstance(context, dict):
        raise LoadError(f"{path}: 'context' is not an object")
    scenario = doc.get("scenario", {})
    out = Results(files=[path], contexts=[(path, context)])
    if isinstance(scenario, dict) and scenario:
        out.scenarios.append((path, scenario))
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise LoadError(f"{path}: runs[{i}] is not an object")
        record: dict[str, Any] = {c: None for c in CPP_COLUMNS}
        try:
            for key, raw in run.items():
                record[key] = _parse_cell(key, raw, TEXT_COLUMNS, INT_COLUMNS)
        except ValueError as exc:
            raise LoadError(f"{path}: runs[{i}]: {exc}") from None
        if record.get("repetition") is None and isinstance(record.get("repetition_index"), int):
            record["repetition"] = record["repetition_index"]
        if record.get("scenario") is None:
            record["scenario"] = _scenario_name(scenario)
        if record.get("scenario") is None:
            raise LoadError(f"{path}: runs[{i}] has no 'scenario'")
        record["_source"] = str(path)
        out.runs.append(record)
    return out


def _scenario_name(scenario: Any) -> str | None:
    if isinstance(scenario, dict):
        name = scenario.get("name")
        if isinstance(name, str) and name:
            return name
    return None


# --------------------------------------------------------------------------
# Helpers used by the other modules


def config_key(run: dict[str, Any], keys: tuple[str, ...] = CONFIG_KEYS) -> tuple:
    """The configuration a run belongs to: ``((column, value), ...)`` of present keys."""
    return tuple((k, run.get(k)) for k in keys if run.get(k) is not None)


def is_gauss(run: dict[str, Any]) -> bool:
    """Rows of the Gaussian-elimination workload (no mutex, A0/A1/A2 timings)."""
    return run.get("scenario") == "gauss" or (
        run.get("arch") is not None and run.get("mutex") is None
    )
