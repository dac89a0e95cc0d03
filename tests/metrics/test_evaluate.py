"""The Python API: evaluate(), names, variants beyond trec_eval, the 11-point curve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.metrics import (
    MeasureError,
    evaluate,
    interpolated_precision_recall,
    parse_measure,
    trec_order,
)

QRELS = {
    "1": {"a": 2, "b": 0, "c": 1, "d": -1, "z": 1},
    "2": {"x": 0, "y": 1},
    "3": {"m": 1},
}
RUN = {
    "1": {"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.5, "u": 0.4},
    "2": {"x": 3.0, "y": 1.0},
    "9": {"q": 1.0},
}


def test_trec_order_ties_by_docno_descending() -> None:
    order = trec_order(["dA", "dC", "dB", "x"], np.array([1.0, 1.0, 1.0, 2.0]))
    assert order.tolist() == [3, 1, 2, 0]
    scores = np.array([1.00000003, 1.00000002, 1.00000001])
    assert trec_order(["a", "b", "c"], scores).tolist() == [0, 1, 2]
    assert trec_order(["a", "b", "c"], scores, float32=True).tolist() == [2, 1, 0]


def test_friendly_names_equal_trec_eval_names() -> None:
    friendly = evaluate(QRELS, RUN, ["AP", "P@2", "R@5", "RR", "nDCG@3", "nDCG", "Rprec", "bpref"])
    plain = evaluate(
        QRELS, RUN, ["map", "P.2", "recall.5", "recip_rank", "ndcg_cut.3", "ndcg", "Rprec", "bpref"]
    )
    assert friendly.summary == plain.summary
    assert friendly.per_topic == plain.per_topic
    assert set(plain.summary) == {
        "map",
        "P_2",
        "recall_5",
        "recip_rank",
        "ndcg_cut_3",
        "ndcg",
        "Rprec",
        "bpref",
    }


def test_values_on_a_small_case() -> None:
    """Topic 1 ranks a(2) c(1) b(0) d(unjudged) u(not pooled): c before b on the tie."""
    result = evaluate(QRELS, RUN, ["map", "P.2", "num_rel", "num_ret", "relstring", "bpref"])
    one = result.per_topic["1"]
    assert one["relstring"] == "210.-"
    assert one["num_rel"] == 3 and one["num_ret"] == 5
    assert one["map"] == pytest.approx((1 + 1) / 3)
    assert one["P_2"] == 1.0
    assert one["bpref"] == pytest.approx(2 / 3)
    assert list(result.per_topic) == ["1", "2"]  # topic 3 has no results, 9 no qrels
    assert result.skipped == ["3"]
    assert result.summary["num_ret"] == 7
    assert result.summary["map"] == pytest.approx(((2 / 3) + 0.5) / 2)


def test_average_over_all_topics_and_gm() -> None:
    result = evaluate(QRELS, RUN, ["map", "gm_map", "num_q"], average_over_all_topics=True)
    assert result.summary["num_q"] == 3
    assert result.per_topic["3"]["map"] == 0.0
    assert result.summary["map"] == pytest.approx(((2 / 3) + 0.5) / 3)
    expected_gm = math.exp((math.log(2 / 3) + math.log(0.5) + math.log(1e-5)) / 3)
    assert result.summary["gm_map"] == pytest.approx(expected_gm)


def test_relevance_level_judged_only_and_max_results() -> None:
    strict = evaluate(QRELS, RUN, ["num_rel", "P.1"], relevance_level=2)
    assert strict.per_topic["1"]["num_rel"] == 1
    judged = evaluate(QRELS, RUN, ["num_ret", "relstring"], judged_only=True)
    assert judged.per_topic["1"]["relstring"] == "210"
    cut = evaluate(QRELS, RUN, ["num_ret"], max_results=2)
    assert cut.per_topic["1"]["num_ret"] == 2


def test_dcg_and_ideal_dcg_outside_all_trec() -> None:
    """trec_eval 10's dcg / ideal_dcg: gain / log2(rank + 1); ndcg is their ratio."""
    qrels = {"1": {"a": 2, "b": 1, "c": 0}}
    run = {"1": {"b": 2.0, "a": 1.0, "x": 0.5}}
    values = evaluate(qrels, run, ["dcg", "ideal_dcg", "ndcg"]).per_topic["1"]
    assert values["dcg"] == pytest.approx(1 + 2 / math.log2(3))
    assert values["ideal_dcg"] == pytest.approx(2 + 1 / math.log2(3))
    assert values["ndcg"] == pytest.approx(values["dcg"] / values["ideal_dcg"])
    names = [line.name for line in evaluate(qrels, run, ["all_trec"]).lines]
    assert "dcg" not in names and "ideal_dcg" not in names


def test_empty_inputs() -> None:
    assert evaluate({}, {}, ["map"]).summary == {"map": 0.0}
    complete = evaluate({"1": {"a": 1}}, {}, ["map", "num_q"], average_over_all_topics=True)
    assert complete.summary == {"map": 0.0, "num_q": 1}
    assert evaluate({"1": {"a": 1}}, {"2": {"a": 1.0}}, ["num_q"]).summary == {"num_q": 0}


def test_max_results_cuts_before_judged_only() -> None:
    """trec_eval truncates at -M, then drops unjudged documents: u costs a -M slot."""
    qrels = {"1": {"a": 1, "b": 1, "c": 0}}
    run = {"1": {"a": 4.0, "u": 3.0, "b": 2.0, "c": 1.0}}
    both = evaluate(qrels, run, ["num_ret", "num_rel_ret"], max_results=2, judged_only=True)
    assert both.per_topic["1"] == {"num_ret": 1, "num_rel_ret": 1}


def test_variants_beyond_trec_eval() -> None:
    values = evaluate(QRELS, RUN, ["F@0.5", "set_F", "Judged@4", "judged.10"]).per_topic["1"]
    precision, recall = 2 / 5, 2 / 3
    assert values["F_0.5"] == pytest.approx(1.25 * precision * recall / (0.25 * precision + recall))
    assert values["set_F"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert values["judged_4"] == 3 / 4
    assert values["judged_10"] == 3 / 10  # d is pooled but unjudged (negative grade)


def test_mean_measures_over_topics() -> None:
    result = evaluate(QRELS, RUN, ["MRR", "MAP", "gMAP"])
    per = [result.per_topic[q]["recip_rank"] for q in result.per_topic]
    assert result.summary["recip_rank"] == pytest.approx(sum(per) / len(per))
    assert result.summary["gm_map"] == pytest.approx(math.sqrt((2 / 3) * 0.5))


def test_interpolated_precision_recall_curve() -> None:
    curve = interpolated_precision_recall(QRELS, RUN)
    assert curve["1"].tolist()[:2] == [1.0, 1.0]
    assert len(curve["all"]) == 11
    assert curve["all"].tolist() == pytest.approx(((curve["1"] + curve["2"]) / 2).tolist())


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("P.5,10", ["P_5", "P_10"]),
        ("iprec_at_recall..10,.20", ["iprec_at_recall_0.10", "iprec_at_recall_0.20"]),
        ("Rprec_mult.0.5", ["Rprec_mult_0.50"]),
        ("ndcg_cut.23.4", ["ndcg_cut_23"]),
        ("success.1,5", ["success_1", "success_5"]),
        ("utility.2,-1,0,0", ["utility_2,-1,0,0"]),
        ("ndcg.1=3,2=9", ["ndcg_1=3,2=9"]),
        ("11pt_avg..25,.5", ["11pt_avg_.25,.5"]),
        ("relstring.20", ["relstring_20"]),
    ],
)
def test_parameter_syntax(name: str, printed: list[str]) -> None:
    assert [line.name for line in evaluate(QRELS, RUN, [name]).lines] == printed


@pytest.mark.parametrize(
    "name", ["nope", "P.0", "P.5,5", "P.x", "map.3", "utility.1,2", "ndcg.1:3"]
)
def test_bad_measure_names(name: str) -> None:
    with pytest.raises(MeasureError):
        parse_measure(name)
