"""The agreement service against scikit-learn, statsmodels and krippendorff on the fixture."""

from __future__ import annotations

from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from tests.analysis.conftest import ASSESSORS, GRADES
from workbench.services.agreement import agreement_report, load_ratings
from workbench.services.campaigns import get_campaign


def _pair(j: int, k: int, binary: bool):
    a, b = [], []
    for row in GRADES.values():
        if row[j] is not None and row[k] is not None:
            a.append(int(row[j] >= 1) if binary else row[j])
            b.append(int(row[k] >= 1) if binary else row[k])
    return a, b


def test_ratings_are_the_current_grades_without_cannot_judge(judged):
    with judged.session() as s:
        ratings = load_ratings(s, get_campaign(s, "demo"))
    assert ratings.assessors == list(ASSESSORS)
    assert ratings.items == sorted(GRADES)
    expected = np.array(
        [[np.nan if g is None else g for g in GRADES[key]] for key in sorted(GRADES)]
    )
    np.testing.assert_array_equal(ratings.grades, expected)


@pytest.mark.parametrize("graded", [False, True])
def test_pairs_match_scikit_learn(judged, graded):
    with judged.session() as s:
        report = agreement_report(s, get_campaign(s, "demo"), graded=graded, n_bootstrap=200)
    assert [(p.first, p.second) for p in report.per_pair] == [
        ("alice", "bob"),
        ("alice", "carol"),
        ("bob", "carol"),
    ]
    for pair, (j, k) in zip(report.per_pair, [(0, 1), (0, 2), (1, 2)], strict=True):
        a, b = _pair(j, k, binary=not graded)
        assert pair.n_items == len(a)
        assert pair.kappa == pytest.approx(cohen_kappa_score(a, b))
        assert pair.percent_agreement == pytest.approx(np.mean(np.equal(a, b)))
        assert pair.kappa_low < pair.kappa < pair.kappa_high
        assert sum(map(sum, pair.confusion)) == len(a)
        if graded:
            assert pair.quadratic_kappa == pytest.approx(
                cohen_kappa_score(a, b, weights="quadratic")
            )
        else:
            both = sum(x == y == 1 for x, y in zip(a, b, strict=True))
            disagree = sum(x != y for x, y in zip(a, b, strict=True))
            assert pair.positive_agreement == pytest.approx(2 * both / (2 * both + disagree))


def test_overall_matches_statsmodels_and_krippendorff(judged):
    with judged.session() as s:
        report = agreement_report(s, get_campaign(s, "demo"), graded=True, n_bootstrap=50)
    # statsmodels needs every item judged by all: q3 is
    q3 = next(t for t in report.per_topic if t.name == "q3")
    q3_rows = np.array([row for key, row in GRADES.items() if key[0] == "q3"])
    assert q3.fleiss_kappa == pytest.approx(fleiss_kappa(aggregate_raters(q3_rows, 3)[0]))
    all_rows = np.array(
        [[np.nan if g is None else g for g in row] for row in GRADES.values()], dtype=float
    )
    assert report.overall.krippendorff_alpha == pytest.approx(
        krippendorff.alpha(reliability_data=all_rows.T, level_of_measurement="ordinal")
    )
    assert report.overall.n_items == len(GRADES)
    assert report.overall.n_multiply_judged == len(GRADES)
    pairs = [
        x == y
        for row in GRADES.values()
        for x, y in combinations([g for g in row if g is not None], 2)
    ]
    assert report.overall.percent_agreement == pytest.approx(sum(pairs) / len(pairs))


def test_assessor_against_the_others_pools_their_pairs(judged):
    with judged.session() as s:
        report = agreement_report(s, get_campaign(s, "demo"), n_bootstrap=50)
    alice = report.per_assessor[0]
    a1, b1 = _pair(0, 1, binary=True)
    a2, b2 = _pair(0, 2, binary=True)
    assert (alice.first, alice.second) == ("alice", "others")
    assert alice.kappa == pytest.approx(cohen_kappa_score(a1 + a2, b1 + b2))
    assert alice.reading in ("good", "fair", "not good")


def test_bootstrap_interval_resamples_topics(judged):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        report = agreement_report(s, campaign, graded=True, n_bootstrap=300, min_topics=3)
        few = agreement_report(s, campaign, graded=True, n_bootstrap=300)
    pair = report.per_pair[0]
    assert pair.bootstrap_low <= pair.kappa <= pair.bootstrap_high
    assert pair.bootstrap_low < pair.bootstrap_high
    overall = report.overall
    assert overall.bootstrap_low <= overall.fleiss_kappa <= overall.bootstrap_high
    assert np.isnan(few.overall.bootstrap_low)
    # three topics are too few for the default (5): no interval rather than a degenerate one
    assert np.isnan(few.per_pair[0].bootstrap_low) and np.isnan(few.per_pair[0].bootstrap_high)


def gathered_bootstrap(statistic, topics: list[str], n_resamples: int, seed: int):  # type: ignore[no-untyped-def]
    """The topic bootstrap that gathers each resample's items (the definition)."""
    from workbench.agreement import bootstrap_interval
    from workbench.services.agreement import _topic_clusters

    clusters = _topic_clusters(topics)

    def resampled(drawn: list[int]) -> float:
        return statistic(np.concatenate([clusters[c] for c in drawn]))

    with np.errstate(all="ignore"):
        return bootstrap_interval(resampled, len(clusters), n_resamples=n_resamples, seed=seed)


def test_the_overall_fleiss_interval_is_the_topic_bootstrap_of_fleiss_kappa():
    """The report's overall interval comes from the topics' sums (`fleiss_topic_bootstrap`);
    it must equal the topic bootstrap that gathers each resample's items."""
    from workbench.agreement import fleiss_kappa as kappa_of
    from workbench.services.agreement import fleiss_topic_bootstrap

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, size=(400, 6)).astype(float)
    labels[rng.random(labels.shape) < 0.55] = np.nan
    topics = [f"t{i % 23}" for i in rng.permutation(400)]
    fast = fleiss_topic_bootstrap(labels, topics, n_resamples=500, seed=3)
    slow = gathered_bootstrap(lambda rows: kappa_of(labels[rows]), topics, 500, 3)
    assert fast == pytest.approx(slow, abs=1e-12)
    assert fast[0] < kappa_of(labels) < fast[1]
    too_few = fleiss_topic_bootstrap(labels, ["t1"] * 400, n_resamples=50, seed=3)
    assert np.isnan(too_few).all()


def test_a_pair_interval_is_the_topic_bootstrap_of_cohen_kappa():
    """A pair's interval comes from its topics' confusion matrices (`cohen_topic_bootstrap`);
    it is the topic bootstrap that gathers each resample's items, to the bit."""
    from workbench.agreement import cohen_kappa
    from workbench.services.agreement import cohen_topic_bootstrap

    rng = np.random.default_rng(11)
    a = rng.integers(0, 2, size=500)
    b = np.where(rng.random(500) < 0.7, a, 1 - a)
    topics = [f"t{i % 17}" for i in rng.permutation(500)]
    fast = cohen_topic_bootstrap(a, b, topics, [0, 1], n_resamples=400, seed=5)
    slow = gathered_bootstrap(
        lambda rows: cohen_kappa(a[rows], b[rows], labels=[0, 1]), topics, 400, 5
    )
    assert fast == slow
    assert fast[0] < cohen_kappa(a, b) < fast[1]
    too_few = cohen_topic_bootstrap(a, b, ["t1"] * 500, [0, 1], n_resamples=50, seed=3)
    assert np.isnan(too_few).all()
