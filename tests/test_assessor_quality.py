"""Assessor quality statistics (`workbench.assessor_quality`) against the reference libraries:
gold accuracy and weighted kappa equal scikit-learn's on the same labels, the Wilson interval
statsmodels', the two-proportion test statsmodels'; and the outlier rules' reasons."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from workbench import assessor_quality as quality


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_gold_accuracy_and_kappa_equal_scikit_learns(seed, weights) -> None:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, size=40)
    given = np.where(rng.random(40) < 0.7, gold, rng.integers(0, 3, size=40))
    result = quality.gold_accuracy(
        given.tolist(), gold.tolist(), scale=[0, 1, 2], level=1, weights=weights
    )
    assert result.n == 40
    assert result.accuracy.value == pytest.approx(accuracy_score(gold, given), abs=1e-15)
    assert result.kappa is not None
    assert result.kappa.kappa == pytest.approx(
        cohen_kappa_score(given, gold, weights=weights, labels=[0, 1, 2]), abs=1e-12
    )
    low, high = proportion_confint(result.accuracy.successes, 40, alpha=0.05, method="wilson")
    assert (result.accuracy.low, result.accuracy.high) == pytest.approx((low, high), abs=1e-12)
    assert result.kappa.low < result.kappa.kappa < result.kappa.high
    binary = accuracy_score(gold >= 1, given >= 1)
    assert result.relevance_accuracy.value == pytest.approx(binary, abs=1e-15)


def test_kappa_uses_the_whole_scale_even_when_a_grade_is_unused() -> None:
    given, gold = [0, 0, 2, 2, 0], [0, 2, 2, 2, 0]
    result = quality.gold_accuracy(given, gold, scale=[0, 1, 2], level=1, weights="linear")
    expected = cohen_kappa_score(given, gold, weights="linear", labels=[0, 1, 2])
    assert result.kappa is not None and result.kappa.kappa == pytest.approx(expected)
    one_category = quality.gold_accuracy([1, 1], [1, 1], scale=[0, 1], level=1)
    assert one_category.kappa is None and one_category.accuracy.value == 1.0


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (3, 17), (48, 50), (1, 1)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_interval_equals_statsmodels(k, n, confidence) -> None:
    found = quality.wilson_interval(k, n, confidence=confidence)
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    assert (found.low, found.high) == pytest.approx((low, high), abs=1e-12)
    assert math.isnan(quality.wilson_interval(0, 0).value)
    with pytest.raises(ValueError):
        quality.wilson_interval(3, 2)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"), [(46, 50, 60, 100), (10, 40, 12, 40), (3, 9, 7, 9)]
)
def test_two_proportion_test_equals_statsmodels(k1, n1, k2, n2) -> None:
    _, p = proportions_ztest([k1, k2], [n1, n2])
    assert quality.two_proportion_test(k1, n1, k2, n2) == pytest.approx(p, rel=1e-12)
    assert quality.two_proportion_test(0, 0, 1, 2) == 1.0


def _event(who: str, docno: str, grade: int | None, seconds: float, minute: int) -> quality.Event:
    at = dt.datetime(2026, 11, 20, 9) + dt.timedelta(minutes=minute)
    return quality.Event(who, "T1", docno, grade, int(seconds * 1000), at)


def test_current_judgements_times_and_sessions_from_the_log() -> None:
    events = [
        _event("ann", "d1", 0, 10, 0),
        _event("ann", "d1", 1, 5, 1),  # a revision: the last counts, times add up
        _event("ann", "d2", 2, 20, 50),  # 49 minutes later: a new session
        _event("ben", "d1", 1, 30, 2),
    ]
    latest = quality.current(events)
    assert latest["ann", "T1", "d1"].grade == 1
    assert quality.document_seconds(events)["ann", "T1", "d1"] == 15
    sessions = quality.periods(events, "session")
    assert sessions["ann", "T1", "d1"] == "session 1" and sessions["ann", "T1", "d2"] == "session 2"
    assert quality.periods(events, "day")["ben", "T1", "d1"] == "2026-11-20"
    grades = {k: e.grade for k, e in latest.items() if e.grade is not None}
    assert quality.pairs_with_others("ann", grades) == ([1], [1])


def _profile(**changes) -> quality.Profile:
    base = dict(
        assessor="ann",
        judged=100,
        not_relevant=60,
        graded=100,
        others_not_relevant=300,
        others_graded=500,
        median_seconds=25.0,
        others_median_seconds=24.0,
        kappa=0.5,
        others_median_kappa=0.5,
        gold=quality.wilson_interval(17, 20),
        others_gold=quality.wilson_interval(85, 100),
    )
    return quality.Profile(**{**base, **changes})


def test_an_ordinary_assessor_is_not_flagged() -> None:
    assert quality.outlier_reasons(_profile()) == []
    assert quality.outlier_reasons(_profile(judged=5, median_seconds=1.0)) == []  # too few


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"not_relevant": 92}, "92 % not relevant against 60 % for the others on the same topics"),
        ({"median_seconds": 2.0}, "median 2 s per document against 24 s for the others"),
        ({"median_seconds": 95.0}, "median 95 s per document against 24 s for the others"),
        ({"kappa": 0.05}, "kappa 0.05 with the other judges against a median of 0.50"),
        (
            {"gold": quality.wilson_interval(9, 20)},
            "gold accuracy 45 % (95 % interval 26-66 %) against 85 % for the others",
        ),
        (
            {"first_period": ("2026-11-20", 10, 50), "last_period": ("2026-11-22", 30, 50)},
            "relevant 20 % in 2026-11-20, 60 % in 2026-11-22 (drift)",
        ),
    ],
)
def test_each_outlier_rule_flags_with_its_figures(changes, reason) -> None:
    found = quality.outlier_reasons(_profile(**changes))
    assert any(r.startswith(reason) for r in found), found
