"""Stopping rules (workbench.stopping) against hand computations, a direct transcription of
Callaghan & Muller-Hansen's test, and their guarantee checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from workbench import stopping
from workbench.stopping import Progress


def test_targets_needed_for_a_recall_guarantee():
    assert stopping.targets_needed(0.9, 0.95) == 29  # 0.9^29 = 0.047 <= 0.05 < 0.9^28
    assert 0.9**29 <= 0.05 < 0.9**28
    assert stopping.targets_needed(0.7, 0.95) == 9
    assert stopping.targets_needed(0.5, 0.75) == 2


def test_target_rule_stops_when_every_target_is_chosen():
    progress = Progress(500, (True,) * 10, has_sample=True, sample_relevant=30,
                        sample_relevant_chosen=29)  # fmt: skip
    verdict = stopping.decide("target", progress)
    assert not verdict.stop and "29 of 30 targets reached" in verdict.detail
    done = stopping.decide(
        "target",
        Progress(500, (True,) * 10, has_sample=True, sample_relevant=12, sample_relevant_chosen=12),
    )
    assert done.stop and done.confidence == pytest.approx(1 - 0.9**12)
    assert "29 targets needed for 95 %" in done.detail
    none = stopping.decide("target", Progress(500, (False,) * 10, has_sample=True))
    assert not none.stop and "no relevant document" in none.detail
    with pytest.raises(stopping.StoppingError, match="needs a reserved sample"):
        stopping.decide("target", Progress(500, (True,)))


def _cmh_by_transcription(labels, pool_size, target):
    """Callaghan & Muller-Hansen's calculate_h0 (buscarR), written out loop by loop."""
    seen, r_seen = len(labels), sum(labels)
    best = 1.0
    for n in range(1, seen + 1):
        k = sum(labels[seen - n :])
        r_al = r_seen - k
        k_hat = math.floor(r_seen / target - r_al + 1)
        red = pool_size - (seen - n) - k_hat
        if red < 0:
            return 0.0
        best = min(best, stats.hypergeom.cdf(k, k_hat + red, k_hat, n))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_hypergeometric_p_is_callaghan_and_muller_hansens(seed):
    rng = np.random.default_rng(seed)
    labels = list(rng.random(120) < np.linspace(0.6, 0.01, 120))
    for target in (0.5, 0.8, 0.95):
        assert stopping.hypergeometric_p(labels, 400, target) == pytest.approx(
            _cmh_by_transcription(labels, 400, target), abs=1e-12
        )


def test_the_vignettes_worked_example():
    """buscarR's vignette: 95 relevant seen with a target of 95 % -> at least 6 must remain
    for H0; after 100 non-relevant documents in a row, p = P(no relevant in 100 draws)."""
    labels = [True] * 95 + [False] * 100
    k_hat = math.floor(95 / 0.95 - 95 + 1)
    assert k_hat == 6
    urn = 1000 - 95  # the last 100 were drawn from what was unjudged before them
    expected = stats.hypergeom.cdf(0, urn, 6, 100)
    assert stopping.hypergeometric_p(labels, 1000, 0.95) <= expected
    assert stopping.hypergeometric_p(labels, 1000, 0.95) == pytest.approx(
        _cmh_by_transcription(labels, 1000, 0.95)
    )


def test_knee_rule_by_hand():
    labels = (True,) * 50 + (False,) * 150
    assert stopping.knee_point(labels) == 50
    verdict = stopping.decide("knee", Progress(1000, labels))
    # slope ratio (50 / 50) / ((50 - 50 + 1) / 150) = 150 >= 156 - 50
    assert verdict.stop and "slope ratio 150.0" in verdict.detail and "106 needed" in verdict.detail
    early = stopping.decide("knee", Progress(1000, labels[:120]))
    assert not early.stop and "at least 150 judgements" in early.detail
    assert not stopping.decide("knee", Progress(1000, (False,) * 200)).stop


def test_sample_rule_and_recall_interval_by_hand():
    """c = 40 relevant chosen; U = 500 unchosen with 50 of them sampled, 1 relevant."""
    progress = Progress(
        700,
        (True,) * 41 + (False,) * 209,
        has_sample=True,
        unchosen=500,
        sample_unchosen=50,
        sample_unchosen_relevant=1,
        chosen_relevant=40,
    )
    k_h0 = math.floor(41 / 0.9 - 40) + 1  # 6 relevant in U would make recall < 0.9
    expected = stats.hypergeom.cdf(1, 500, k_h0, 50)
    assert stopping.sample_p(progress, 0.9) == pytest.approx(expected)
    verdict = stopping.decide("sample", progress, target=0.9, confidence=0.95)
    assert verdict.stop == (expected < 0.05)
    recall = stopping.recall_estimate(progress, confidence=0.9)
    assert recall.estimate == pytest.approx(41 / (40 + 500 * 1 / 50))
    from workbench.estimators import hypergeometric_interval

    k = hypergeometric_interval(500, 50, 1, confidence=0.9)
    assert (recall.low, recall.high) == pytest.approx((41 / (40 + k.high), 41 / (40 + k.low)))


def test_recall_frontier_is_the_largest_target_rejected():
    rng = np.random.default_rng(1)
    labels = tuple(rng.random(300) < np.linspace(0.5, 0.0, 300))
    progress = Progress(600, labels)
    bound = stopping.recall_estimate(progress).low
    assert 0 < bound < 1
    assert stopping.hypergeometric_p(labels, 600, bound) < 0.05
    assert stopping.hypergeometric_p(labels, 600, bound + stopping.FRONTIER_STEP) >= 0.05


def test_the_sample_rule_keeps_its_guarantee():
    """Recall 0.85 < 0.9 truly; over many random samples the rule stops in at most about 5 %
    of them (exact test, one look)."""
    rng = np.random.default_rng(7)
    unchosen, left, chosen_relevant = 800, 30, 170  # recall of the chosen: 170 / 200
    stops = 0
    for _ in range(2000):
        m = 120
        k = int((rng.choice(unchosen, m, replace=False) < left).sum())
        progress = Progress(1000, (True,) * (chosen_relevant + k), has_sample=True,
                            unchosen=unchosen, sample_unchosen=m, sample_unchosen_relevant=k,
                            chosen_relevant=chosen_relevant)  # fmt: skip
        stops += stopping.decide("sample", progress).stop
    assert stops / 2000 <= 0.06


def test_unknown_rules_and_bad_targets_are_refused():
    with pytest.raises(stopping.StoppingError, match="unknown stopping rule 'x'"):
        stopping.decide("x", Progress(10, ()))
    with pytest.raises(stopping.StoppingError, match="recall target"):
        stopping.decide("knee", Progress(10, ()), target=1.0)
    full = stopping.decide("hypergeometric", Progress(2, (True, False)))
    assert full.stop and "every pooled document" in full.detail
