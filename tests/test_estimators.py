"""workbench.estimators against independent computations: trec_eval's infAP and map (the
metric module, itself diffed with trec_eval), exact expectations over every possible sample,
and hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tests.property_examples import examples
from workbench import estimators as est
from workbench.metrics import evaluate
from workbench.trec import Qrels, Run


def _run(tag: str, qid: str, ranking: list[str]) -> Run:
    n = len(ranking)
    return Run.from_dict({qid: {d: float(n - i) for i, d in enumerate(ranking)}}, tag=tag)


def _topic_world(seed: int, n_docs: int = 30, n_runs: int = 4, depth: int = 12):
    rng = np.random.default_rng(seed)
    docnos = [f"d{i:02d}" for i in range(n_docs)]
    truth = rng.random(n_docs) < 0.3
    rankings = {f"r{r}": list(rng.choice(docnos, depth, replace=False)) for r in range(n_runs)}
    return rng, docnos, truth, rankings


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 20))
def test_one_stratum_xinfap_is_trec_evals_infap_and_judged_is_map(seed, n_sampled):
    rng, docnos, truth, rankings = _topic_world(seed)
    sampled = np.zeros(len(docnos), dtype=bool)
    sampled[rng.choice(len(docnos), n_sampled, replace=False)] = True
    topic = est.srs_topic(docnos, [0] * len(docnos), sampled, truth)
    qrels = Qrels.from_dict(
        {"q": {d: (int(truth[i]) if sampled[i] else -1) for i, d in enumerate(docnos)}}
    )
    estimates = est.estimate_topic(topic, {t: topic.positions(r) for t, r in rankings.items()})
    for tag, ranking in rankings.items():
        ours = estimates[tag].values
        trec = evaluate(qrels, _run(tag, "q", ranking), ["infAP", "map"]).per_topic["q"]
        assert ours["xinfAP"] == pytest.approx(trec["infAP"], abs=1e-12)
        assert ours["judged"] == pytest.approx(trec["map"], abs=1e-12)


def test_every_estimate_is_ap_when_everything_is_judged():
    _, docnos, truth, rankings = _topic_world(4)
    topic = est.srs_topic(docnos, [0, 1, 2] * 10, [True] * 30, truth)
    qrels = Qrels.from_dict({"q": {d: int(truth[i]) for i, d in enumerate(docnos)}})
    estimates = est.estimate_topic(topic, {t: topic.positions(r) for t, r in rankings.items()})
    for tag, ranking in rankings.items():
        ap = evaluate(qrels, _run(tag, "q", ranking), ["map"]).per_topic["q"]["map"]
        values = estimates[tag].values
        assert (values["statAP"], values["judged"]) == pytest.approx((ap, ap), abs=1e-12)
        assert values["xinfAP"] == pytest.approx(ap, abs=1e-5)  # e = 1e-5 smoothing


def test_statap_numerator_and_r_hat_are_unbiased_over_every_poisson_sample():
    """Exact expectation: all 2^8 samples of an 8-document pool, each with its probability."""
    docnos = [f"d{i}" for i in range(8)]
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    pi = np.array([0.9, 0.3, 0.6, 0.5, 0.2, 0.7, 0.4, 0.8])
    ranking = np.array([2, 0, 5, -1, 3, 6, 1, 4, 7])  # pool indices, -1: outside the pool
    true_ap_numerator = sum(
        truth[d] * truth[ranking[: k + 1][ranking[: k + 1] >= 0]].sum() / (k + 1)
        for k, d in enumerate(ranking)
        if d >= 0
    )
    expected_numerator = expected_r = 0.0
    for bits in itertools.product((False, True), repeat=8):
        sampled = np.array(bits)
        p = float(np.prod(np.where(sampled, pi, 1 - pi)))
        topic = est.SampledTopic(tuple(docnos), np.zeros(8, int), pi, sampled, truth & sampled,
                                 stratified=False)  # fmt: skip
        r_hat = float(((truth & sampled) / pi).sum())
        value = est.estimate_topic(topic, {"r": ranking})["r"].values["statAP"]
        expected_numerator += p * value * r_hat
        expected_r += p * r_hat
    assert expected_r == pytest.approx(truth.sum(), abs=1e-12)
    assert expected_numerator == pytest.approx(true_ap_numerator, abs=1e-12)


def test_stratified_xinfap_by_hand():
    """Pool a b c d e f; strata {a, b} judged in full (pi 1), {c, d, e, f} half sampled (c, e).
    Relevant: a, c (e judged non-relevant). Run: a c x e b.
    R-hat = 1 (a) + 2 (c, weight 1/0.5) = 3.
    PC(a, rank 1) = 1. PC(c, rank 2) = 1/2 + (1/2)(1 pooled above in s0: a, 1 of 1 relevant)
    = 1/2 + 1/2 (1 + e)/(1 + 2e). xinfAP = (1 * 1 + 2 * PC(c)) / 3."""
    topic = est.srs_topic(list("abcdef"), [0, 0, 1, 1, 1, 1],
                          [True, True, True, False, True, False],
                          [True, False, True, False, False, False])  # fmt: skip
    assert topic.inclusion.tolist() == [1, 1, 0.5, 0.5, 0.5, 0.5]
    values = est.estimate_topic(topic, {"r": topic.positions(list("acxeb"))})["r"].values
    e = est.EPSILON
    pc_c = 0.5 + 0.5 * (1 + e) / (1 + 2 * e)
    assert values["xinfAP"] == pytest.approx((1 + 2 * pc_c) / 3, abs=1e-12)
    # statAP: a: 1 * 1/1 * (1 + 0); c: 2 * 1/2 * (1 + 1) -> (1 + 2) / 3
    assert values["statAP"] == pytest.approx(1.0)
    # judged only: a at 1 (1/1), c at 2 (2/2), R = 2 judged relevant
    assert values["judged"] == pytest.approx(1.0)


def test_replicate_weights_have_mean_one_and_variance_one_minus_pi():
    topic = est.srs_topic([f"d{i}" for i in range(4)], [0, 0, 1, 1],
                          [True, False, True, True], [False] * 4)  # fmt: skip
    a = est.replicate_weights(topic, 40_000, np.random.default_rng(1))
    assert a[0].tolist() == [1, 1, 1, 1]
    assert (a[1:, 1] == 1).all() and (a[1:, 2:] == 1).all()  # unsampled; pi = 1
    assert a[1:, 0].mean() == pytest.approx(1, abs=0.01)
    assert a[1:, 0].var() == pytest.approx(0.5, abs=0.01)  # pi = 1/2


def test_bootstrap_variance_of_r_hat_matches_the_poisson_formula():
    """For Poisson sampling, Var(R-hat) = sum_rel (1 - pi) / pi is estimated without bias by
    sum_{sampled rel} (1 - pi) / pi^2 (Sarndal et al. 1992, 3.5); the generalized bootstrap
    reproduces that estimate."""
    rng = np.random.default_rng(5)
    n = 200
    truth = rng.random(n) < 0.3
    pi = rng.uniform(0.2, 0.9, n)
    sampled = est.draw_poisson(pi, rng)
    topic = est.SampledTopic(tuple(f"d{i}" for i in range(n)), np.zeros(n, int), pi, sampled,
                             truth & sampled, stratified=False)  # fmt: skip
    a = est.replicate_weights(topic, 20_000, rng)
    r_hat = (a * np.where(sampled & truth, 1 / pi, 0)).sum(axis=1)
    formula = float((((1 - pi) / pi**2) * (sampled & truth)).sum())
    assert r_hat[1:].var() == pytest.approx(formula, rel=0.05)


def test_ap_prior_sums_to_one_per_run_and_favours_the_top():
    lists = [np.array([0, 1, 2]), np.array([2, 3, 4])]
    prior = est.ap_prior(lists, 5, 3)
    assert prior.sum() == pytest.approx(1.0)
    w = (1 + np.array([1 + 1 / 2 + 1 / 3, 1 / 2 + 1 / 3, 1 / 3])) / 6  # Z = 3
    assert w.sum() == pytest.approx(1.0)
    assert prior.tolist() == pytest.approx([w[0] / 2, w[1] / 2, (w[2] + w[0]) / 2, w[1] / 2,
                                            w[2] / 2])  # fmt: skip


def test_proportional_inclusion_caps_at_one_and_keeps_the_expected_size():
    pi = est.proportional_inclusion(np.array([10.0, 1, 1, 1, 1, 0]), 3)
    assert pi.sum() == pytest.approx(3) and pi[0] == 1.0 and pi[-1] == 0.0
    assert pi[1:5] == pytest.approx([0.5] * 4)
    with pytest.raises(est.EstimationError, match="non-negative"):
        est.proportional_inclusion(np.zeros(3), 1)


def test_stratum_sizes_follow_the_rates_within_the_budget():
    assert est.stratum_sizes([10, 20, 70], [1.0, 0.4, 0.1], 25) == [10, 8, 7]
    assert sum(est.stratum_sizes([10, 20, 70], [1.0, 0.4, 0.1], 60)) == 60
    assert est.stratum_sizes([3, 0, 5], [1.0, 1.0, 1.0], 100) == [3, 0, 5]
    assert est.stratum_sizes([50, 50], [1.0, 0.01], 1) in ([1, 0], [0, 1])
    rng = np.random.default_rng(0)
    drawn = est.draw_srs(np.array([0] * 10 + [1] * 20), [4, 5], rng)
    assert (drawn[:10].sum(), drawn[10:].sum()) == (4, 5)


def test_hypergeometric_interval_is_the_exact_one():
    interval = est.hypergeometric_interval(100, 20, 3, confidence=0.9)
    assert interval.estimate == 15
    below = stats.hypergeom.sf(2, 100, interval.low - 1, 20)
    assert below <= 0.05 < stats.hypergeom.sf(2, 100, interval.low, 20)
    above = stats.hypergeom.cdf(3, 100, interval.high + 1, 20)
    assert above <= 0.05 < stats.hypergeom.cdf(3, 100, interval.high, 20)
    zero = est.hypergeometric_interval(50, 50, 0)
    assert (zero.low, zero.high) == (0, 0)  # the whole population seen
    assert math.isnan(est.hypergeometric_interval(10, 0, 0).estimate)
    with pytest.raises(est.EstimationError, match="0 <= k <= n <= N"):
        est.hypergeometric_interval(10, 3, 4)


def test_hypergeometric_interval_covers_at_least_its_confidence():
    rng = np.random.default_rng(2)
    population, relevant, n = 300, 12, 60
    covered = 0
    for _ in range(400):
        k = int((rng.choice(population, n, replace=False) < relevant).sum())
        interval = est.hypergeometric_interval(population, n, k, confidence=0.9)
        covered += interval.low <= relevant <= interval.high
    assert covered / 400 >= 0.88


def test_relevant_left_in_an_adaptive_pool_with_a_sample():
    """C = the first 4 documents, judged in full (2 relevant); U = the other 16, 4 of them
    sampled, 1 relevant: 16 * 1/4 = 4 relevant in U, 3 of them unjudged."""
    strata = [0] * 4 + [1] * 16
    sampled = [True] * 4 + [True] * 4 + [False] * 12
    relevant = [True, True, False, False, True] + [False] * 15
    left = est.relevant_left(est.srs_topic([f"d{i}" for i in range(20)], strata, sampled,
                                           relevant))  # fmt: skip
    whole = est.hypergeometric_interval(16, 4, 1)
    assert (left.estimate, left.low, left.high) == (3.0, whole.low - 1, whole.high - 1)
    full = est.srs_topic(["a", "b"], [0, 0], [True, True], [True, False])
    assert est.relevant_left(full).estimate == 0.0


def test_the_prior_pooling_strategy_draws_by_the_ap_prior():
    from workbench import pooling

    def ranked(*docnos):
        return pooling.RankedList(list(docnos), np.arange(len(docnos), 0, -1, dtype=float))

    lists = {"A": ranked("a", "b", "c", "d"), "B": ranked("c", "e", "a", "f")}
    strategy = pooling.get_strategy("prior")
    params = strategy.parse({"budget": 3, "depth": 4})
    context = pooling.PoolingContext(None, np.random.default_rng(1))
    pooled = strategy.pool(lists, params, context)
    assert sorted(p.docno for p in pooled) == list("abcdef")
    assert sum(p.inclusion_prob for p in pooled) == pytest.approx(3)
    by = {p.docno: p.inclusion_prob for p in pooled}
    assert by["a"] > by["b"] > by["d"] and by["c"] > by["e"]  # top ranks weigh most
    again = strategy.pool(lists, params, pooling.PoolingContext(None, np.random.default_rng(1)))
    assert [p.sampled for p in again] == [p.sampled for p in pooled]
    assert params.describe() == "3 documents expected per topic, by the AP prior of depth 4"
