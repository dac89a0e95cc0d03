"""Issue 24 §1: the campaign report's defects, each reproduced as a new organiser met it,
through the public entry points (the CLI, the web pages, the JSON API)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.analysis.campaign_shapes import (
    Built,
    Shape,
    adjudicate,
    build,
    copied,
    judge,
    shaped,
)
from tests.conftest import database_copy
from workbench.trec_eval_command import run_trec_eval

TRACEBACK = "Traceback (most recent call last)"


def report_json(built: Built, *args: str) -> dict:
    result = built.cli("evaluate", "--campaign", "c", "--format", "json", *args)
    assert TRACEBACK not in result.output
    return json.loads(result.stdout)


def section(document: dict, name: str) -> dict:
    return next(s for s in document["sections"] if s["name"] == name)


@pytest.fixture(scope="session")
def adaptive_two_judges_once(tmp_path_factory, _migrated_template) -> Iterator[Built]:
    """An mm-discounted pool, two judges per topic among three assessors: each topic's primary
    judges to the budget, the secondary their sampled documents; adjudicated. Built once per
    session (about 8 s of CPU); each test gets a copy (`adaptive_two_judges`)."""
    folder = tmp_path_factory.mktemp("adaptive_two_judges")
    with database_copy(folder, _migrated_template) as url:
        with shaped(Shape(strategies=("mm-discounted",), judges=2, topics=3), folder, url) as built:
            judge(built)
            adjudicate(built)
        yield built


@pytest.fixture
def adaptive_two_judges(adaptive_two_judges_once: Built, tmp_path: Path) -> Iterator[Built]:
    """This test's own copy of `adaptive_two_judges_once` (its database and files)."""
    with copied(adaptive_two_judges_once, tmp_path) as built:
        yield built


def test_one_assessors_topic_does_not_take_the_report_down(adaptive_two_judges):
    """The issue's first case: `--allow-incomplete --stability` printed a traceback
    (TopicError: every judgement of topic 302 is negative, from ranking_stability)."""
    built = adaptive_two_judges
    result = built.cli("evaluate", "--campaign", "c", "--allow-incomplete", "--format", "text")
    assert TRACEBACK not in result.output
    document = report_json(built, "--allow-incomplete", "--section", "ranking-stability")
    stability = section(document, "ranking-stability")
    assert stability["available"], stability
    notes = " ".join(stability["notes"])
    # judge3 never judged topic 301: their qrels hold only its unjudged -1 entries
    assert "judge3" in notes and "301" in notes and "left out" in notes
    compared = {c["qrels"] for c in stability["data"]["comparisons"]}
    assert compared == {"assessor judge1", "assessor judge2", "assessor judge3"}
    web = built.client().get("/reports/1/evaluation?allow_incomplete=1").get_data(as_text=True)
    assert 'id="evaluation-options"' in web and 'id="section-ranking-stability"' in web
    assert "could not be computed" not in web


def test_a_section_that_raises_shows_its_reason_and_the_rest_is_built(
    adaptive_two_judges, monkeypatch
):
    from workbench.services import evaluation

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in the Tukey section")

    monkeypatch.setattr(evaluation, "tukey_hsd", broken)
    document = report_json(adaptive_two_judges, "--allow-incomplete")
    failed = section(document, "tukey")
    assert not failed["available"]
    assert "RuntimeError: a bug in the Tukey section" in failed["reason"]
    assert section(document, "summary")["available"]
    assert section(document, "pairwise-tests")["available"]


def test_secondary_judges_of_an_adaptive_pool_finish(adaptive_two_judges):
    built = adaptive_two_judges
    for name in built.shape.assessors():
        for assignment in built.api("/assignments", name)["assignments"]:
            done = assignment["progress"]
            assert done["judged"] == done["total"], (name, assignment)
        page = built.client(name).get("/assess/").get_data(as_text=True)
        for judged, total in re.findall(r"(\d+) / (\d+)</td>", page):
            assert judged == total
    overall = built.api("/campaigns/c/progress")["overall"]
    assert overall["judged"] == overall["total"] > 0
    # raising the budget gives the primary judges more to do: progress falls below 100 %
    client = built.client()
    raised = client.post("/api/v1/campaigns/c/pools/1/adaptive/budget", json={"budget": 8})
    assert raised.status_code == 200
    overall = built.api("/campaigns/c/progress")["overall"]
    assert overall["judged"] < overall["total"]
    judge(built)
    overall = built.api("/campaigns/c/progress")["overall"]
    assert overall["judged"] == overall["total"]


def test_adaptive_queues_sharing_documents_with_another_pool_finish(database_url, tmp_path):
    """Found by the matrix: a primary judge whose next revealed batch was already judged under
    another pool's assignment of the topic saw `done` before the budget was used; a secondary
    judge who had judged the topic's documents there could not open `/next` (a 500)."""
    built = build(Shape(strategies=("take", "mm-discounted"), judges=2), tmp_path, database_url)
    judge(built)
    for name in built.shape.assessors():
        client = built.client(name)
        for assignment in built.api("/assignments", name)["assignments"]:
            state = client.get(f"/api/v1/assignments/{assignment['id']}/next")
            assert state.status_code == 200 and state.get_json()["done"], (name, assignment)
    status = built.api("/campaigns/c/pools/2/adaptive")["topics"]
    assert all(t["revealed"] == t["judged"] == t["budget"] for t in status), status
    overall = built.api("/campaigns/c/progress")["overall"]
    assert overall["judged"] == overall["total"]


def test_a_summary_only_measure_is_in_the_summary_and_the_tests_say_why_not_there(
    adaptive_two_judges,
):
    built = adaptive_two_judges
    sections = ("summary", "per-topic", "pairwise-tests")
    document = report_json(built, "-m", "gm_map", "-m", "map", "--qrels", "reference",
                           *(f"--section={name}" for name in sections))  # fmt: skip
    assert [s["name"] for s in document["sections"]] == list(sections)
    summary = section(document, "summary")
    rows = summary["tables"][0]["rows"]
    assert all(row["gm_map"] is not None for row in rows)
    for name in ("per-topic", "pairwise-tests"):
        notes = " ".join(section(document, name)["notes"])
        assert "gm_map" in notes and "per-topic value" in notes
    text = built.cli("evaluate", "--campaign", "c", "-m", "gm_map", "-m", "map",
                     "--qrels", "reference", "--section", "summary").stdout  # fmt: skip
    header = next(line for line in text.splitlines() if re.match(r"\s+Run\s", line))
    assert header.split()[:3] == ["Run", "map", "gm_map"]


def test_dotted_measure_names_work_in_every_section(adaptive_two_judges):
    """The issue's case: P.5 worked in the main table, but the stability and reusability said
    "unknown measure 'P_5'". The analyses take the first measure asked for."""
    names = ("ranking-stability", "reusability-run", "reusability-group", "power")
    document = report_json(adaptive_two_judges, "-m", "P.5", "-m", "map", "--allow-incomplete",
                           *(f"--section={name}" for name in names))  # fmt: skip
    for name in names:
        found = section(document, name)
        assert found["available"], found
        assert found["data"]["measure"] == "P_5"


@pytest.fixture
def with_idle_pool(database_url, tmp_path) -> Built:
    """Pool 1 (depth) judged to the end; pool 2, built later, assigned to nobody."""
    built = build(Shape(strategies=("depth",), judges=1, idle_pool=True), tmp_path, database_url)
    judge(built)
    adjudicate(built)
    return built


def test_completeness_reusability_and_assignment_follow_the_scope_of_pools(with_idle_pool):
    built = with_idle_pool
    exported = built.cli("export", "qrels", "--campaign", "c", "--final")
    assert "incomplete" not in exported.stderr.lower()
    document = report_json(built, "--section", "reusability-run")
    assert document["scope"]["pools"] == [1]
    assert "pool 1" in document["scope"]["description"]
    reusability = section(document, "reusability-run")
    assert reusability["data"]["pools"] == [1]
    # the other pool on request: its documents lack labels, so the final qrels are incomplete
    refused = built.cli("evaluate", "--campaign", "c", "--pools", "1,2", "--format", "json",
                        ok=False)  # fmt: skip
    assert refused.exit_code == 1 and "lack a final label" in refused.stderr
    summary = section(json.loads(refused.stdout), "summary")  # every section says why
    assert not summary["available"] and "lack a final label" in summary["reason"]
    wider = built.cli("export", "qrels", "--campaign", "c", "--final", "--pools", "1,2", ok=False)
    assert wider.exit_code == 1 and "lack a final label" in wider.output
    page = built.client().get("/admin/campaigns/1/assignments").get_data(as_text=True)
    assert re.search(r'<option value="1"[^>]*selected', page), "pool 1 is the default"
    card = built.client().get("/admin/campaigns/1?pool=2").get_data(as_text=True)
    assert "/admin/campaigns/1/assignments?pool=2" in card  # from pool 2's card: assign it
    assert built.api("/campaigns/c/progress")["pools"] == [1]
    progress = json.loads(built.cli("progress", "--campaign", "c", "--format", "json").stdout)
    assert progress["pools"] == [1] and progress["overall"]["percent"] == 100.0
    other = json.loads(built.cli("progress", "--campaign", "c", "--pools", "2",
                                 "--format", "json").stdout)  # fmt: skip
    assert other["scope"] == "pool 2 (chosen)" and other["overall"]["total"] == 0
    web = built.client().get("/admin/campaigns/1/progress?pools=1,2").get_data(as_text=True)
    assert "Scope: pools 1, 2 (chosen)." in web


def test_an_archived_pool_is_never_in_scope(database_url, tmp_path):
    built = build(Shape(archived_pool=True), tmp_path, database_url)
    judge(built)
    overall = built.api("/campaigns/c/progress")["overall"]
    assert overall["judged"] == overall["total"]  # the archived pool's assignments are out
    refused = built.cli("evaluate", "--campaign", "c", "--pools", "1", ok=False)
    assert refused.exit_code == 1 and "archived" in refused.output


def test_qrels_topics_outside_the_campaign_are_out_of_scope_by_default(database_url, tmp_path):
    built = build(Shape(topics=3), tmp_path, database_url)
    official = tmp_path / "official.qrels"
    reference = (tmp_path / "files" / "reference.qrels").read_text()
    official.write_text(reference + "".join(f"{q} 0 x{q} 1\n" for q in range(901, 921)))
    built.cli("import", "qrels", "--campaign", "c", str(official), "--name", "official")
    in_scope = report_json(built, "--qrels", "official", "-m", "map", "--section", "summary")
    assert in_scope["scope"]["outside_topics"] == [str(q) for q in range(901, 921)]
    assert any("20 qrels topic(s) outside the campaign" in n for n in in_scope["notes"])
    expected = trec_eval_maps(tmp_path / "files", tmp_path / "files" / "reference.qrels")
    maps = {r["Run"]: r["map"] for r in section(in_scope, "summary")["tables"][0]["rows"]}
    assert maps == pytest.approx(expected, abs=5e-5)
    diluted = report_json(built, "--qrels", "official", "-m", "map", "--section", "summary",
                          "--outside-topics")  # fmt: skip
    maps = {r["Run"]: r["map"] for r in section(diluted, "summary")["tables"][0]["rows"]}
    assert maps["r1"] == pytest.approx(expected["r1"] * 3 / 23)


def test_qrels_judging_none_of_the_campaigns_topics_are_refused_not_scored_0(
    database_url, tmp_path
):
    """Qrels of another collection's topics only: every output refuses and says what to do,
    instead of a table of zeros (trec_eval without -c refuses too: "No queries with both
    results and relevance info"); asked to, the outside topics are evaluated (every run lacks
    them: 0)."""
    built = build(Shape(topics=3), tmp_path, database_url)
    foreign = tmp_path / "foreign.qrels"
    foreign.write_text("".join(f"{q} 0 x{q} 1\n" for q in range(901, 913)))
    built.cli("import", "qrels", "--campaign", "c", str(foreign), "--name", "foreign")
    why = ("these qrels (qrels set foreign) judge none of the campaign's topics: their 12 "
           "topic(s) (901, 902, 903, 904, 905, 906, 907, 908, 909, 910, ...) are outside the "
           "campaign")  # fmt: skip
    for output in ("json", "trec"):
        refused = built.cli("evaluate", "--campaign", "c", "--qrels", "foreign", "-m", "map",
                            "--format", output, ok=False)  # fmt: skip
        assert refused.exit_code == 1 and why in refused.stderr, output
    page = built.client().get("/reports/1/evaluation?qrels=foreign&measures=map")
    assert page.status_code == 200
    assert why.replace("'", "&#39;") in page.get_data(as_text=True), page.get_data(as_text=True)
    asked = built.cli("evaluate", "--campaign", "c", "--qrels", "foreign", "-m", "map",
                      "--format", "trec", "--outside-topics")  # fmt: skip
    assert asked.stdout.count("map                   \tall\t0.0000\n") == len(
        list((tmp_path / "files").glob("*.run"))
    )


def trec_eval_maps(folder: Path, qrels: Path) -> dict[str, float]:
    maps = {}
    for run in sorted(folder.glob("*.run")):
        out, err = io.StringIO(), io.StringIO()
        assert run_trec_eval(["-c", "-m", "map", str(qrels), str(run)], out, err) == 0
        maps[run.stem] = float(out.getvalue().split()[-1])
    return maps


@pytest.fixture(scope="session")
def demo_once(tmp_path_factory, _migrated_template) -> Iterator[Built]:
    """The demo campaign and an admin with a token, built once per session (`demo` copies it)."""
    folder = tmp_path_factory.mktemp("demo")
    with database_copy(folder, _migrated_template) as url:
        built = Built(Shape(), url, folder)
        built.cli("demo", "--no-serve")
        out = built.cli("user", "add", "boss", "--role", "admin", "--token").output
        built.tokens["boss"] = re.findall(r"\S{20,}", out)[-1]
        yield built


@pytest.fixture
def demo(demo_once: Built, tmp_path: Path) -> Iterator[Built]:
    """This test's own copy of the demo campaign."""
    with copied(demo_once, tmp_path) as built:
        yield built


def test_the_trec_format_is_the_same_in_every_entry_point(demo):
    query = "qrels=demo-reference&measures=map+P.10"
    cli = demo.cli("evaluate", "--campaign", "demo", "--qrels", "demo-reference", "-m", "map",
                   "-m", "P.10", "--format", "trec")  # fmt: skip
    web = demo.client().get(f"/reports/1/evaluation.trec?{query}")
    api = demo.client().get(f"/api/v1/campaigns/demo/report.trec?{query}")
    assert web.status_code == api.status_code == 200
    assert cli.stdout_bytes == web.get_data() == api.get_data()
    assert cli.stdout.count("map                   \tall\t") == 5
    assert "runid" not in cli.stdout
    assert len(cli.stdout.splitlines()) == 5 * (8 * 2 + 2)  # 5 runs x (8 topics + all) x 2
    names = {
        fmt: demo.client()
        .get(f"/reports/1/evaluation.{fmt}?{query}")
        .headers["Content-Disposition"]
        for fmt in ("text", "trec")
    }
    assert names["text"] != names["trec"]


def test_the_trec_format_evaluates_each_run_once_without_building_a_report(demo, monkeypatch):
    from workbench.reports import pipeline
    from workbench.services import evaluation

    calls = []
    real = evaluation.evaluate

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    def no_report(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the trec format builds no report")

    monkeypatch.setattr(evaluation, "evaluate", counted)
    monkeypatch.setattr(pipeline, "build_report", no_report)
    demo.cli("evaluate", "--campaign", "demo", "--qrels", "demo-reference", "--format", "trec")
    assert len(calls) == 5


@pytest.mark.skipif(not os.environ.get("WORKBENCH_TREC_EVAL"), reason="WORKBENCH_TREC_EVAL unset")
def test_the_trec_format_equals_the_real_trec_eval(demo, tmp_path):
    from workbench.services import evaluation_inputs as inputs
    from workbench.services.campaigns import get_campaign
    from workbench.trec import write_qrels, write_run

    cli = demo.cli("evaluate", "--campaign", "demo", "--qrels", "demo-reference", "-m", "map",
                   "-m", "P.10", "-m", "gm_map", "--format", "trec")  # fmt: skip
    from workbench.store import open_store

    store = open_store(demo.url)
    with store.read_session() as s:
        campaign = get_campaign(s, "demo")
        qrels = inputs.resolve_qrels(s, campaign, "demo-reference").qrels
        runs = inputs.load_runs(s, campaign)
    store.dispose()
    write_qrels(qrels, tmp_path / "q")
    expected = ""
    for run in runs:
        write_run(run.trec_run, tmp_path / run.tag)
        flags = ["-c", "-q", "-l", "1", "-m", "map", "-m", "P.10", "-m", "gm_map"]
        files = [str(tmp_path / "q"), str(tmp_path / run.tag)]
        binary = os.environ["WORKBENCH_TREC_EVAL"]
        expected += subprocess.run(
            [binary, *flags, *files], capture_output=True, text=True, check=True
        ).stdout
    assert cli.stdout == expected


def test_downloads_carry_every_section_in_every_format(demo):
    query = "qrels=demo-reference&measures=map+P.10"
    client = demo.client()
    document = client.get(f"/reports/1/evaluation.json?{query}").get_json()
    names = [s["name"] for s in document["sections"]]
    assert {"summary", "per-topic", "pairwise-tests", "tukey", "ranking-stability"} <= set(names)
    for fmt in ("text", "md", "latex", "csv"):
        body = client.get(f"/reports/1/evaluation.{fmt}?{query}").get_data(as_text=True)
        for found in document["sections"]:
            assert found["title"] in body, (fmt, found["name"])
        assert body.count("Accuracy is not used to rank retrieval runs") == 1, fmt  # said once
    bundle = zipfile.ZipFile(io.BytesIO(client.get(f"/reports/1/evaluation.zip?{query}").data))
    files = set(bundle.namelist())
    for name in names:
        assert f"{name}.csv" in files and f"{name}.md" in files, name


def test_the_bundle_holds_every_format_of_the_cli(demo):
    """`evaluate --format X` gives the bytes of the zip bundle's report.X (one renderer per
    format), so comparing a download with the bundle compares it with the CLI."""
    from workbench.reports.formats import REPORT_FORMATS

    args = ("evaluate", "--campaign", "demo", "--qrels", "demo-reference", "-m", "map")
    bundle = zipfile.ZipFile(io.BytesIO(demo.cli(*args, "--format", "zip").stdout_bytes))
    for fmt, found in REPORT_FORMATS.items():
        if fmt in ("zip", "trec"):
            continue
        assert demo.cli(*args, "--format", fmt).stdout_bytes == bundle.read(
            f"report.{found.extension}"
        ), fmt
    names = set(bundle.namelist())
    assert {"summary.csv", "per-topic-bars.svg", "precision-recall-curves.svg"} <= names


def test_csv_values_have_no_float_noise_and_markdown_no_entities(demo):
    query = "qrels=demo-reference&measures=map+P.10"
    client = demo.client()
    body = client.get(f"/reports/1/evaluation.csv?{query}").get_data(as_text=True)
    cells = [cell for row in csv.reader(io.StringIO(body)) for cell in row]
    assert "0.6375" in cells and "0.45" in cells  # P_10 of beta-bm25 and gamma-rm3
    numbers = [c for c in cells if re.fullmatch(r"-?\d+\.\d+(e-?\d+)?", c)]
    digits = [len(re.sub(r"e.*|\.|^-?0\.0*|^-", "", c)) for c in numbers]
    assert numbers and max(digits) <= 15  # 15 significant digits at most: no float noise
    markdown = client.get(f"/reports/1/evaluation.md?{query}").get_data(as_text=True)
    assert "grade >= 1" in markdown and "&gt;" not in markdown


def test_an_incomplete_qrels_export_is_valid_trec_qrels(database_url, tmp_path):
    built = build(Shape(topics=3), tmp_path, database_url)
    judge(built, share=0.5)
    adjudicate(built)
    path = tmp_path / "partial.qrels"
    result = built.cli("export", "qrels", "--campaign", "c", "--final", "--allow-incomplete",
                       "-o", str(path))  # fmt: skip
    assert "incomplete" in result.stderr.lower()
    assert not [line for line in path.read_text().splitlines() if line.startswith("#")]
    out, err = io.StringIO(), io.StringIO()
    run = tmp_path / "files" / "r1.run"
    assert run_trec_eval(["-m", "map", str(path), str(run)], out, err) == 0, err.getvalue()
    query = "source=final&allow_incomplete=1"
    download = built.client().get(f"/admin/campaigns/1/download/qrels?{query}")
    assert "incomplete" in download.headers["Content-Disposition"]
    assert not download.get_data(as_text=True).startswith("#")
    page = built.client().get("/admin/campaigns/1").get_data(as_text=True)
    assert "incomplete" in page


def test_clicks_against_incomplete_final_qrels_from_the_web(database_url, tmp_path):
    built = build(Shape(topics=3, query_log=True), tmp_path, database_url)
    judge(built, share=0.5)
    adjudicate(built)
    client = built.client()
    refused = client.get("/querylogs/1/agreement?name=clicks").get_data(as_text=True)
    assert "lack a final label" in refused and 'name="allow_incomplete"' in refused
    allowed = client.get("/querylogs/1/agreement?name=clicks&allow_incomplete=1")
    page = allowed.get_data(as_text=True)
    assert allowed.status_code == 200 and 'id="click-agreement"' in page
    assert "INCOMPLETE" in page
    document = report_json(built, "--allow-incomplete", "--section", "clicks")
    clicks = section(document, "clicks")
    assert clicks["available"], clicks
