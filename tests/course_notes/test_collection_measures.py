"""Accuracy, error and fallout at collection scale: the worked example of notes 001."""

from __future__ import annotations

import pytest

from workbench.metrics.collection import collection_set_measures, set_measures

N = 1_000_000
# the notes' ranking of 10: R N N R N R N N R N, with R = 8 relevant in the collection
PATTERN = "RNNRNRNNRN"


def _example():
    run = {"q": {f"d{i:02d}": float(100 - i) for i in range(1, 11)}}
    judged = {f"d{i:02d}": int(c == "R") for i, c in enumerate(PATTERN, 1)}
    judged.update({f"missed{i}": 1 for i in range(4)})
    return {"q": judged}, run


def test_the_course_notes_worked_example_from_counts() -> None:
    m = set_measures(N, relevant=8, retrieved=10, relevant_retrieved=4)
    assert (m.true_positives, m.false_positives, m.false_negatives) == (4, 6, 4)
    assert m.true_negatives == 999_986
    assert m.accuracy == pytest.approx(0.99999)  # 99.999 %
    assert f"{100 * m.accuracy:.3f} %" == "99.999 %"
    assert m.error == pytest.approx(0.00001)  # 0.001 %
    assert m.precision == 0.4
    assert m.recall == 0.5
    assert m.arithmetic_mean == pytest.approx(0.45)
    assert round(m.f1, 3) == 0.444
    assert m.fallout == pytest.approx(6 / 999_992)


def test_the_empty_result_has_error_0_0008_percent() -> None:
    m = set_measures(N, relevant=8, retrieved=0, relevant_retrieved=0)
    assert m.error == pytest.approx(8 / N)
    assert f"{100 * m.error:.4f} %" == "0.0008 %"
    assert m.accuracy == pytest.approx(0.999992)
    assert (m.precision, m.recall, m.f1, m.fallout) == (0.0, 0.0, 0.0, 0.0)


def test_the_course_notes_table_of_means() -> None:
    """p, r, a.m., F1: (1, 0.125) -> 0.5625, 0.222; returning everything -> 0.500004, 0.000016."""
    top_one = set_measures(N, 8, 1, 1)
    assert top_one.arithmetic_mean == pytest.approx(0.5625)
    assert round(top_one.f1, 3) == 0.222
    everything = set_measures(N, 8, N, 8)
    assert everything.precision == pytest.approx(0.000008)
    assert everything.arithmetic_mean == pytest.approx(0.500004)
    assert everything.f1 == pytest.approx(0.000016, rel=1e-4)
    assert everything.fallout == 1.0 and everything.accuracy == pytest.approx(8 / N)


def test_from_a_run_and_qrels_through_the_metric_module() -> None:
    qrels, run = _example()
    result = collection_set_measures(qrels, run, N)
    m = result.per_topic["q"]
    assert (m.relevant, m.retrieved, m.relevant_retrieved) == (8, 10, 4)
    assert result.mean["accuracy"] == pytest.approx(0.99999)
    # -M 4: only the top 4 are retrieved (R N N R)
    top4 = collection_set_measures(qrels, run, N, max_results=4).per_topic["q"]
    assert (top4.retrieved, top4.relevant_retrieved, top4.fallout) == (4, 2, 2 / 999_992)


def test_relevance_level_and_mean_over_topics() -> None:
    qrels = {"a": {"x": 2, "y": 1}, "b": {"z": 1}}
    run = {"a": {"x": 2.0, "y": 1.0}, "b": {"w": 1.0}}
    result = collection_set_measures(qrels, run, 10, relevance_level=2)
    assert result.per_topic["a"].relevant == 1 and result.per_topic["a"].fallout == 1 / 9
    # topic b has qrels but no grade >= 2: trec_eval keeps it (num_rel 0), recall is 0
    assert result.per_topic["b"].recall == 0.0
    assert result.mean["precision"] == pytest.approx((0.5 + 0.0) / 2)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        set_measures(0, 0, 0, 0)
    with pytest.raises(ValueError, match="smaller than"):
        set_measures(10, 8, 10, 4)
    with pytest.raises(ValueError, match="exceeds"):
        set_measures(100, 2, 10, 4)
    qrels, run = _example()
    with pytest.raises(ValueError, match="at least 1"):
        collection_set_measures(qrels, run, 0)
