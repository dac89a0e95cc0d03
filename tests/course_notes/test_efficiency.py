"""Efficiency sidecar files (JSON and CSV) and the Pareto frontier."""

from __future__ import annotations

import json

import pytest

from workbench.efficiency import EfficiencyFormatError, pareto_frontier, read_efficiency


def test_json_object_and_list() -> None:
    one = read_efficiency(json.dumps({
        "run": "bm25", "mean_latency_ms": 12.5, "throughput_qps": 80, "index_size_bytes": 1e9,
        "hardware": "1 core", "cost_per_1000_queries": 0.02,
        "per_query_latency_ms": {"401": 10.0, "402": 15.0},
    }))  # fmt: skip
    assert len(one) == 1
    e = one[0]
    assert (e.run, e.mean_latency_ms, e.throughput_qps, e.hardware) == (
        "bm25",
        12.5,
        80.0,
        "1 core",
    )
    assert e.per_query_latency_ms == {"401": 10.0, "402": 15.0}
    many = read_efficiency('[{"run": "a", "per_query_latency_ms": {"1": 2, "2": 4}}, {"run": "b"}]')
    assert many[0].mean_latency_ms == 3.0  # the mean of the per-query latencies
    assert many[1].mean_latency_ms is None and many[1].per_query_latency_ms == {}


def test_csv_run_rows_and_query_rows() -> None:
    text = (
        "run,qid,latency_ms,mean_latency_ms,throughput_qps,hardware\n"
        "bm25,,,12,80,laptop\n"
        "bm25,1,10,,,\n"
        "bm25,2,14,,,\n"
        "dense,1,40,,,\n"
        "dense,2,60,,,\n"
    )
    records = {r.run: r for r in read_efficiency(text, name="eff.csv")}
    assert records["bm25"].mean_latency_ms == 12.0  # given, kept
    assert records["bm25"].per_query_latency_ms == {"1": 10.0, "2": 14.0}
    assert records["dense"].mean_latency_ms == 50.0
    assert records["dense"].p95_latency_ms == 60.0
    assert records["bm25"].hardware == "laptop"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("run,speed\nbm25,3\n", r"eff\.csv:1: expected a header"),
        ("run,mean_latency_ms\nbm25,fast\n", r"eff\.csv:2: expected a number"),
        ("run,mean_latency_ms\nbm25,-1\n", r"eff\.csv:2: expected a finite number >= 0"),
        ("run,mean_latency_ms\nbm25,1\nbm25,2\n", r"eff\.csv:3: run 'bm25' has two rows"),
        ("run,qid,latency_ms\nbm25,1,3\nbm25,1,4\n", r"eff\.csv:3: query '1' .* twice"),
        ("run,latency_ms\nbm25,3\n", r"eff\.csv:2: latency_ms needs a qid"),
        ("run,mean_latency_ms\nbm25\n", r"eff\.csv:2: expected 2 fields"),
        ('{"run": "a", "speed": 1}', "unknown fields speed"),
        ('{"mean_latency_ms": 1}', "no 'run' field"),
        ('[{"run": "a"}, {"run": "a"}]', "run 'a' is given twice"),
        ('{"run": "a", "mean_latency_ms": true}', "finite number"),
        ('{"run": "a", "mean_latency_ms": Infinity}', "finite number"),
        ('{"run": "a",', r"eff\.csv:1: not valid JSON"),
        ('[{"run": "a"},\n{"run": "b"', r"eff\.csv:2: not valid JSON"),
        ("[" * 100_000, "nested deeper than 32 levels"),  # was a RecursionError
        ('{"run": "a", "per_query_latency_ms": {"1": [[[[[[' + "[" * 40, "nested deeper"),
        ('{"run": "a\\u0000"}', "NUL"),
        ('{"run": "a", "index_size_bytes": 1' + "0" * 30 + "}", "out of range"),
    ],
)
def test_bad_sidecars_are_refused_with_the_place(text, message) -> None:
    with pytest.raises(EfficiencyFormatError, match=message):
        read_efficiency(text, name="eff.csv")


def test_pareto_frontier() -> None:
    """(latency, map): c is dominated by a (faster and better); d ties b exactly."""
    points = {"a": (10.0, 0.30), "b": (50.0, 0.40), "c": (20.0, 0.25), "d": (50.0, 0.40),
              "e": (5.0, 0.10), "f": (60.0, 0.40)}  # fmt: skip
    assert pareto_frontier(points) == ["e", "a", "b", "d"]
    assert pareto_frontier({"only": (1.0, 0.0)}) == ["only"]
    assert pareto_frontier({}) == []
