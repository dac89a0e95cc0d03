"""The evaluation report's further sections on the fixture campaign."""

from __future__ import annotations

import pytest

from workbench.services import extended_evaluation as extended
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError


def collection_scale(session, num_docs: int | None) -> extended.CollectionScale:
    from workbench.services import evaluation as service
    from workbench.services import evaluation_inputs as inputs

    campaign = get_campaign(session, "demo")
    scope = inputs.Scope(inputs.load_runs(session, campaign))
    table = service.evaluate_campaign(session, campaign, "final", ["map"], scope=scope)
    qrels = scope.qrels(session, campaign, "final")
    runs = scope.loaded_runs(session, campaign)
    documents = extended.document_count(session, campaign)
    return extended.collection_scale(table, qrels, runs, num_docs=num_docs, documents=documents)


def test_collection_scale_counts_by_hand(evaluated):
    """runA against the final labels: q1 retrieves d1 d3 d2 d4, relevant d1 d3 (R = 2);
    q2 retrieves d1 d6 d5, relevant d1 d6 d7 (R = 3); q3 retrieves d10 d2 d8 d9, relevant
    d2 d8 d10 (R = 3). With N = 100: fallout (2/98 + 1/97 + 1/97) / 3."""
    with evaluated.session() as s:
        scale = collection_scale(s, num_docs=100)
    row = next(r for r in scale.rows if r.tag == "runA")
    assert row.topics == 3
    assert row.values["fallout"] == pytest.approx((2 / 98 + 1 / 97 + 1 / 97) / 3)
    assert row.values["error"] == pytest.approx((2 / 100 + 2 / 100 + 1 / 100) / 3)
    assert row.values["precision"] == pytest.approx((2 / 4 + 2 / 3 + 3 / 4) / 3)
    assert scale.num_docs == 100 and scale.source == "given"
    assert "non-relevant" in scale.note


def test_collection_scale_needs_a_size(evaluated):
    with evaluated.session() as s, pytest.raises(ServiceError, match="no documents"):
        collection_scale(s, None)


def test_power_analysis_on_the_campaign(evaluated):
    from statsmodels.stats.power import TTestPower

    from workbench.services import evaluation as service
    from workbench.stats import two_way_anova

    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), "final", ["map"])
    analysis = extended.power_analysis(table, min_difference=0.1)
    topics, matrix = service.score_matrix(table, "map")
    assert analysis.n_topics == len(topics) == 3
    assert analysis.design.variance == pytest.approx(two_way_anova(matrix).v_e)
    assert len(analysis.pairs) == 6  # 4 runs
    pair = analysis.pairs[0]
    assert (pair.first, pair.second) == ("runA", "runB")
    d = matrix[0] - matrix[1]
    assert pair.mean_difference == pytest.approx(d.mean())
    d_min = TTestPower().solve_power(nobs=3, alpha=0.05, power=0.8)
    assert pair.detectable_difference == pytest.approx(d_min * d.std(ddof=1), rel=1e-5)
    assert analysis.sentence.startswith("With 3 topics, differences of at least")
    assert analysis.design.topics_t_test >= 2


def test_power_analysis_refuses_an_unknown_measure(evaluated):
    from workbench.services import evaluation as service

    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), "final", ["map"])
    with pytest.raises(ServiceError, match="not in the evaluation"):
        extended.power_analysis(table, "P_10")


def test_parameter_sweep_from_a_mapping(evaluated):
    from workbench import sweeps
    from workbench.services import evaluation as service

    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), "final", ["map"])
    mapping = "tag,k\nrunA,1\nrunB,2\nrunC,3\n"
    result = extended.parameter_sweep(table, mapping=mapping, folds=3, seed=1)
    assert result.grid.excluded == ("runD",)
    assert result.means["runA"] == pytest.approx(table.run("runA").summary["map"])
    scores = {
        t: {q: v["map"] for q, v in table.run(t).per_topic.items()}
        for t in ("runA", "runB", "runC")
    }
    assert result.cv == sweeps.cross_validate(scores, k=3, seed=1)
    with pytest.raises(ServiceError, match="either a tag pattern or a mapping"):
        extended.parameter_sweep(table)
    with pytest.raises(ServiceError, match="no run tag matches"):
        extended.parameter_sweep(table, pattern="bm25_{k}")


def test_interleaving_study_on_the_campaign(evaluated):
    from workbench import interleaving
    from workbench.services import evaluation as service
    from workbench.services import evaluation_inputs as inputs

    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        runs = inputs.load_runs(s, campaign)
        table = service.evaluate_campaign(s, campaign, "final", ["map"], scope=inputs.Scope(runs))
        named = inputs.resolve_qrels(s, campaign, "final")
        study = extended.interleaving_study(
            table, runs, named, setup=interleaving.Setup(impressions=5, seed=2)
        )
        qrels = named.qrels
    assert len(study.pairs) == 6
    first = study.pairs[0]
    assert (first.comparison.first, first.comparison.second) == ("runA", "runB")
    expected = interleaving.compare(
        {q: list(r.docnos) for q, r in runs[0].ranked_lists.items()},
        {q: list(r.docnos) for q, r in runs[1].ranked_lists.items()},
        qrels,
        interleaving.Setup(impressions=5, seed=2),
        names=("runA", "runB"),
    )
    assert first.comparison == expected
    assert first.offline_difference == pytest.approx(
        table.run("runA").summary["map"] - table.run("runB").summary["map"]
    )
    a = study.agreement
    assert a.agree + a.disagree + a.undecided == 6


def _sidecar(tmp_path, text, name="eff.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_efficiency_import_and_report(evaluated, tmp_path):
    from workbench.reports.extended import efficiency_plot, efficiency_table
    from workbench.services import evaluation as service
    from workbench.services.efficiency import import_efficiency, run_efficiency

    csv = (
        "run,qid,latency_ms,mean_latency_ms,cost_per_1000_queries,hardware\n"
        "runA,,,30,0.5,big box\n"
        "runB,,,10,0.1,laptop\n"
        "runC,q1,5,,,\n"
        "runC,q2,7,,,\n"
    )
    with evaluated.session() as s:
        result = import_efficiency(s, get_campaign(s, "demo"), _sidecar(tmp_path, csv))
    assert result.runs == ("runA", "runB", "runC") and result.replaced == ()
    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        stored = run_efficiency(s, campaign)
        table = service.evaluate_campaign(s, campaign, "final", ["map"])
        report = extended.efficiency_report(s, campaign, table)
    assert stored["runC"].mean_latency_ms == 6.0
    assert stored["runC"].per_query_latency_ms == {"q1": 5.0, "q2": 7.0}
    assert report.missing == ("runD",)
    maps = {r.tag: r.summary["map"] for r in table.runs}
    points = {t: (lat, maps[t]) for t, lat in (("runA", 30.0), ("runB", 10.0), ("runC", 6.0))}
    from workbench.efficiency import pareto_frontier

    assert report.latency_frontier == tuple(pareto_frontier(points))
    assert report.cost_frontier == tuple(
        pareto_frontier({"runA": (0.5, maps["runA"]), "runB": (0.1, maps["runB"])})
    )
    text = efficiency_table(report)
    assert text.rows[3][-1].value == "no figures"
    assert "runD" in text.notes[0]
    svg = efficiency_plot(report)
    assert svg is not None and "Pareto frontier" in svg and "runC" in svg


def test_efficiency_import_refuses_and_changes_nothing(evaluated, tmp_path):
    from workbench.services.efficiency import import_efficiency, run_efficiency

    good = _sidecar(tmp_path, '{"run": "runA", "mean_latency_ms": 3}', "a.json")
    with evaluated.session() as s:
        import_efficiency(s, get_campaign(s, "demo"), good)
    cases = [
        ('[{"run": "runB", "mean_latency_ms": 1}, {"run": "nope"}]', "has no run nope"),
        ('{"run": "runA", "mean_latency_ms": 9}', "already have efficiency figures"),
        ('{"run": "runB", "per_query_latency_ms": {"q9": 1}}', "has no topic q9"),
        ("run,mean_latency_ms\nrunB,slow\n", r"bad\.json:2: expected a number"),
    ]
    for text, message in cases:
        with pytest.raises(ServiceError, match=message), evaluated.session() as s:
            import_efficiency(s, get_campaign(s, "demo"), _sidecar(tmp_path, text, "bad.json"))
    with evaluated.session() as s:
        assert {
            t: e.mean_latency_ms for t, e in run_efficiency(s, get_campaign(s, "demo")).items()
        } == {"runA": 3.0}
        again = import_efficiency(
            s,
            get_campaign(s, "demo"),
            _sidecar(tmp_path, '{"run": "runA", "mean_latency_ms": 9}', "c.json"),
            replace=True,
        )
    assert again.replaced == ("runA",)
    with evaluated.session() as s:
        assert run_efficiency(s, get_campaign(s, "demo"))["runA"].mean_latency_ms == 9.0
