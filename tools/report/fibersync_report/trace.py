"""Validation of the Chrome trace-event JSON written by ``fibersync-bench --trace FILE``.

Expected shape::

    {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}

with events of these phases (``ph``):

====  =========================================================  ==========================
ph    meaning                                                    required keys
====  =========================================================  ==========================
X     complete span: an LT running on a carrier                  name ts dur pid tid
i     instant                                                    name ts pid tid s
s     flow start: an LT leaves a carrier (migration arrow tail)  name cat id ts pid tid
f     flow finish: it arrives on another carrier                 name cat id ts pid tid bp="e"
M     metadata: thread_name / process_name                       name pid args.name (+ tid)
====  =========================================================  ==========================

Checks: required keys with the right types; ``ts`` and ``dur`` are finite
non-negative numbers; every flow id has exactly one ``s`` and one ``f``
with ``f.ts >= s.ts``; each flow event lies inside an X span of its own
(pid, tid) (ends included), since viewers attach the arrow to the enclosing
slice and drop it otherwise; every (pid, tid) used by an X/i/s/f event is
named by a ``thread_name`` metadata event. A migration is one complete flow
pair.

:func:`check_trace` returns a :class:`TraceSummary` or raises
:class:`TraceError` with the first problem found.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PHASES = ("X", "i", "s", "f", "M")
_INSTANT_SCOPES = ("g", "p", "t")
_METADATA_NAMES = ("thread_name", "process_name", "thread_sort_index", "process_sort_index")
_TIME_UNITS = ("ns", "ms")


class TraceError(Exception):
    """The trace is not valid; the message names the first problem."""


@dataclass
class TraceSummary:
    events: int
    tracks: int  # distinct (pid, tid) threads named or used
    spans: int
    instants: int
    flows: int  # complete s/f pairs = migrations
    metadata: int

    @property
    def migrations(self) -> int:
        return self.flows

    def line(self) -> str:
        return (
            f"{self.events} events, {self.tracks} tracks, {self.spans} spans, "
            f"{self.instants} instants, {self.flows} flows ({self.flows} migrations), "
            f"{self.metadata} metadata"
        )


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _where(i: int, ev: dict) -> str:
    name = ev.get("name")
    return f"traceEvents[{i}] (ph {ev.get('ph')!r}" + (
        f", name {name!r})" if isinstance(name, str) else ")"
    )


def _require(i: int, ev: dict, key: str, check, what: str) -> Any:
    if key not in ev:
        raise TraceError(f"{_where(i, ev)}: missing key {key!r}")
    value = ev[key]
    if not check(value):
        raise TraceError(f"{_where(i, ev)}: {key!r} must be {what}, got {json.dumps(value)[:40]}")
    return value


def _time(i: int, ev: dict, key: str) -> float:
    value = _require(i, ev, key, _is_number, "a number")
    if value < 0:
        raise TraceError(f"{_where(i, ev)}: {key!r} is negative ({value})")
    return float(value)


# Slack for ts + dur computed in binary floating point from decimal text.
_EPSILON_US = 1e-6


class _Spans:
    """The X spans of one track, asked "does one of you cover ts?" in O(log n)."""

    def __init__(self, spans: list[tuple[float, float]]):
        spans = sorted(spans)
        self._begins = [b for b, _ in spans]
        self._max_end = list(itertools.accumulate((e for _, e in spans), max))

    def cover(self, ts: float) -> bool:
        k = bisect.bisect_right(self._begins, ts)  # spans[:k] begin at or before ts
        return k > 0 and self._max_end[k - 1] + _EPSILON_US >= ts


def validate(doc: Any) -> TraceSummary:
    """Validate a parsed trace document."""
    if not isinstance(doc, dict):
        raise TraceError("top level must be a JSON object with a 'traceEvents' array")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise TraceError("missing 'traceEvents' array at top level")
    unit = doc.get("displayTimeUnit")
    if unit is not None and unit not in _TIME_UNITS:
        raise TraceError(f"'displayTimeUnit' must be one of {', '.join(_TIME_UNITS)}, got {unit!r}")
    if "otherData" in doc and not isinstance(doc["otherData"], dict):
        raise TraceError("'otherData' must be an object")

    named: set[tuple[int, int]] = set()
    spans: dict[tuple[int, int], list[tuple[float, float]]] = {}
    used: dict[tuple[int, int], int] = {}  # (pid, tid) -> first event index using it
    starts: dict[Any, tuple[int, float, tuple[int, int]]] = {}
    finishes: dict[Any, tuple[int, float, tuple[int, int]]] = {}
    counts = {p: 0 for p in PHASES}

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise TraceError(f"traceEvents[{i}]: not an object")
        ph = ev.get("ph")
        if ph not in PHASES:
            raise TraceError(
                f"traceEvents[{i}]: unsupported phase {ph!r} (expected one of {', '.join(PHASES)})"
            )
        counts[ph] += 1
        if ph == "M":
            mname = _require(
                i,
                ev,
                "name",
                lambda v: v in _METADATA_NAMES,
                "one of " + ", ".join(_METADATA_NAMES),
            )
            pid = _require(i, ev, "pid", _is_int, "an integer")
            args = _require(i, ev, "args", lambda v: isinstance(v, dict), "an object")
            if mname in ("thread_name", "process_name"):
                if not isinstance(args.get("name"), str) or not args["name"]:
                    raise TraceError(f"{_where(i, ev)}: 'args.name' must be a non-empty string")
            elif not _is_int(args.get("sort_index")):
                raise TraceError(f"{_where(i, ev)}: 'args.sort_index' must be an integer")
            if mname.startswith("thread_"):
                tid = _require(i, ev, "tid", _is_int, "an integer")
                if mname == "thread_name":
                    named.add((pid, tid))
            continue

        _require(i, ev, "name", lambda v: isinstance(v, str) and v != "", "a non-empty string")
        ts = _time(i, ev, "ts")
        pid = _require(i, ev, "pid", _is_int, "an integer")
        tid = _require(i, ev, "tid", _is_int, "an integer")
        used.setdefault((pid, tid), i)
        if ph == "X":
            spans.setdefault((pid, tid), []).append((ts, ts + _time(i, ev, "dur")))
        elif ph == "i":
            _require(
                i, ev, "s", lambda v: v in _INSTANT_SCOPES, "one of " + ", ".join(_INSTANT_SCOPES)
            )
        else:  # flow
            _require(i, ev, "cat", lambda v: isinstance(v, str) and v != "", "a non-empty string")
            fid = _require(
                i,
                ev,
                "id",
                lambda v: _is_int(v) or (isinstance(v, str) and v != ""),
                "an integer or a non-empty string",
            )
            key = (type(fid).__name__, fid)
            table = starts if ph == "s" else finishes
            if key in table:
                raise TraceError(
                    f"{_where(i, ev)}: flow id {fid!r} has a second {ph!r} event "
                    f"(first at traceEvents[{table[key][0]}])"
                )
            if ph == "f":
                _require(i, ev, "bp", lambda v: v == "e", 'the string "e"')
            table[key] = (i, ts, (pid, tid))

    for key, (i, ts, _) in starts.items():
        if key not in finishes:
            raise TraceError(
                f"traceEvents[{i}]: flow id {key[1]!r} has a start ('s') but no finish ('f')"
            )
        j, fts, _ = finishes[key]
        if fts < ts:
            raise TraceError(
                f"traceEvents[{j}]: flow id {key[1]!r} finishes at ts {fts:g}, "
                f"before its start at ts {ts:g}"
            )
    for key, (j, _, _) in finishes.items():
        if key not in starts:
            raise TraceError(
                f"traceEvents[{j}]: flow id {key[1]!r} has a finish ('f') but no start ('s')"
            )
    covers = {track: _Spans(v) for track, v in spans.items()}
    for table in (starts, finishes):
        for key, (i, ts, track) in table.items():
            if track not in covers or not covers[track].cover(ts):
                raise TraceError(
                    f"traceEvents[{i}]: flow id {key[1]!r} at ts {ts:g} is not inside an 'X' span "
                    f"of pid {track[0]} tid {track[1]}"
                )
    for (pid, tid), i in sorted(used.items(), key=lambda kv: kv[1]):
        if (pid, tid) not in named:
            raise TraceError(
                f"traceEvents[{i}]: pid {pid} tid {tid} has no 'thread_name' metadata event"
            )

    return TraceSummary(
        events=len(events),
        tracks=len(named | set(used)),
        spans=counts["X"],
        instants=counts["i"],
        flows=len(starts),
        metadata=counts["M"],
    )


def check_trace(path: str | Path) -> TraceSummary:
    """Read and validate a trace file.

    Raises ``FileNotFoundError``/``OSError`` when the file cannot be read, and
    :class:`TraceError` when its content is not a valid trace.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return validate(doc)
