"""Issue 24 §3: the report on every campaign shape, through the public entry points.

Hypothesis (derandomized, so CI sees the same cases) draws campaign shapes
(`campaign_shapes.Shape`: 1-3 pools of different strategies, adaptive ones with primary and
secondary judges, 1-3 judges per topic, an all-negative topic, a topic nobody judged, a run
missing topics, an archived pool, a pool nobody was assigned, a query log), how far the
judging went (to the end, or half way), whether incomplete qrels are allowed, the measures
(dotted and summary-only ones among them) and the paired test. Each campaign is built with
the CLI and judged through the API; then:

- progress: every assignment is done (`/next`) exactly when its progress says judged ==
  total, and the campaign's progress is 100 % exactly when every assignment is done;
- every section of the report is built or says why not, and none fails (a bug);
- every format renders, and the CLI's bytes equal the web download's and the API's: the
  CLI is run for json, zip and trec, and the zip bundle's report.EXT is the CLI's --format
  EXT (`test_report_defects.test_the_bundle_holds_every_format_of_the_cli`), so the text,
  csv, md and latex downloads are compared with the CLI's bundle.

The cases are the issue's own (`ISSUE_CASES`) and `WORKBENCH_MATRIX_EXAMPLES` draws (default
6; a few minutes on 2 cores), one test each (`matrix_cases`), and a test checks that together
they cover every factor.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.analysis.campaign_shapes import STRATEGY_FLAGS, Built, Shape, adjudicate, build, judge
from workbench.reports.formats import REPORT_FORMATS
from workbench.stats import PAIRED_TESTS

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("WORKBENCH_MATRIX_EXAMPLES", "6"))
CLI_FORMATS = ("json", "zip", "trec")
MEASURE_SETS = (
    ("map", "P.10"),
    ("P.5", "gm_map", "ndcg_cut.10"),
    ("gm_map", "P.5,10"),
    ("bpref", "recip_rank", "num_q"),
)


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    strategies = draw(st.lists(st.sampled_from(tuple(STRATEGY_FLAGS)), min_size=1, max_size=3,
                               unique=True))  # fmt: skip
    return Shape(
        strategies=tuple(strategies),
        judges=draw(st.integers(1, 3)),
        all_negative=draw(st.booleans()),
        unjudged_topic=draw(st.booleans()),
        short_run=draw(st.booleans()),
        idle_pool=draw(st.booleans()),
        archived_pool=draw(st.booleans()),
        query_log=draw(st.booleans()),
    )


CASES = st.fixed_dictionaries(
    {
        "shape": shapes(),
        "complete": st.booleans(),
        "allow_incomplete": st.booleans(),
        "measures": st.sampled_from(MEASURE_SETS),
        "test": st.sampled_from(tuple(PAIRED_TESTS)),
    }
)
ISSUE_CASES = [  # the organiser's campaigns of §1
    {"shape": Shape(strategies=("mm-discounted",), judges=2, topics=3), "complete": True,
     "allow_incomplete": True, "measures": ("P.5", "gm_map"), "test": "bootstrap"},
    {"shape": Shape(strategies=("depth", "stratified"), judges=1, idle_pool=True,
                    archived_pool=True, query_log=True, unjudged_topic=True),
     "complete": False, "allow_incomplete": True, "measures": ("bpref", "recip_rank", "num_q"),
     "test": "wilcoxon"},
    {"shape": Shape(strategies=("take", "mm-discounted", "fusion"), judges=3, all_negative=True,
                    short_run=True), "complete": False, "allow_incomplete": False,
     "measures": ("gm_map", "P.5,10"), "test": "sign"},
]  # fmt: skip


def matrix_cases() -> list[dict]:
    """The cases the matrix runs: the issue's, then Hypothesis' derandomized draws."""
    drawn: list[dict] = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case=CASES)
    def collect(case: dict) -> None:
        drawn.append(case)

    collect()
    return [*ISSUE_CASES, *drawn[:EXAMPLES]]


RUN = matrix_cases()


def describe(case: dict) -> str:
    measures = "+".join(case["measures"])
    state = "complete" if case["complete"] else "half"
    allowed = "allowed" if case["allow_incomplete"] else "refused"
    return f"{case['shape'].describe()} {state} incomplete-{allowed} {measures} {case['test']}"


@pytest.mark.parametrize("case", RUN, ids=[describe(c) for c in RUN])
def test_the_report_on_every_campaign_shape(tmp_path: Path, case: dict) -> None:
    shape: Shape = case["shape"]
    built = build(shape, tmp_path, f"sqlite:///{tmp_path / 'store.sqlite'}")
    try:
        judge(built, share=1.0 if case["complete"] else 0.5)
        check_progress(built, case["complete"])
        adjudicate(built)
        check_report(built, case)
    finally:
        if built._app is not None:
            from workbench.web.db import get_store

            with built.app.app_context():
                get_store().dispose()


def check_progress(built: Built, complete: bool) -> None:
    """Each assignment is done (its queue finished) exactly when its progress is full; the
    campaign is at 100 % exactly when every assignment is."""
    every_done = True
    for name in built.shape.assessors():
        client = built.client(name)
        for assignment in built.api("/assignments", name)["assignments"]:
            state = client.get(f"/api/v1/assignments/{assignment['id']}/next").get_json()
            after = next(
                a for a in built.api("/assignments", name)["assignments"]
                if a["id"] == assignment["id"]
            )["progress"]  # fmt: skip
            assert state["done"] == (after["judged"] == after["total"]), (name, state, after)
            every_done &= state["done"]
    overall = built.api("/campaigns/c/progress")["overall"]
    assert (overall["judged"] == overall["total"]) == every_done, overall
    if complete:
        assert every_done and overall["percent"] == (100.0 if overall["total"] else 0.0)


def check_report(built: Built, case: dict) -> None:
    args = ["--test", case["test"], *(a for m in case["measures"] for a in ("-m", m))]
    query = {"test": case["test"], "measures": " ".join(case["measures"])}
    if case["allow_incomplete"]:
        args.append("--allow-incomplete")
        query["allow_incomplete"] = "1"
    cli = {
        fmt: built.cli("evaluate", "--campaign", "c", "--format", fmt, *args, ok=False)
        for fmt in CLI_FORMATS
    }
    bundle = zipfile.ZipFile(io.BytesIO(cli["zip"].stdout_bytes))
    expected = {fmt: result.stdout_bytes for fmt, result in cli.items()}
    for fmt, report_format in REPORT_FORMATS.items():
        if fmt not in expected:
            expected[fmt] = bundle.read(f"report.{report_format.extension}")
    document = json.loads(cli["json"].stdout)
    summary = document["sections"][0]
    for fmt, result in cli.items():  # exit 1 (with the report) when no run can be evaluated
        assert "Traceback" not in result.output, (fmt, result.output)
        assert result.exit_code == (0 if summary["available"] else 1), (fmt, result.output[-500:])
    for found in document["sections"]:
        assert found["available"] or found["reason"], found["name"]
        assert not (found.get("reason") or "").startswith("the section failed"), found
    if not summary["available"]:  # refused qrels: the only reason the runs cannot be evaluated
        assert not case["allow_incomplete"] and "lack" in summary["reason"], summary
    elif "gm_map" in case["measures"]:
        assert "gm_map" in summary["data"]["columns"]
    client = built.client()
    page = client.get(f"/reports/1/evaluation?{urlencode(query)}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'id="evaluation-options"' in html
    for found in document["sections"]:
        assert f'id="section-{found["name"]}"' in html
    for fmt, data in expected.items():
        web = client.get(f"/reports/1/evaluation.{fmt}?{urlencode(query)}")
        api = client.get(f"/api/v1/campaigns/c/report.{fmt}?{urlencode(query)}")
        if fmt == "trec" and cli["trec"].exit_code != 0:  # refused everywhere, with the reason
            assert web.status_code == 302 and api.status_code == 400, fmt
            assert api.get_json()["error"] in cli["trec"].output
            continue
        assert web.status_code == api.status_code == 200, (fmt, web.status_code, api.status_code)
        assert data == web.get_data() == api.get_data(), fmt


def test_the_matrix_covers_every_factor() -> None:
    """Every strategy, judge count, flag (both ways), judging state, incomplete-qrels choice,
    measure set and paired test is in some case the matrix runs (a check of its coverage,
    without building anything)."""
    cases = RUN
    shapes_run = [c["shape"] for c in cases]
    assert {s for shape in shapes_run for s in shape.strategies} == set(STRATEGY_FLAGS)
    assert {shape.judges for shape in shapes_run} == {1, 2, 3}
    assert any(len(shape.strategies) == 3 for shape in shapes_run)
    for flag in ("all_negative", "unjudged_topic", "short_run", "idle_pool", "archived_pool",
                 "query_log"):  # fmt: skip
        assert {getattr(shape, flag) for shape in shapes_run} == {True, False}, flag
    for key in ("complete", "allow_incomplete"):
        assert {c[key] for c in cases} == {True, False}, key
    assert {c["measures"] for c in cases} >= set(MEASURE_SETS)
    assert {c["test"] for c in cases} == set(PAIRED_TESTS)
