"""The evaluation service against pytrec_eval, scipy and statsmodels on the fixture campaign."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from tests.analysis.conftest import RUNS
from workbench.services import evaluation as service
from workbench.services import evaluation_inputs as inputs
from workbench.services import evaluation_stability as stable
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError

FINAL = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d11": 0},
    "q2": {"d1": 2, "d5": 0, "d6": 2, "d7": 1},
    "q3": {"d2": 2, "d8": 1, "d9": 0, "d10": 2, "d12": 0},
}


def run_dict(tag: str) -> dict[str, dict[str, float]]:
    return {
        qid: {d: float(10 - rank) for rank, d in enumerate(docs, start=1)}
        for qid, docs in RUNS[tag][2].items()
    }


def reference(qrels, tag, measures=("map", "P.10", "ndcg_cut.10")):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures))
    return evaluator.evaluate(run_dict(tag))


def test_final_qrels_are_the_adjudicated_labels(evaluated):
    with evaluated.session() as s:
        assert inputs.resolve_qrels(s, get_campaign(s, "demo"), "final").qrels == FINAL


def test_every_run_is_evaluated_like_pytrec_eval(evaluated):
    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"))
    assert [r.tag for r in table.runs] == ["runA", "runB", "runC", "runD"]
    assert table.measures == ["map", "P_10", "ndcg_cut_10"]
    assert table.run("runD").contributes is False
    for run in table.runs:
        expected = reference(FINAL, run.tag)
        for qid, values in expected.items():
            for measure in table.measures:
                assert run.per_topic[qid][measure] == pytest.approx(values[measure], abs=1e-12)
        mean_map = np.mean([v["map"] for v in expected.values()])
        assert run.summary["map"] == pytest.approx(mean_map)


def test_an_assessor_and_a_file_as_qrels(evaluated, tmp_path):
    alice = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0}, "q2": {"d1": 1, "d5": 0, "d6": 2,
             "d7": 1}, "q3": {"d2": 0, "d8": 1, "d9": 0, "d10": 2}}  # fmt: skip
    path = tmp_path / "alice.qrels"
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in alice.items() for d, g in docs.items())
    )
    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        by_name = service.evaluate_campaign(s, campaign, "alice", ["map"])
        by_file = service.evaluate_campaign(s, campaign, str(path), ["map"], allow_files=True)
        with pytest.raises(ServiceError, match="not 'final', an assessor"):
            service.evaluate_campaign(s, campaign, "nobody")
        with pytest.raises(ServiceError, match=r"qrels set of 'demo'$"):
            service.evaluate_campaign(s, campaign, str(path))  # files only when allowed
    assert by_name.qrels == "assessor alice"
    for a, b in zip(by_name.runs, by_file.runs, strict=True):
        assert a.summary["map"] == b.summary["map"]
        assert a.summary["map"] == pytest.approx(
            np.mean([v["map"] for v in reference(alice, a.tag, ["map"]).values()])
        )


def test_paired_t_tests_with_holm_match_scipy_and_statsmodels(evaluated):
    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["P.3", "map"])
    comparisons = service.compare_runs(table, test="t", correction="holm")
    assert comparisons.correction == "Holm"
    maps = [p for p in comparisons.pairs if p.measure == "map"]
    assert len(maps) == 6  # 4 runs -> 6 pairs
    p_values = []
    for pair in maps:
        x = [table.run(pair.first).per_topic[q]["map"] for q in ("q1", "q2", "q3")]
        y = [table.run(pair.second).per_topic[q]["map"] for q in ("q1", "q2", "q3")]
        expected = scipy_stats.ttest_rel(x, y)
        assert pair.p_value == pytest.approx(expected.pvalue)
        assert pair.mean_difference == pytest.approx(np.mean(np.subtract(x, y)))
        p_values.append(pair.p_value)
    holm = multipletests(p_values, method="holm")[1]
    assert [p.p_adjusted for p in maps] == pytest.approx(holm)


def test_significance_marks_follow_the_corrected_p_values(evaluated):
    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map"])
    comparisons = service.compare_runs(table, test="sign", correction="bonferroni", alpha=1.0)
    winners = {p.first if p.mean_difference > 0 else p.second for p in comparisons.pairs
               if p.mean_difference != 0}  # fmt: skip
    for tag in winners:
        assert comparisons.beats("map", tag)
    with pytest.raises(ServiceError, match="unknown test"):
        service.compare_runs(table, test="z")


def test_ranking_stability_against_scipy_kendall(evaluated):
    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        final = service.evaluate_campaign(s, campaign, "final", ["map"])
        stability = stable.ranking_stability(s, campaign, final, inputs.Scope())
        bob = service.evaluate_campaign(s, campaign, "bob", ["map"])
    assert [c.qrels for c in stability.comparisons] == [
        "assessor alice",
        "assessor bob",
        "assessor carol",
    ]
    tags = [r.tag for r in final.runs]
    x = [final.run(t).summary["map"] for t in tags]
    y = [bob.run(t).summary["map"] for t in tags]
    expected = scipy_stats.kendalltau(x, y).statistic
    assert stability.comparisons[1].kendall_tau == pytest.approx(expected)
    assert stability.reference_order == sorted(
        tags, key=lambda t: (-final.run(t).summary["map"], t)
    )
    moved = {c.run for c in stability.comparisons[1].changes}
    order = stability.comparisons[1].order
    assert moved == {t for i, t in enumerate(order) if stability.reference_order[i] != t}


def leave_out(session, by: str, qrels: str = "final") -> stable.Reusability:
    campaign = get_campaign(session, "demo")
    scope = inputs.Scope()
    table = service.evaluate_campaign(session, campaign, qrels, ["map"], scope=scope)
    named = scope.qrels(session, campaign, qrels)
    return stable.leave_out(session, campaign, table, named, scope, by=by)


def test_leave_one_run_out_removes_only_the_runs_own_documents(evaluated):
    with evaluated.session() as s:
        loro = leave_out(s, "run")
    rows = {r.tag: r for r in loro.rows}
    assert set(rows) == {"runA", "runB", "runC"}  # runD did not contribute
    # depth 3: runB alone pooled q1/d11 and q3/d12 (unjudged); runC alone q1/d4, q2/d7, q3/d9
    assert (rows["runA"].unique_documents, rows["runB"].unique_documents) == (0, 2)
    assert (rows["runC"].unique_documents, rows["runC"].unique_relevant) == (3, 1)
    assert rows["runA"].delta == 0 and rows["runB"].delta == 0
    removed = {("q1", "d4"), ("q2", "d7"), ("q3", "d9")}
    without = {
        q: {d: g for d, g in docs.items() if (q, d) not in removed} for q, docs in FINAL.items()
    }
    expected = np.mean([v["map"] for v in reference(without, "runC", ["map"]).values()])
    assert rows["runC"].score_left_out == pytest.approx(expected)
    assert rows["runC"].delta == pytest.approx(rows["runC"].score - expected)
    assert loro.judged_measure and loro.judged["runD"] == pytest.approx(
        np.mean([sum(d in FINAL[q] for d in docs[:10]) / 10 for q, docs in RUNS["runD"][2].items()])
    )


def test_leave_one_group_out_removes_the_groups_documents(evaluated):
    with evaluated.session() as s:
        logo = leave_out(s, "group")
    rows = {r.tag: r for r in logo.rows}
    # group g1 = runA + runB: q1/d3, q1/d11, q2/d6, q3/d2, q3/d12 (d3, d6, d2 relevant)
    assert (rows["runA"].unit, rows["runA"].unique_documents) == ("g1", 5)
    assert rows["runA"].unique_relevant == 3
    removed = {("q1", "d3"), ("q1", "d11"), ("q2", "d6"), ("q3", "d2"), ("q3", "d12")}
    without = {q: {d: g for d, g in docs.items() if (q, d) not in removed}
               for q, docs in FINAL.items()}  # fmt: skip
    expected = np.mean([v["map"] for v in reference(without, "runA", ["map"]).values()])
    assert rows["runA"].score_left_out == pytest.approx(expected)
    assert rows["runA"].delta > 0


def test_precision_recall_and_tukey(evaluated):
    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        table = service.evaluate_campaign(s, campaign, measures=["map"])
        runs = inputs.load_runs(s, campaign)
        curves = service.precision_recall(runs, inputs.resolve_qrels(s, campaign), table)
    assert set(curves) == set(RUNS) and all(len(c) == 11 for c in curves.values())
    expected = reference(FINAL, "runA", ["iprec_at_recall"])
    assert curves["runA"][0] == pytest.approx(
        np.mean([v["iprec_at_recall_0.00"] for v in expected.values()])
    )
    tukey = service.tukey_hsd(table, "map")
    assert len(tukey.pairs) == 6
    assert all(0 <= p.p_value <= 1 for p in tukey.pairs)
