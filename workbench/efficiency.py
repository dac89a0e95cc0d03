"""Efficiency figures of runs (sidecar files) and the Pareto frontier of effectiveness
against cost (pure; notes 002: "effectiveness, efficiency and cost are related").

A sidecar file gives, per run tag, any of: ``mean_latency_ms``, per-query latencies,
``throughput_qps`` (queries per second), ``index_size_bytes``, ``hardware`` (free text) and
``cost_per_1000_queries``. Two layouts, told apart by the first character:

* JSON: one object, or a list of objects, each ``{"run": TAG, "mean_latency_ms": 12.5,
  "per_query_latency_ms": {"401": 10.1, ...}, "throughput_qps": 80, "index_size_bytes": ...,
  "hardware": "...", "cost_per_1000_queries": 0.02}``; ``run`` is required.
* CSV with a header naming ``run`` and any of ``qid``, ``latency_ms``, ``mean_latency_ms``,
  ``throughput_qps``, ``index_size_bytes``, ``hardware``, ``cost_per_1000_queries``. A row
  with a qid gives that query's ``latency_ms``; a row without gives the run's figures.

Nothing is guessed: an unknown field, a run given twice, a query given twice, a number that
is negative or not finite are errors naming the file and line. When only per-query
latencies are given, the mean latency is their mean.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench import json_input

MAX_BYTES = 20_000_000
MAX_TEXT = 200  # characters of hardware or a run tag
NUMBERS = ("mean_latency_ms", "throughput_qps", "index_size_bytes", "cost_per_1000_queries")
RUN_FIELDS = ("run", *NUMBERS, "hardware")
CSV_FIELDS = (*RUN_FIELDS, "qid", "latency_ms")
JSON_FIELDS = (*RUN_FIELDS, "per_query_latency_ms")


class EfficiencyFormatError(ValueError):
    """A sidecar file that cannot be read without guessing."""


@dataclass(frozen=True)
class Efficiency:
    """The efficiency figures of one run (None: not given)."""

    run: str
    mean_latency_ms: float | None = None
    throughput_qps: float | None = None
    index_size_bytes: float | None = None
    hardware: str = ""
    cost_per_1000_queries: float | None = None
    per_query_latency_ms: dict[str, float] = field(default_factory=dict)

    @property
    def p95_latency_ms(self) -> float | None:
        """The 95th percentile of the per-query latencies (nearest rank), None without them."""
        values = sorted(self.per_query_latency_ms.values())
        if not values:
            return None
        return values[max(math.ceil(0.95 * len(values)) - 1, 0)]


def _number(text: Any, where: str, name: str) -> float:  # any parsed JSON or CSV value
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise EfficiencyFormatError(
            f"{where}: expected a number for {name}; got {text!r}"
        ) from None
    if isinstance(text, bool) or not math.isfinite(value) or value < 0:
        raise EfficiencyFormatError(
            f"{where}: expected a finite number >= 0 for {name}; got {text!r}"
        )
    return value


def _text(value: object, where: str, name: str) -> str:
    if not isinstance(value, str) or (name == "run" and not value.strip()):
        raise EfficiencyFormatError(f"{where}: expected a non-empty text for {name}; got {value!r}")
    if len(value) > MAX_TEXT:
        raise EfficiencyFormatError(f"{where}: {name} is longer than {MAX_TEXT} characters")
    return value.strip()


def _finish(run: str, figures: Mapping[str, Any], per_query: dict[str, float]) -> Efficiency:
    mean = figures.get("mean_latency_ms")
    if mean is None and per_query:
        mean = sum(per_query.values()) / len(per_query)
    return Efficiency(
        run,
        mean_latency_ms=mean,
        throughput_qps=figures.get("throughput_qps"),
        index_size_bytes=figures.get("index_size_bytes"),
        hardware=str(figures.get("hardware", "")),
        cost_per_1000_queries=figures.get("cost_per_1000_queries"),
        per_query_latency_ms=per_query,
    )


def _read_json(text: str, name: str) -> list[Efficiency]:
    try:
        document = json_input.loads(text)
    except json_input.JsonInputError as error:
        where = f"{name}:{error.line}" if error.line is not None else name
        raise EfficiencyFormatError(f"{where}: {error}") from None
    objects = document if isinstance(document, list) else [document]
    records = []
    for index, item in enumerate(objects, start=1):
        where = f"{name}: object {index}"
        if not isinstance(item, dict):
            raise EfficiencyFormatError(f"{where}: expected an object; got {type(item).__name__}")
        unknown = sorted(set(item) - set(JSON_FIELDS))
        if unknown:
            raise EfficiencyFormatError(
                f"{where}: unknown fields {', '.join(unknown)}; expected {', '.join(JSON_FIELDS)}"
            )
        if "run" not in item:
            raise EfficiencyFormatError(f"{where}: no 'run' field")
        run = _text(item["run"], where, "run")
        figures: dict[str, object] = {
            key: _number(item[key], where, key)
            for key in NUMBERS
            if key in item and item[key] is not None
        }
        if "hardware" in item:
            figures["hardware"] = _text(item["hardware"], where, "hardware")
        latencies = item.get("per_query_latency_ms") or {}
        if not isinstance(latencies, dict):
            raise EfficiencyFormatError(f"{where}: per_query_latency_ms must map qid -> ms")
        per_query = {
            str(q): _number(v, where, f"the latency of query {q}") for q, v in latencies.items()
        }
        records.append(_finish(run, figures, per_query))
    return records


def _read_csv(text: str, name: str) -> list[Efficiency]:
    rows = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(rows, [])]
    unknown = sorted(set(header) - set(CSV_FIELDS))
    if "run" not in header or unknown or len(set(header)) != len(header):
        raise EfficiencyFormatError(
            f"{name}:1: expected a header with 'run' and any of {', '.join(CSV_FIELDS[1:])}; "
            f"got {','.join(header)!r}"
        )
    figures: dict[str, dict[str, object]] = {}
    per_query: dict[str, dict[str, float]] = {}
    for number, row in enumerate(rows, start=2):
        where = f"{name}:{number}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise EfficiencyFormatError(f"{where}: expected {len(header)} fields; got {len(row)}")
        values = {h: cell.strip() for h, cell in zip(header, row, strict=True)}
        run = _text(values["run"], where, "run")
        per_query.setdefault(run, {})
        if values.get("qid"):
            qid = values["qid"]
            if qid in per_query[run]:
                raise EfficiencyFormatError(f"{where}: query {qid!r} of run {run!r} given twice")
            extra = [k for k in (*NUMBERS, "hardware") if values.get(k)]
            if extra or not values.get("latency_ms"):
                raise EfficiencyFormatError(
                    f"{where}: a row with a qid gives only latency_ms; got "
                    f"{', '.join(extra) or 'no latency_ms'}"
                )
            per_query[run][qid] = _number(values["latency_ms"], where, "latency_ms")
            continue
        if values.get("latency_ms"):
            raise EfficiencyFormatError(f"{where}: latency_ms needs a qid (or use mean_latency_ms)")
        if run in figures:
            raise EfficiencyFormatError(f"{where}: run {run!r} has two rows of figures")
        row_figures: dict[str, object] = {
            key: _number(values[key], where, key) for key in NUMBERS if values.get(key)
        }
        if values.get("hardware"):
            row_figures["hardware"] = _text(values["hardware"], where, "hardware")
        figures[run] = row_figures
    return [_finish(run, figures.get(run, {}), per_query[run]) for run in per_query]


def read_efficiency(text: str, *, name: str = "efficiency") -> list[Efficiency]:
    """The runs' efficiency figures in a sidecar file's text (JSON or CSV, see the module)."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise EfficiencyFormatError(f"{name}: larger than {MAX_BYTES:,} bytes")
    if "\x00" in text:
        raise EfficiencyFormatError(f"{name}: contains a NUL character")
    stripped = text.lstrip()
    if not stripped:
        raise EfficiencyFormatError(f"{name}: empty")
    records = _read_json(text, name) if stripped[0] in "[{" else _read_csv(text, name)
    seen: set[str] = set()
    for record in records:
        if record.run in seen:
            raise EfficiencyFormatError(f"{name}: run {record.run!r} is given twice")
        seen.add(record.run)
    if not records:
        raise EfficiencyFormatError(f"{name}: no run")
    return records


def pareto_frontier(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """The runs no other run dominates, by cost ascending. ``points`` maps a run to (cost,
    effectiveness); a run is dominated by one at most as costly and at least as effective,
    better in one of the two. Runs with identical points are all on the frontier."""
    frontier = []
    for tag, (cost, value) in points.items():
        dominated = any(
            c <= cost and v >= value and (c < cost or v > value)
            for other, (c, v) in points.items()
            if other != tag
        )
        if not dominated:
            frontier.append(tag)
    return sorted(frontier, key=lambda t: (points[t][0], -points[t][1], t))
