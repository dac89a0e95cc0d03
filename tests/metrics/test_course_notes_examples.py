"""The worked examples of the course notes (../shared/notes), through the public API."""

from __future__ import annotations

import pytest

from workbench.metrics import evaluate

DCG_GRADES = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]


def _ranked(grades: list[int], extra_judged: dict[str, int] | None = None):
    """A run ranking d01, d02 ... in order, and qrels giving each its grade."""
    run = {"q": {f"d{i:02d}": float(100 - i) for i in range(1, len(grades) + 1)}}
    judged = {f"d{i:02d}": g for i, g in enumerate(grades, 1)}
    judged.update(extra_judged or {})
    return {"q": judged}, run


def test_average_precision_with_ten_relevant() -> None:
    """Relevant at ranks 1, 2, 5, 8 of 10 relevant: AP = (1/1 + 2/2 + 3/5 + 4/8) / 10."""
    grades = [1, 1, 0, 0, 1, 0, 0, 1, 0, 0]
    qrels, run = _ranked(grades, {f"unretrieved{i}": 1 for i in range(6)})
    result = evaluate(qrels, run, ["AP"])
    assert result.per_topic["q"]["map"] == pytest.approx((1 / 1 + 2 / 2 + 3 / 5 + 4 / 8) / 10)


def test_precision_at_k_and_ap_of_rnrnr() -> None:
    qrels, run = _ranked([1, 0, 1, 0, 1])
    values = evaluate(qrels, run, ["P.3,4,5", "map"]).per_topic["q"]
    assert values["P_3"] == pytest.approx(2 / 3)
    assert values["P_4"] == pytest.approx(2 / 4)
    assert values["P_5"] == pytest.approx(3 / 5)
    assert values["map"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    assert values["map"] == pytest.approx(0.76, abs=0.005)


def test_dcg_and_ndcg_of_the_course_notes() -> None:
    """DCG = rel_1 + sum_{i>=2} rel_i / log2 i: 9.61 at 10; ideal 3,3,3,2,2,2,1 -> NDCG 0.88."""
    qrels, run = _ranked(DCG_GRADES)
    values = evaluate(qrels, run, ["dcg_notes.5,10", "ndcg_notes.1,10"]).per_topic["q"]
    assert values["dcg_notes_5"] == pytest.approx(6.89, abs=0.005)
    assert values["dcg_notes_10"] == pytest.approx(9.61, abs=0.005)
    assert values["ndcg_notes_1"] == pytest.approx(1.0)
    assert values["ndcg_notes_10"] == pytest.approx(0.88, abs=0.005)


def test_trec_eval_ndcg_differs_from_the_course_notes() -> None:
    """trec_eval's ndcg discounts by log2(i + 1), so rank 2 counts less than in the course notes."""
    qrels, run = _ranked(DCG_GRADES)
    values = evaluate(qrels, run, ["ndcg_cut.10", "nDCG@10", "expDCG@2"]).per_topic["q"]
    import math

    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(DCG_GRADES, 1))
    ideal = sum(g / math.log2(i + 1) for i, g in enumerate([3, 3, 3, 2, 2, 2, 1], 1))
    assert values["ndcg_cut_10"] == pytest.approx(dcg / ideal)
    assert values["ndcg_cut_10"] != pytest.approx(0.88, abs=0.005)
    assert values["dcg_exp_2"] == pytest.approx((2**3 - 1) / 1 + (2**2 - 1) / math.log2(3))
