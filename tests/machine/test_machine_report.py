"""The "how far to trust it" analysis against the reference libraries, and the robustness
command against the local test server."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from tests.machine.conftest import judge_as_humans
from workbench.services import machine_jobs, machine_judges
from workbench.services.campaigns import get_campaign
from workbench.services.machine_report import machine_report, report_tables

pytestmark = pytest.mark.slow


def judged(store, stub, truth, wrong=()):
    with store.session() as session:
        campaign = get_campaign(session, "mc")
        judge = machine_judges.add_judge(session, campaign, model="stub", base_url=stub.url)
        job = machine_jobs.create_job(session, campaign, judge).id
    machine_jobs.run_job(store, job)
    judge_as_humans(store, truth, wrong=wrong)


def test_kappa_confusion_and_rankings_match_the_reference_libraries(store, stub, machine_campaign):
    truth = machine_campaign
    judged(store, stub, truth, wrong={("2", "D2-00"), ("3", "D3-08")})
    with store.read_session() as session:
        campaign = get_campaign(session, "mc")
        report = machine_report(session, campaign, n_resamples=200, top_k=3,
                                weights="quadratic")  # fmt: skip
        machine = machine_judges.machine_labels(
            session, machine_judges.get_judge(session, campaign, "machine:stub")
        )
    human = {k: (2 if truth[k] == 0 else 0) if k in {("2", "D2-00"), ("3", "D3-08")}
             else truth[k] for k in truth}  # fmt: skip
    keys = sorted(set(human) & set(machine))
    h, m = [human[k] for k in keys], [machine[k] for k in keys]
    (judge,) = report.judges
    a = judge.agreement
    assert a.n == len(keys) == len(truth) - 1
    assert a.kappa == pytest.approx(cohen_kappa_score(h, m))
    assert a.weighted_kappa == pytest.approx(cohen_kappa_score(h, m, weights="quadratic"))
    assert a.kappa_low <= a.kappa <= a.kappa_high
    assert np.array(a.confusion).tolist() == confusion_matrix(h, m, labels=[0, 1, 2]).tolist()
    topic1 = next(t for t in a.per_topic if t.qid == "1")
    k1 = [k for k in keys if k[0] == "1"]
    assert topic1.kappa == pytest.approx(
        cohen_kappa_score([human[k] for k in k1], [machine[k] for k in k1])
    )
    machine_rank, hybrid_rank = judge.rankings
    assert (machine_rank.qrels, hybrid_rank.qrels) == ("machine", "hybrid")
    # the hybrid prefers the human labels everywhere: the same ranking as the humans'
    assert hybrid_rank.kendall_tau == pytest.approx(1.0) and hybrid_rank.moves == ()
    assert -1 <= machine_rank.kendall_tau <= 1 and machine_rank.runs == 4
    assert judge.cost.labels == len(truth) - 1 and judge.cost.cached == 4
    assert dict(judge.cost.reasons) == {"malformed": 1} and judge.cost.flagged >= 8
    data = report.to_dict()
    json.dumps(data)
    assert data["judges"][0]["agreement"]["n"] == a.n
    titles = [t.caption for t in report_tables(report)]
    assert any("Confusion" in t for t in titles) and any("cost" in t for t in titles)


def test_the_ranking_under_machine_qrels_matches_scipy(store, stub, machine_campaign):
    from workbench.services.evaluation import evaluate_runs
    from workbench.services.evaluation_inputs import NamedQrels, load_runs

    truth = machine_campaign
    judged(store, stub, truth)
    with store.read_session() as session:
        campaign = get_campaign(session, "mc")
        report = machine_report(session, campaign, n_resamples=20)
        machine = machine_judges.machine_labels(
            session, machine_judges.get_judge(session, campaign, "machine:stub")
        )
        runs = load_runs(session, campaign)

        def scores(labels):
            qrels = {}
            for (q, d), g in labels.items():
                qrels.setdefault(q, {})[d] = g
            table = evaluate_runs(runs, NamedQrels("x", qrels), ["map"], campaign="mc",
                                  relevance_level=1)  # fmt: skip
            return {r.tag: r.summary["map"] for r in table.runs}

        human_scores, machine_scores = scores(truth), scores(machine)
    tags = sorted(human_scores)
    expected = scipy_stats.kendalltau(
        [human_scores[t] for t in tags], [machine_scores[t] for t in tags]
    ).statistic
    assert report.judges[0].rankings[0].kendall_tau == pytest.approx(expected)


def test_the_robustness_command(cli, stub, machine_campaign, store):
    truth = machine_campaign
    judged(store, stub, truth)
    result = cli("machine", "robustness", "--campaign", "mc", "--judge", "machine:stub",
                 "--per-topic", "3", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["attack"]: r for r in json.loads(result.stdout)}
    assert rows["none"]["inflated"] == 0 and rows["none"]["cases"] == 12
    # the server obeys instructions in the document: every injection works...
    assert rows["instruction-end"]["inflated"] == pytest.approx(1.0)
    assert rows["stuffing"]["inflated"] == pytest.approx(1.0)
    assert rows["instruction-end"]["flagged"] == 1.0 and rows["stuffing"]["flagged"] == 1.0
    # ...and one that respects the document's markers only falls for stuffing
    stub.behaviour.injection = "delimited"
    rows = {r["attack"]: r for r in json.loads(cli(
        "machine", "robustness", "--campaign", "mc", "--judge", "machine:stub", "--per-topic",
        "3", "--format", "json").stdout)}  # fmt: skip
    assert rows["instruction-end"]["inflated"] == 0 and rows["forged-marker"]["inflated"] == 0
    assert rows["stuffing"]["inflated"] == pytest.approx(1.0)
    exposed = {r["attack"]: r for r in json.loads(cli(
        "machine", "robustness", "--campaign", "mc", "--judge", "machine:stub", "--per-topic",
        "3", "--no-neutralise", "--format", "json").stdout)}  # fmt: skip
    assert exposed["forged-marker"]["inflated"] == pytest.approx(1.0)
    text = cli("machine", "robustness", "--campaign", "mc", "--judge", "machine:stub").stdout
    assert "Inflated" in text and "stuffing+instruction" in text


def test_the_top_k_tau_ap_is_tie_aware_as_the_whole_rankings_is() -> None:
    """The machine ties every run (all its labels 0): with k = every run the top-k tau_AP is
    the whole ranking's (0: a tie is every order equally likely), whatever the runs' names;
    it was tau_AP of the ties broken by name (1.0 for a, b, c; -1.0 for z, y, x)."""
    from workbench.services.machine_report import _ranking

    for names in ("abc", "zyx"):
        human = dict(zip(names, (0.9, 0.8, 0.7), strict=True))
        ranking = _ranking(human, dict.fromkeys(names, 0.0), "machine", "map", 3)
        assert ranking.top_k == 3
        assert ranking.top_tau_ap == pytest.approx(ranking.tau_ap) == pytest.approx(0.0)
        assert [(m.human_rank, m.other_rank) for m in ranking.moves] == [(3, 1), (2, 1)]
