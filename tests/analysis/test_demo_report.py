"""A full report built from the demo campaign: simulated judging, adjudication, evaluation."""

from __future__ import annotations

import io
import json
import zlib

import numpy as np
import pytest
import pytrec_eval
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import select

from workbench import demo
from workbench.reports import evaluation as report
from workbench.reports.tables import FORMATS, render
from workbench.services import evaluation as service
from workbench.services import evaluation_inputs as inputs
from workbench.services import evaluation_stability as stable
from workbench.services.adjudication import MergeSpec, apply_rule
from workbench.services.agreement import agreement_report
from workbench.services.agreement_tables import agreement_tables
from workbench.services.campaigns import get_campaign
from workbench.services.current_judgements import current_judgements
from workbench.services.exports import export_qrels
from workbench.store.models import (
    Assignment,
    Judgement,
    PoolEntry,
    QrelsEntry,
    QrelsSet,
    Run,
    User,
)
from workbench.store.runs import load_run


def simulated_grade(reference: int, docno: str, username: str) -> int:
    """The reference grade, changed by one for about one document in five per assessor."""
    if zlib.crc32(f"{docno}/{username}".encode()) % 5 == 0:
        return reference - 1 if reference == 2 else reference + 1
    return reference


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    from workbench.store import open_store

    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite'}"
    store = open_store(url, upgrade=True)
    demo.create_demo(store)
    with store.session() as s:
        campaign = get_campaign(s, demo.CAMPAIGN)
        reference_set = s.scalar(select(QrelsSet).where(QrelsSet.campaign_id == campaign.id))
        reference = {
            (e.qid, e.docno): e.rel
            for e in s.scalars(
                select(QrelsEntry).where(QrelsEntry.qrels_set_id == reference_set.id)
            )
        }
        for assignment in s.scalars(
            select(Assignment).where(Assignment.campaign_id == campaign.id)
        ):
            user = s.get(User, assignment.user_id)
            docnos = s.scalars(
                select(PoolEntry.docno).where(
                    PoolEntry.pool_id == assignment.pool_id, PoolEntry.qid == assignment.qid
                )
            )
            for docno in docnos:
                grade = simulated_grade(reference.get((assignment.qid, docno), 0), docno,
                                        user.username)  # fmt: skip
                s.add(Judgement(campaign_id=campaign.id, qid=assignment.qid, docno=docno,
                                user_id=user.id, grade=grade, time_spent_ms=1000))  # fmt: skip
    yield store
    store.dispose()


def test_demo_agreement_matches_scikit_learn(demo_store):
    with demo_store.session() as s:
        campaign = get_campaign(s, demo.CAMPAIGN)
        agreement = agreement_report(s, campaign, n_bootstrap=100)
        names = {u.id: u.username for u in s.scalars(select(User))}
        grades: dict[tuple[str, str], dict[str, int]] = {}
        for j in current_judgements(s, campaign.id):
            grades.setdefault((j.qid, j.docno), {})[names[j.user_id]] = int(j.grade >= 1)
    assert len(agreement.per_pair) == 3
    for pair in agreement.per_pair:
        both = [g for g in grades.values() if pair.first in g and pair.second in g]
        a = [g[pair.first] for g in both]
        b = [g[pair.second] for g in both]
        assert pair.n_items == len(both) > 0
        assert pair.kappa == pytest.approx(cohen_kappa_score(a, b))
    text = "\n".join(render(t, "text") for t in agreement_tables(agreement))
    assert "Fleiss kappa" in text and agreement.overall.reading in text


def test_demo_evaluation_report_equals_the_exported_qrels(demo_store, tmp_path):
    with demo_store.session() as s:
        campaign = get_campaign(s, demo.CAMPAIGN)
        summary = apply_rule(s, campaign, MergeSpec("majority", tie="lower"))
        assert summary.queued == 0 and summary.labelled > 0
        path = tmp_path / "final.qrels"
        with path.open("w") as out:
            export_qrels(s, campaign, out, final=True)
        table = service.evaluate_campaign(s, campaign, "final", ["map", "P.10", "ndcg_cut.10"])
        comparisons = service.compare_runs(table, test="randomization", correction="holm",
                                           n_resamples=2000)  # fmt: skip
        runs = {r.tag: load_run(s, r).to_dict() for r in s.scalars(select(Run))}
        reference = service.evaluate_campaign(s, campaign, "demo-reference", ["map"])
        choices = inputs.qrels_choices(s, campaign)
        maps = service.evaluate_campaign(s, campaign, "final", ["map"])
        stability = stable.ranking_stability(s, campaign, maps, inputs.Scope())
        final = inputs.resolve_qrels(s, campaign, "final")
        loro = stable.leave_out(s, campaign, maps, final, inputs.Scope(), by="run")
    assert choices == ["final", "alice", "bob", "carol", "demo-reference"]
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, docno, rel = line.split()
        qrels.setdefault(qid, {})[docno] = int(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.10"})
    for run in table.runs:
        per_topic = evaluator.evaluate(runs[run.tag])
        assert run.summary["map"] == pytest.approx(np.mean([v["map"] for v in per_topic.values()]))
        assert run.summary["P_10"] == pytest.approx(
            np.mean([v["P_10"] for v in per_topic.values()])
        )
    # the demo's runs are built to differ in quality: the best run leads under both qrels
    best = max(table.runs, key=lambda r: r.summary["map"]).tag
    assert best == max(reference.runs, key=lambda r: r.summary["map"]).tag == "alpha-dense"
    assert len(comparisons.pairs) == 3 * 10
    assert len(stability.comparisons) == 3
    assert all(-1 <= c.kendall_tau <= 1 for c in stability.comparisons)
    assert {r.tag for r in loro.rows} == set(runs)
    for fmt in FORMATS:
        assert render(report.runs_table(table, comparisons), fmt)
    latex = render(report.runs_table(table, comparisons), "latex")
    assert "randomization test" in latex and "Holm" in latex and r"\textbf{" in latex
    with demo_store.session() as s:
        campaign = get_campaign(s, demo.CAMPAIGN)
        named = inputs.resolve_qrels(s, campaign, "final")
        runs = inputs.load_runs(s, campaign)
        trec = service.trec_eval_output(runs, named, ["runid", "map"], table.scope, 1)
    assert trec.count("runid") == 5
    document = json.loads(render(report.reusability_table(loro), "json"))
    assert len(document["rows"]) == 5
    assert (
        io.StringIO(render(report.stability_table(stability), "csv"))
        .readline()
        .startswith("Qrels,Kendall tau")
    )
