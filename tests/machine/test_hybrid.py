"""Sample designs, their inclusion probabilities, the error estimate, the compositions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench import hybrid


def pool(topics=3, per_topic=40):
    keys = [(f"q{t}", f"d{i:03d}") for t in range(topics) for i in range(per_topic)]
    machine = {k: (2 if int(k[1][1:]) < 6 else 1 if int(k[1][1:]) < 12 else 0) for k in keys}
    return keys, machine


@pytest.mark.slow
@pytest.mark.parametrize("design", ["uniform", "stratified", "positives", "uncertain"])
def test_sizes_and_inclusion_probabilities_match_the_design(design):
    """Each topic gets ceil(share N_t) documents, and over many draws each document is drawn
    with its stated probability pi (a probability sample)."""
    keys, machine = pool()
    certainty = {k: 0.3 + 0.6 * (int(k[1][1:]) % 7) / 6 for k in keys}
    counts = dict.fromkeys(keys, 0)
    draws = 800
    for seed in range(draws):
        sample = hybrid.draw_sample(keys, machine, design=design, share=0.2, seed=seed,
                                    certainty=certainty)  # fmt: skip
        for qid in ("q0", "q1", "q2"):
            assert sum(s.sampled for s in sample if s.key[0] == qid) == 8
        for s in sample:
            counts[s.key] += s.sampled
    pi = {s.key: s.inclusion_prob for s in sample}
    assert sum(pi[k] for k in keys if k[0] == "q0") == pytest.approx(8)
    for key in keys:
        expected = pi[key]
        spread = 4 * math.sqrt(expected * (1 - expected) / draws) + 1e-9
        assert abs(counts[key] / draws - expected) <= spread, (key, counts[key], expected)


def test_stratified_allocates_equally_and_positives_top_down():
    keys, machine = pool(topics=1, per_topic=40)  # strata: 6 of grade 2, 6 of 1, 28 of 0
    strat = hybrid.draw_sample(keys, machine, design="stratified", share=0.3, seed=1)
    by = {g: sum(s.sampled for s in strat if s.stratum == g) for g in (0, 1, 2)}
    assert by == {0: 4, 1: 4, 2: 4}
    pos = hybrid.draw_sample(keys, machine, design="positives", share=0.3, seed=1)
    by = {g: sum(s.sampled for s in pos if s.stratum == g) for g in (0, 1, 2)}
    assert by == {0: 2, 1: 4, 2: 6}  # 10 % of 12 kept for the grade-0 stratum: 2 (at least 1)


def test_unlabelled_and_flagged_documents_are_always_sampled():
    keys, machine = pool(topics=1, per_topic=20)
    del machine[keys[15]]
    sample = hybrid.draw_sample(keys, machine, design="uniform", share=0.1, seed=0,
                                always={keys[16]})  # fmt: skip
    chosen = {s.key for s in sample if s.sampled}
    assert {keys[15], keys[16]} == chosen  # the whole budget of 2
    assert all(s.inclusion_prob == 1 for s in sample if s.key in chosen)


def test_uncertain_needs_probabilities_and_verify_needs_ranks():
    keys, machine = pool(topics=1, per_topic=10)
    with pytest.raises(hybrid.DesignError, match="token probabilities"):
        hybrid.draw_sample(keys, machine, design="uncertain", share=0.5)
    with pytest.raises(hybrid.DesignError, match="best ranks"):
        hybrid.draw_sample(keys, machine, design="verify", share=0.5)
    with pytest.raises(hybrid.DesignError, match="share"):
        hybrid.draw_sample(keys, machine, design="uniform", share=0)


def test_verify_takes_the_top_then_the_machines_positives():
    keys = [("q", f"d{i}") for i in range(10)]
    ranks = {k: i + 1 for i, k in enumerate(keys)}
    machine = {k: int(i in (7, 9)) for i, k in enumerate(keys)}
    sample = hybrid.draw_sample(keys, machine, design="verify", share=0.6, ranks=ranks)
    assert sorted(int(s.key[1][1:]) for s in sample if s.sampled) == [0, 1, 2, 3, 7, 9]
    # an estimate from it covers only its own documents (the others had no chance)
    human = dict.fromkeys(keys, 0)
    estimate = hybrid.estimate_error(sample, human, machine, level=1, design="verify")
    assert (estimate.pooled, estimate.uncovered) == (6, 4)
    assert estimate.error_rate == pytest.approx(2 / 6) and estimate.low == estimate.high


@pytest.mark.slow
@pytest.mark.parametrize("design", ["uniform", "stratified", "positives", "uncertain"])
def test_the_horvitz_thompson_error_estimate_is_unbiased(design):
    """Over many samples the estimate averages the true disagreement rate, and its 95 %
    interval covers it about 95 % of the time."""
    keys, machine = pool(topics=4, per_topic=50)
    rng = np.random.default_rng(0)
    human = {k: int(rng.random() < (0.7 if machine[k] else 0.1)) for k in keys}
    certainty = {k: 0.3 + 0.6 * (int(k[1][1:]) % 7) / 6 for k in keys}
    truth = sum((machine[k] >= 1) != (human[k] >= 1) for k in keys) / len(keys)
    estimates, covered = [], 0
    for seed in range(400):
        sample = hybrid.draw_sample(keys, machine, design=design, share=0.25, seed=seed,
                                    certainty=certainty)  # fmt: skip
        e = hybrid.estimate_error(sample, human, machine, level=1, design=design)
        estimates.append(e.error_rate)
        covered += e.low <= truth <= e.high
        assert e.false_positive_rate + e.false_negative_rate == pytest.approx(e.error_rate)
    assert np.mean(estimates) == pytest.approx(truth, abs=0.01)
    assert covered / 400 >= 0.85  # measured: 0.97, 1.00, 1.00 and 0.89 (see docs/methods.md)


def test_compositions_and_disagreements():
    human = {("q", "a"): 2, ("q", "b"): 0}
    machine = {("q", "a"): 0, ("q", "b"): 0, ("q", "c"): 1}
    combined = hybrid.hybrid_labels(human, machine, [("q", "a"), ("q", "c"), ("q", "d")], "m")
    assert combined.labels == {("q", "a"): 2, ("q", "b"): 0, ("q", "c"): 1}
    assert combined.sources == {("q", "a"): "human", ("q", "b"): "human", ("q", "c"): "m"}
    assert combined.missing == (("q", "d"),) and combined.count("m") == 1
    first = {("q", "a"): 2, ("q", "b"): 1, ("q", "c"): 1}
    assert hybrid.disagreements(first, machine, level=1, on="relevance") == [("q", "a"), ("q", "b")]
    assert hybrid.disagreements(first, machine, level=2, on="relevance") == [("q", "a")]
    assert hybrid.disagreements(first, {**machine, ("q", "c"): 2}, level=1, on="grade") == [
        ("q", "a"),
        ("q", "b"),
        ("q", "c"),
    ]
