"""Campaign evaluation that says what it left out (issue 10 §2, §3): runs that lack topics,
undefined (NaN) scores, and final qrels that lack labels."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from sqlalchemy import select

from tests.analysis.conftest import add_runs_and_pool
from tests.analysis.test_evaluation_service import FINAL
from workbench.services import evaluation as service
from workbench.services import evaluation_inputs as inputs
from workbench.services import evaluation_stability as stable
from workbench.services import qrels, run_imports
from workbench.services.adjudication import MergeSpec, apply_rule, record_decision
from workbench.services.adjudication_queue import adjudication_page, queue_figures
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError
from workbench.store.models import Judgement, User

SHORT_RUN = "q1 Q0 d3 1 9 runE\nq1 Q0 d1 2 8 runE\nq1 Q0 d2 3 7 runE\n"  # lacks q2 and q3


@pytest.fixture
def with_short_run(evaluated, tmp_path):
    """The evaluated campaign plus runE (not contributing), which has only topic q1."""
    path = tmp_path / "runE.txt"
    path.write_text(SHORT_RUN)
    with evaluated.session() as s:
        run_imports.import_runs(s, get_campaign(s, "demo"), [path], contributes=False)
    return evaluated


def test_a_run_lacking_topics_scores_0_there_and_stays_in_every_test(with_short_run):
    with with_short_run.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map", "P.10"])
    short = table.run("runE")
    assert table.topics_evaluated == ["q1", "q2", "q3"]
    assert short.missing_topics == ["q2", "q3"]
    assert all(r.missing_topics == [] for r in table.runs if r.tag != "runE")
    q1 = pytrec_eval.RelevanceEvaluator(FINAL, {"map"}).evaluate(
        {"q1": {"d3": 9.0, "d1": 8.0, "d2": 7.0}}
    )["q1"]["map"]
    assert short.per_topic["q2"]["map"] == short.per_topic["q3"]["map"] == 0.0
    assert short.summary["map"] == pytest.approx(q1 / 3)  # averaged over all 3 judged topics
    assert "runE lacks 2 judged topic(s), scored 0: q2, q3." in table.notes()
    assert table.notes()[0].startswith("Every run is evaluated over the 3 judged topics")
    comparisons = service.compare_runs(table)
    with_e = [p for p in comparisons.pairs if "runE" in (p.first, p.second)]
    assert len(with_e) == 2 * 4  # runE against the four others, on both measures
    assert {p.n_topics for p in comparisons.pairs} == {3}
    tukey = service.tukey_hsd(table, "map")
    assert tukey is not None and len(tukey.pairs) == 10


def test_the_precision_recall_curve_scores_a_lacking_topic_0_at_every_recall(with_short_run):
    """As the table's scores (trec_eval -c): runE's curve is its q1 curve over 3 topics. The
    curve once gave runE's lacking topics rankings without documents, which are 0/0 at the
    low recall points, so the mean showed no value there (a blank cell, a gap in the plot)."""
    with with_short_run.session() as s:
        campaign = get_campaign(s, "demo")
        table = service.evaluate_campaign(s, campaign, measures=["map"])
        runs = inputs.load_runs(s, campaign)
        curves = service.precision_recall(runs, inputs.resolve_qrels(s, campaign), table)
    q1 = pytrec_eval.RelevanceEvaluator(FINAL, {"iprec_at_recall"}).evaluate(
        {"q1": {"d3": 9.0, "d1": 8.0, "d2": 7.0}}
    )["q1"]
    expected = [q1[f"iprec_at_recall_{point / 10:.2f}"] / 3 for point in range(11)]
    assert curves["runE"] == pytest.approx(expected) and expected[0] > 0
    assert not any(math.isnan(value) for curve in curves.values() for value in curve)


@pytest.mark.skipif(not os.environ.get("WORKBENCH_TREC_EVAL"), reason="WORKBENCH_TREC_EVAL unset")
def test_the_missing_topic_convention_is_trec_eval_minus_c(with_short_run, tmp_path: Path):
    qrels = tmp_path / "final.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in FINAL.items() for d, g in
                             docs.items()))  # fmt: skip
    run = tmp_path / "runE.txt"
    run.write_text(SHORT_RUN)
    binary = os.environ["WORKBENCH_TREC_EVAL"]
    out = subprocess.run([binary, "-c", "-m", "map", str(qrels), str(run)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    with with_short_run.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map"])
    assert out.split()[-1] == f"{table.run('runE').summary['map']:.4f}"


def test_the_common_topic_set_names_what_it_drops(with_short_run):
    with with_short_run.session() as s:
        table = service.evaluate_campaign(
            s, get_campaign(s, "demo"), measures=["map"], scope=inputs.Scope(topic_set="common")
        )
        with pytest.raises(ServiceError, match="unknown topic set 'some'"):
            service.evaluate_campaign(
                s, get_campaign(s, "demo"), scope=inputs.Scope(topic_set="some")
            )
    assert table.topics_evaluated == ["q1"]
    assert table.dropped_topics == {"q2": ["runE"], "q3": ["runE"]}
    assert table.notes()[0] == (
        "Common-topic set: only the 1 of the 3 judged topics that every run has are evaluated; "
        "dropped: q2 (lacked by runE); q3 (lacked by runE)."
    )
    assert all(set(r.per_topic) == {"q1"} for r in table.runs)
    comparisons = service.compare_runs(table)
    assert comparisons.pairs == []  # one topic cannot be tested, and the report says so
    assert comparisons.notes == ["No test on map: fewer than 2 topics with scores."]


def test_an_undefined_score_is_reported_never_a_made_up_zero(evaluated, monkeypatch):
    """The metric module gives NaN where a measure is undefined on a topic (trec_eval -J with
    no judged document retrieved); the report names it and the tests leave that topic out."""
    real = service.evaluate

    def runA_undefined_on_q2(qrels, run, **options):  # type: ignore[no-untyped-def]
        result = real(qrels, run, **options)
        if run.tag == "runA" and "P_10" in result.per_topic["q2"]:
            result.per_topic["q2"]["P_10"] = math.nan
        return result

    monkeypatch.setattr(service, "evaluate", runA_undefined_on_q2)
    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map", "P.10"])
    assert table.run("runA").undefined == {"P_10": ["q2"]}
    assert "P_10 of runA is undefined (NaN, not 0) on topic(s) q2." in table.notes()
    topics, matrix = service.score_matrix(table, "P_10")
    assert topics == ["q1", "q3"] and not np.isnan(matrix).any()
    assert service.score_matrix(table, "map")[0] == ["q1", "q2", "q3"]
    comparisons = service.compare_runs(table)
    assert {p.n_topics for p in comparisons.pairs if p.measure == "P_10"} == {2}
    assert {p.n_topics for p in comparisons.pairs if p.measure == "map"} == {3}
    assert comparisons.notes == [
        "Tests on P_10 leave out topic(s) q2, where a run's P_10 is undefined (NaN)."
    ]


def test_final_qrels_with_documents_left_to_adjudicate_are_refused(judged, tmp_path):
    """The issue's case: a majority rule leaves ties to adjudicate; 'final' qrels then lack
    them, and evaluating or exporting them must say so or refuse."""
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        add_runs_and_pool(s, campaign, tmp_path)  # pools d11 and d12, which nobody judged
        summary = apply_rule(s, campaign, MergeSpec("majority", tie="adjudicate"))
        assert summary.queued > 0
        missing = summary.queued + 2
        expected = f"{missing} of the 14 pooled or judged documents lack a final label"
        with pytest.raises(qrels.IncompleteQrels, match=expected):
            service.evaluate_campaign(s, campaign)
        with pytest.raises(qrels.IncompleteQrels, match=expected):
            inputs.Scope().qrels(s, campaign, "final")
        allowed = inputs.Scope(allow_incomplete=True)
        table = service.evaluate_campaign(s, campaign, scope=allowed)
        stability = stable.ranking_stability(s, campaign, table, allowed)
    incomplete = [n for n in table.notes() if n.startswith("INCOMPLETE qrels")]
    assert incomplete == [
        f"INCOMPLETE qrels, evaluated as asked: {expected} (e.g. topic q1 document d11); they "
        "count as unjudged (not relevant)."
    ]
    assert stability.notes[0] == incomplete[0]
    assert len(stability.comparisons) == 3  # the assessors have no assignments: complete


def test_a_document_only_answered_cannot_judge_is_named_and_an_adjudicator_grades_it(
    judged, tmp_path
):
    """No rule can label a document whose every answer is 'cannot judge': the refusal names
    it and says what resolves it (a document with a grade beside a 'cannot judge', q1/d4, is
    not one of them); the adjudication queue offers it, and an adjudicator's grade labels
    it."""
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        add_runs_and_pool(s, campaign, tmp_path)  # pools d11 and d12, which nobody judged
        carol = s.scalar(select(User.id).where(User.username == "carol"))
        s.add(Judgement(campaign_id=campaign.id, qid="q1", docno="d11", user_id=carol,
                        cannot_judge="garbled scan"))  # fmt: skip
        s.flush()
        summary = apply_rule(s, campaign, MergeSpec("majority", tie="adjudicate"))
        with pytest.raises(qrels.IncompleteQrels) as refused:
            inputs.Scope().qrels(s, campaign, "final")
        majority = MergeSpec("majority", tie="adjudicate")
        figures = queue_figures(s, campaign.id, majority)
        page = adjudication_page(s, campaign, majority, figures, view="undecided")
        boss = s.scalars(select(User).where(User.username == "boss")).one()
        label = record_decision(s, campaign, qid="q1", docno="d11", grade=0,
                                reason="legible", adjudicator=boss)  # fmt: skip
        assert label.judges == {} and label.rule == "adjudicated"
        after = qrels.qrels_completeness(s, campaign, final=True)
        with pytest.raises(ServiceError, match="no judgement of document 'd12'"):
            record_decision(s, campaign, qid="q1", docno="d12", grade=0, reason="r",
                            adjudicator=boss)  # fmt: skip
    assert refused.value.completeness.unjudgeable == (("q1", "d11"),)
    assert (
        f"{summary.queued + 1} of the 14 pooled or judged documents lack a final label (e.g. "
        "topic q1 document d11); 1 of them has only 'cannot judge' answers (e.g. topic q1 "
        "document d11): grade them on the adjudication page, assign another judge to the "
        "topic, or have its judge revise the answer"
    ) in str(refused.value)
    assert ("q1", "d11", "undecided") in figures.keys
    # the rule's summary counts d11 as the queue does (the ties and d11; d12: nobody judged)
    assert dict(figures.counts)["undecided"] == summary.queued
    [entry] = [e for e in page.entries if e.item.docno == "d11"]
    assert entry.item.grades == {} and entry.item.proposal is None
    assert [(a.judge, a.grade, a.cannot_judge) for a in entry.answers] == [
        ("Judge 3", None, "garbled scan")
    ]
    assert len(after.missing) == len(refused.value.completeness.missing) - 1
    assert after.unjudgeable == () and ("q1", "d11") not in after.missing


def test_the_evaluate_command_offers_both_choices(with_short_run, database_url):
    from click.testing import CliRunner
    from sqlalchemy import delete

    from workbench.cli import main
    from workbench.store.models import FinalLabel

    def run(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", database_url, "evaluate", "--campaign", "demo",
                                         "-m", "map", *args])  # fmt: skip

    common = run("--topic-set", "common", "--format", "md")
    assert common.exit_code == 0, common.output
    assert "dropped: q2 (lacked by runE); q3 (lacked by runE)." in common.stdout
    assert "| e | runE |" in common.stdout and "| q2 q3 |" in common.stdout  # its own gaps
    every = run("--format", "md")
    assert "runE lacks 2 judged topic(s), scored 0: q2, q3." in every.stdout
    assert "| q2 q3 |" in every.stdout
    with with_short_run.session() as s:
        s.execute(delete(FinalLabel).where(FinalLabel.docno == "d12"))
    refused = run()
    assert refused.exit_code == 1
    assert "1 of the 14 pooled or judged documents lack a final label" in refused.stderr
    allowed = run("--allow-incomplete", "--format", "json")
    assert allowed.exit_code == 0
    summary = json.loads(allowed.stdout)["sections"][0]["data"]
    assert any(n.startswith("INCOMPLETE qrels") for n in summary["notes"])
