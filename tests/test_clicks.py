"""Click signals: every formula on a log small enough to work out by hand."""

from __future__ import annotations

import math

import pytest

from workbench.clicks import (
    LAST_CLICK_SKIP_ABOVE,
    SKIP_ABOVE,
    SKIP_NEXT,
    Click,
    Impression,
    PairAgreement,
    Preference,
    Rate,
    aggregate_preferences,
    agreement_interval,
    click_deviation,
    ctr_by_document,
    ctr_by_query_document,
    ctr_by_rank,
    deviating_clicks,
    document_deviation,
    filter_clicks,
    impression_preferences,
    last_click,
    pooled_agreement,
    preference_agreement,
    prefs_lines,
)
from workbench.metrics.prefs import TrecEvalFlags, evaluate_prefs
from workbench.trec import PrefsLine, Run


def imp(query: str, results: str, clicked: str = "", **kw) -> Impression:
    return Impression(query, tuple(results), tuple(Click(d) for d in clicked), **kw)


# q1 shows A,B,C twice and B,A,C once; q2 shows D,E once.
LOG = [
    imp("q1", "ABC", "B"),
    imp("q1", "ABC", "AC"),
    imp("q1", "BAC"),
    imp("q2", "DE", "D"),
]


def test_ctr_by_rank_is_clicks_over_impressions_showing_the_rank():
    # rank 1: A, A, B, D shown, A (imp 2) and D clicked; rank 2: B, B, A, E, B (imp 1)
    # clicked; rank 3: C three times, clicked once.
    assert ctr_by_rank(LOG) == {1: Rate(2, 4), 2: Rate(1, 4), 3: Rate(1, 3)}
    assert ctr_by_rank(LOG)[3].value == pytest.approx(1 / 3)


def test_ctr_by_document_per_query_docno_and_rank():
    assert ctr_by_document(LOG) == {
        ("q1", "A", 1): Rate(1, 2),
        ("q1", "B", 2): Rate(1, 2),
        ("q1", "C", 3): Rate(1, 3),
        ("q1", "B", 1): Rate(0, 1),
        ("q1", "A", 2): Rate(0, 1),
        ("q2", "D", 1): Rate(1, 1),
        ("q2", "E", 2): Rate(0, 1),
    }
    assert ctr_by_query_document(LOG)[("q1", "A")] == Rate(1, 3)
    assert Rate(0, 0).value == 0.0


def test_click_deviation_is_observed_minus_expected_at_the_rank():
    cd = click_deviation(LOG)
    # O(A,1) = 1/2, E(1) = 2/4; O(B,2) = 1/2, E(2) = 1/4; O(C,3) = 1/3 = E(3) ...
    assert cd[("q1", "A", 1)] == pytest.approx(0.0)
    assert cd[("q1", "B", 2)] == pytest.approx(0.25)
    assert cd[("q1", "C", 3)] == pytest.approx(0.0)
    assert cd[("q1", "B", 1)] == pytest.approx(-0.5)
    assert cd[("q1", "A", 2)] == pytest.approx(-0.25)
    assert cd[("q2", "D", 1)] == pytest.approx(0.5)
    assert cd[("q2", "E", 2)] == pytest.approx(-0.25)
    assert deviating_clicks(cd, 0.1) == {("q1", "B", 2), ("q2", "D", 1)}
    assert deviating_clicks(cd, 0.5) == set()


def test_document_deviation_weighs_ranks_by_impressions():
    dev = document_deviation(LOG)
    # A: 1 click, expected 2 x E(1) + 1 x E(2) = 1.25, over 3 impressions
    assert dev[("q1", "A")] == pytest.approx((1 - 1.25) / 3)
    # B: 1 click, expected 2 x 1/4 + 1 x 1/2 = 1
    assert dev[("q1", "B")] == pytest.approx(0.0)
    assert dev[("q1", "C")] == pytest.approx(0.0)
    assert dev[("q2", "D")] == pytest.approx(0.5)
    assert dev[("q2", "E")] == pytest.approx(-0.25)


def test_filter_clicks_keeps_only_deviating_clicks():
    kept = filter_clicks(LOG, {("q1", "B", 2)})
    assert [i.clicked for i in kept] == [frozenset("B"), frozenset(), frozenset(), frozenset()]
    assert [i.results for i in kept] == [i.results for i in LOG]


def test_impression_rejects_clicks_on_unshown_or_repeated_documents():
    with pytest.raises(ValueError, match="unshown"):
        imp("q", "AB", "C")
    with pytest.raises(ValueError, match="twice"):
        imp("q", "AA")


def test_skip_above():
    assert impression_preferences(imp("q", "ABCD", "C"), SKIP_ABOVE) == [("C", "A"), ("C", "B")]
    # clicked documents above a click are not skipped
    assert sorted(impression_preferences(imp("q", "ABCD", "AD"), SKIP_ABOVE)) == [
        ("D", "B"),
        ("D", "C"),
    ]
    assert impression_preferences(imp("q", "ABC", "A"), SKIP_ABOVE) == []


def test_skip_next():
    assert impression_preferences(imp("q", "ABCD", "AC"), SKIP_NEXT) == [("A", "B"), ("C", "D")]
    assert impression_preferences(imp("q", "ABC", "AB"), SKIP_NEXT) == [("B", "C")]
    assert impression_preferences(imp("q", "ABC", "C"), SKIP_NEXT) == []


def test_last_click_skip_above_uses_the_latest_click():
    # without times the last listed click is the last one
    assert impression_preferences(imp("q", "ABCD", "CB"), LAST_CLICK_SKIP_ABOVE) == [("B", "A")]
    timed = Impression("q", tuple("ABCD"), (Click("D", 5.0), Click("B", 9.0)))
    assert last_click(timed) == "B"
    assert impression_preferences(timed, LAST_CLICK_SKIP_ABOVE) == [("B", "A")]
    early = Impression("q", tuple("ABCD"), (Click("D", 9.0), Click("B", 5.0)))
    assert last_click(early) == "D"
    assert impression_preferences(early, LAST_CLICK_SKIP_ABOVE) == [("D", "A"), ("D", "C")]
    assert last_click(imp("q", "AB")) is None
    with pytest.raises(ValueError, match="unknown preference strategy"):
        impression_preferences(timed, "skip-everything")


def test_aggregation_keeps_the_majority_with_at_least_m_impressions():
    log = [imp("q", "AB", "B")] * 3 + [imp("q", "BA", "A")] + [imp("r", "XY", "Y")] * 2
    log += [imp("r", "YX", "X")] * 2  # 2 against 2: no majority
    assert aggregate_preferences(log, SKIP_ABOVE) == [Preference("q", "B", "A", 3, 1)]
    assert aggregate_preferences(log, SKIP_ABOVE, min_support=3) == [
        Preference("q", "B", "A", 3, 1)
    ]
    assert aggregate_preferences(log, SKIP_ABOVE, min_support=4) == []
    # one impression counts a pair once
    assert aggregate_preferences([imp("q", "AB", "BB")], SKIP_ABOVE) == [
        Preference("q", "B", "A", 1, 0)
    ]
    with pytest.raises(ValueError):
        aggregate_preferences(log, min_support=0)


def test_prefs_lines_one_judgment_group_per_preference_and_trec_eval_scores_them():
    prefs = [Preference("q1", "B", "A", 3, 0), Preference("q1", "C", "B", 2, 1)]
    lines = prefs_lines(prefs)
    assert lines == [
        PrefsLine("q1", "p1", "1", "B", 1.0),
        PrefsLine("q1", "p1", "1", "A", 0.0),
        PrefsLine("q1", "p2", "1", "C", 1.0),
        PrefsLine("q1", "p2", "1", "B", 0.0),
    ]
    # ranking B, C, A fulfils B > A but not C > B: prefs_simp = 1/2
    run = Run.from_dict({"q1": {"B": 3.0, "C": 2.0, "A": 1.0}}, tag="r")
    out = {
        m: v
        for m, q, v in evaluate_prefs(lines, run, ["prefs_simp"], TrecEvalFlags(per_topic=False))
    }
    assert out["prefs_simp"] == pytest.approx(0.5)


def test_preference_agreement_counts_pairs_of_judged_documents_with_different_grades():
    prefs = [
        Preference("q1", "B", "A", 3, 0),  # 2 > 0: consistent
        Preference("q1", "C", "B", 2, 0),  # 1 < 2: inconsistent
        Preference("q1", "C", "D", 2, 0),  # D unjudged: not counted
        Preference("q2", "D", "E", 1, 0),  # equal grades: not counted
        Preference("q3", "F", "G", 1, 0),  # 1 > 0
    ]
    qrels = {"q1": {"A": 0, "B": 2, "C": 1}, "q2": {"D": 1, "E": 1}, "q3": {"F": 1, "G": 0}}
    per_query = preference_agreement(prefs, qrels)
    assert per_query == {"q1": PairAgreement(1, 2), "q3": PairAgreement(1, 1)}
    overall = pooled_agreement(per_query)
    assert overall == PairAgreement(2, 3) and overall.share == pytest.approx(2 / 3)
    assert math.isnan(PairAgreement(0, 0).share)


def test_agreement_interval_resamples_topics():
    one = {"q": PairAgreement(3, 4)}
    assert agreement_interval(one, n_resamples=50) == (0.75, 0.75)
    two = {"a": PairAgreement(1, 1), "b": PairAgreement(0, 1)}
    low, high = agreement_interval(two, n_resamples=400, seed=1)
    # resamples give shares 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4
    assert (low, high) == (0.0, 1.0)
    assert all(math.isnan(x) for x in agreement_interval({}))
