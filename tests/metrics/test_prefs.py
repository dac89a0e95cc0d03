"""trec_eval's preference measures (-R prefs / -R qrels_prefs): the oracle and hand-worked cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property_examples import examples
from workbench.metrics.names import MeasureError
from workbench.metrics.prefs import (
    TrecEvalFlags,
    UnevaluableTopic,
    evaluate_prefs,
    prefs_from_qrels,
    resolve_prefs_measures,
)
from workbench.metrics.report import format_line
from workbench.trec import PrefsLine, Qrels, Run, read_prefs, read_qrels, read_run


def trec_eval_text(lines: list[tuple[str, str, int | float | str]]) -> str:
    """The lines as trec_eval prints them, through the CLI's one formatter."""
    return "".join(format_line(name, qid, value) for name, qid, value in lines)


def values(lines: list[tuple[str, str, int | float | str]], qid: str) -> dict:
    return {name: value for name, q, value in lines if q == qid}


def prefs(qid: str, jg: str, jsg: str, *docs: tuple[str, float]) -> list[PrefsLine]:
    return [PrefsLine(qid, jg, jsg, docno, rel) for docno, rel in docs]


def ranking(qid: str, *docnos: str) -> dict[str, dict[str, float]]:
    """docnos best first (distinct descending scores)."""
    return {qid: {d: float(len(docnos) - i) for i, d in enumerate(docnos)}}


# --------------------------------------------------------------------------- the oracle


@pytest.mark.parametrize("prefs_file", ["prefs.test", "prefs.comment.test"])
def test_all_prefs_matches_trec_eval(oracle_dir: Path, prefs_file: str) -> None:
    lines = evaluate_prefs(
        read_prefs(oracle_dir / prefs_file),
        read_run(oracle_dir / "prefs.results.test"),
        ["all_prefs"],
        TrecEvalFlags(per_topic=True),
    )
    assert trec_eval_text(lines) == (oracle_dir / "out.test.prefs").read_text()


def test_qrels_prefs_matches_trec_eval(oracle_dir: Path) -> None:
    lines = evaluate_prefs(
        prefs_from_qrels(read_qrels(oracle_dir / "qrels.test")),
        read_run(oracle_dir / "results.test"),
        ["all_prefs"],
        TrecEvalFlags(per_topic=True),
    )
    assert trec_eval_text(lines) == (oracle_dir / "out.test.qrels_prefs").read_text()


# --------------------------------------------------------------------------- hand-worked cases


def test_one_group_counts_retrieved_implied_and_pairs() -> None:
    # A(2) > B(1) > C(0); the run ranks B above A and misses C.
    # A>B retrieved, not fulfilled; A>C and B>C implied (winner retrieved), fulfilled.
    lines = evaluate_prefs(
        prefs("q", "0", "0", ("A", 2), ("B", 1), ("C", 0)),
        Run.from_dict(ranking("q", "B", "A")),
        ["all_prefs"],
        TrecEvalFlags(per_topic=True),
    )
    v = values(lines, "q")
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"]) == (3, 2)
    assert v["prefs_num_prefs_ful_ret"] == 0
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_simp_ret"] == 0.0  # 0 of the 1 retrieved preference
    assert v["prefs_simp_imp"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg"] == pytest.approx(2 / 3)
    # pairs {A,B}: 0, {A,C}: 1, {B,C}: 1
    assert v["prefs_pair_ret"] == 0.0
    assert v["prefs_pair_imp"] == pytest.approx(2 / 3)
    assert v["prefs_pair"] == pytest.approx(2 / 3)
    # R = 2 relevant (A, B) >= N = 1: add R*(R-N) = 2 fulfilled of 2 possible -> (2+2)/(3+2)
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(4 / 5)
    # retrieved: R = 2, N = 0: (0 + 2*2) / (1 + 2*2)
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(4 / 5)
    assert isinstance(v["prefs_num_prefs_poss"], int)


def test_neither_retrieved_is_possible_but_never_fulfilled() -> None:
    lines = evaluate_prefs(
        prefs("q", "0", "0", ("A", 1), ("B", 0)),
        Run.from_dict(ranking("q", "X")),
        ["prefs_num_prefs_poss", "prefs_simp", "prefs_pair", "prefs_pair_imp"],
        TrecEvalFlags(per_topic=True),
    )
    v = values(lines, "q")
    assert v["prefs_num_prefs_poss"] == 1
    assert v["prefs_simp"] == 0.0
    assert v["prefs_pair"] == 0.0  # one pair, counted, share 0
    assert v["prefs_pair_imp"] == 0.0  # no pair with a retrieved doc


def test_score_ties_are_broken_by_docno_ascending() -> None:
    # form_prefs_counts orders ties the other way round from the other trec_eval measures.
    tied = Run.from_dict({"q": {"b": 1.0, "a": 1.0}})
    better_first = prefs("q", "0", "0", ("a", 1), ("b", 0))
    worse_first = prefs("q", "0", "0", ("a", 0), ("b", 1))
    assert values(
        evaluate_prefs(better_first, tied, ["prefs_simp"], TrecEvalFlags(per_topic=True)), "q"
    ) == {"prefs_simp": 1.0}
    assert values(
        evaluate_prefs(worse_first, tied, ["prefs_simp"], TrecEvalFlags(per_topic=True)), "q"
    ) == {"prefs_simp": 0.0}


def test_sub_groups_imply_transitive_preferences() -> None:
    # JSG x: A > B, JSG y: B > C  =>  A > C as well: 3 preferences, not 2.
    lines = prefs("q", "0", "x", ("A", 2), ("B", 1)) + prefs("q", "0", "y", ("B", 2), ("C", 1))
    forward = evaluate_prefs(
        lines, Run.from_dict(ranking("q", "A", "B", "C")), ["prefs"], TrecEvalFlags(per_topic=True)
    )
    backward = evaluate_prefs(
        lines, Run.from_dict(ranking("q", "C", "B", "A")), ["prefs"], TrecEvalFlags(per_topic=True)
    )
    assert values(forward, "q")["prefs_num_prefs_poss"] == 3
    assert values(forward, "q")["prefs_simp"] == 1.0
    assert values(backward, "q")["prefs_num_prefs_ful"] == 0


def test_contradicting_groups_simp_avgjg_and_pair_differ() -> None:
    # JG 1: A > B.  JG 2: B > A > C.  Run: A, B, C.
    # JG 1 fulfils 1/1, JG 2 fulfils 2/3 (B>A fails).  Pairs: {A,B} 1 of 2, {A,C} 1, {B,C} 1.
    lines = prefs("q", "1", "0", ("A", 1), ("B", 0)) + prefs(
        "q", "2", "0", ("B", 2), ("A", 1), ("C", 0)
    )
    v = values(
        evaluate_prefs(
            lines,
            Run.from_dict(ranking("q", "A", "B", "C")),
            ["prefs"],
            TrecEvalFlags(per_topic=True),
        ),
        "q",
    )
    assert v["prefs_simp"] == pytest.approx(3 / 4)
    assert v["prefs_avgjg"] == pytest.approx((1 + 2 / 3) / 2)
    assert v["prefs_pair"] == pytest.approx((0.5 + 1 + 1) / 3)


def test_rnonrel_keeps_only_the_best_ranked_nonrelevant() -> None:
    # One relevant doc R, three non-relevant: only the best-ranked non-relevant one (N1) is
    # kept.  trec_eval's recount pairs every doc of every EC with N1 -- R, N1, N2, N3 -- and
    # a pair is fulfilled when the first doc is retrieved and ranked above N1.
    lines = prefs("q", "0", "0", ("R", 1), ("N1", 0), ("N2", 0), ("N3", 0))

    def rnonrel(*ranked: str) -> dict:
        out = evaluate_prefs(
            lines,
            Run.from_dict(ranking("q", *ranked)),
            ["prefs_simp", "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret"],
            TrecEvalFlags(per_topic=True),
        )
        return values(out, "q")

    below = rnonrel("N1", "R", "N2")  # N3 unretrieved; nothing above N1
    assert below["prefs_simp"] == pytest.approx(2 / 3)  # R>N2, R>N3 fulfilled, R>N1 not
    assert below["prefs_avgjg_Rnonrel"] == 0.0  # 0 of 4
    assert below["prefs_avgjg_Rnonrel_ret"] == 0.0  # 0 of 3 (R, N1, N2 vs N1)
    above = rnonrel("R", "N1", "N2")
    assert above["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)  # only R above N1
    assert above["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)


def test_summary_sums_counts_and_averages_ratios_over_topics() -> None:
    lines = prefs("q1", "0", "0", ("A", 1), ("B", 0)) + prefs(
        "q2", "0", "0", ("A", 1), ("B", 0), ("C", 0)
    )
    run = Run.from_dict({**ranking("q1", "A", "B"), **ranking("q2", "B", "A", "C")}, tag="myrun")
    out = evaluate_prefs(lines, run, ["all_prefs"], TrecEvalFlags(per_topic=False))
    v = values(out, "all")
    assert [name for name, _, _ in out[:2]] == ["runid", "num_q"]
    assert v["runid"] == "myrun"
    assert v["num_q"] == 2
    assert v["prefs_num_prefs_poss"] == 1 + 2
    assert v["prefs_num_prefs_ful"] == 1 + 1
    assert v["prefs_simp"] == pytest.approx((1 + 1 / 2) / 2)
    assert all(qid == "all" for _, qid, _ in out)


def test_topics_in_trec_eval_order_and_complete_rel_info() -> None:
    lines = (
        prefs("10", "0", "0", ("A", 1), ("B", 0))
        + prefs("9", "0", "0", ("A", 1), ("B", 0))
        + prefs("missing", "0", "0", ("A", 1), ("B", 0))
    )
    run = Run.from_dict({**ranking("9", "A", "B"), **ranking("10", "B", "A")})
    out = evaluate_prefs(lines, run, ["prefs_simp"], TrecEvalFlags(per_topic=True))
    assert [(qid, value) for _, qid, value in out] == [("10", 0.0), ("9", 1.0), ("all", 0.5)]
    wanted = ["num_q", "prefs_num_prefs_poss", "prefs_simp"]
    complete = evaluate_prefs(
        lines, run, wanted, TrecEvalFlags(per_topic=True, average_over_all_topics=True)
    )
    assert values(complete, "missing") == {"prefs_num_prefs_poss": 1, "prefs_simp": 0.0}
    assert values(complete, "all")["num_q"] == 3
    assert values(complete, "all")["prefs_simp"] == pytest.approx(1 / 3)


def test_max_results_cuts_the_ranking() -> None:
    lines = prefs("q", "0", "0", ("A", 1), ("B", 0))
    run = Run.from_dict(ranking("q", "X", "A", "B"))
    wanted = ["prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"]

    def counts(max_results: int | None) -> tuple:
        v = values(
            evaluate_prefs(
                lines, run, wanted, TrecEvalFlags(per_topic=True, max_results=max_results)
            ),
            "q",
        )
        return v["prefs_num_prefs_ful"], v["prefs_num_prefs_ful_ret"]

    assert counts(None) == (1, 1)  # A above B, both retrieved
    assert counts(2) == (1, 0)  # only A retrieved: implied, fulfilled
    assert counts(1) == (0, 0)  # neither retrieved
    assert counts(-1) == (0, 0)  # as trec_eval's -M-1: nothing retrieved


def test_qrels_as_prefs_uses_iteration_as_group() -> None:
    qrels = Qrels.from_dict({"q": {"A": 1, "B": 0}})
    assert prefs_from_qrels(qrels) == [
        PrefsLine("q", "0", "0", "A", 1.0),
        PrefsLine("q", "0", "0", "B", 0.0),
    ]


def test_measure_names_and_nicknames() -> None:
    assert resolve_prefs_measures(["prefs_pair", "prefs_simp"]) == ["prefs_simp", "prefs_pair"]
    assert resolve_prefs_measures(["prefs"])[-1] == "prefs_avgjg"
    assert len(resolve_prefs_measures(["all_prefs"])) == 16
    with pytest.raises(MeasureError, match="map"):
        resolve_prefs_measures(["map"])


def test_inconsistent_preferences_are_rejected() -> None:
    """trec_eval stops on such a topic ("Can't calculate measure", exit 4), after printing the
    topics before it: UnevaluableTopic carries those lines."""
    run = Run.from_dict({**ranking("a", "A"), **ranking("q", "A", "B")})
    first = prefs("a", "0", "0", ("A", 1))
    twice = first + prefs("q", "0", "0", ("A", 1), ("A", 2), ("B", 0))
    with pytest.raises(UnevaluableTopic, match="one rel level") as caught:
        evaluate_prefs(twice, run, ["prefs_simp"], TrecEvalFlags(per_topic=True))
    assert caught.value.qid == "q" and [line[1] for line in caught.value.lines] == ["a"]
    cycle = prefs("q", "0", "x", ("A", 2), ("B", 1)) + prefs("q", "0", "y", ("B", 2), ("A", 1))
    with pytest.raises(UnevaluableTopic, match="contradictions"):
        evaluate_prefs(cycle, run, ["prefs_simp"], TrecEvalFlags(per_topic=True))
    zero_and_relevant = prefs("q", "0", "x", ("A", 0), ("B", 1)) + prefs(
        "q", "0", "y", ("A", 2), ("B", 1)
    )
    with pytest.raises(UnevaluableTopic, match="relevant and non-relevant"):
        evaluate_prefs(zero_and_relevant, run, ["prefs_simp"], TrecEvalFlags(per_topic=True))


def test_zero_over_zero_group_makes_rnonrel_zero() -> None:
    # Only non-relevant docs: the recount finds 0 of 0 preferences (NaN in C), so the topic's
    # value is 0, not 1.
    lines = prefs("q", "0", "0", ("A", 0), ("B", 0))
    v = values(
        evaluate_prefs(
            lines, Run.from_dict(ranking("q", "A")), ["all_prefs"], TrecEvalFlags(per_topic=True)
        ),
        "q",
    )
    assert v["prefs_avgjg_Rnonrel"] == 0.0
    assert v["prefs_avgjg_Rnonrel_ret"] == 0.0


# --------------------------------------------------------------------------- by enumeration

DOCS = ["a", "b", "c", "d", "e", "f"]


@st.composite
def topics_with_preferences(draw: st.DrawFn) -> tuple[list[PrefsLine], dict[str, float], int]:
    """Random judgment groups (one or two sub-groups, consistent inside each group), a run
    with score ties, and a -M cut."""
    lines: list[PrefsLine] = []
    for jg in draw(st.lists(st.sampled_from("xyz"), min_size=1, max_size=3, unique=True)):
        hidden = {d: draw(st.sampled_from([0.0, 1.0, 2.0])) for d in DOCS}
        for jsg in ["0", "1"][: draw(st.integers(1, 2))]:
            judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
            lines.extend(PrefsLine("q", jg, jsg, d, hidden[d]) for d in judged)
    scores = draw(st.dictionaries(st.sampled_from([*DOCS, "u", "v"]), st.sampled_from([1.0, 2.0])))
    return lines, scores, draw(st.integers(1, 8))


def enumerated(lines: list[PrefsLine], scores: dict[str, float], cut: int) -> dict[str, float]:
    """The measures from their definitions, by listing every preference."""
    ranked = sorted(scores, key=lambda d: (-scores[d], d))[:cut]
    judged = sorted({line.docno for line in lines})
    retrieved = [d for d in ranked if d in judged]
    order = retrieved + [d for d in judged if d not in retrieved]
    position = {d: i for i, d in enumerate(order)}
    stated: list[tuple[str, str, str]] = []  # (jg, winner, loser)
    for jg in sorted({line.jg for line in lines}):
        group = [line for line in lines if line.jg == jg]
        jsgs = {line.jsg for line in group}
        pairs = [(a.docno, b.docno) for a in group for b in group
                 if a.jsg == b.jsg and a.rel > b.rel]  # fmt: skip
        if len(jsgs) > 1:  # transitive closure, each pair once
            closure = set(pairs)
            for k in judged:
                closure |= {(i, j) for (i, m) in closure for (n, j) in closure if m == k == n}
            pairs = sorted(closure)
        stated.extend((jg, w, lo) for w, lo in pairs)

    def retrieved_pos(d: str) -> bool:
        return d in retrieved

    def fulfilled(w: str, lo: str) -> bool:
        return retrieved_pos(w) and position[w] < position[lo]

    both = [(w, lo) for _, w, lo in stated if retrieved_pos(w) and retrieved_pos(lo)]
    some = [(w, lo) for _, w, lo in stated if retrieved_pos(w) or retrieved_pos(lo)]
    per_pair: dict[frozenset, list[bool]] = {}
    for _, w, lo in stated:
        per_pair.setdefault(frozenset((w, lo)), []).append(fulfilled(w, lo))
    shares = {p: sum(v) / len(v) for p, v in per_pair.items()}
    pairs_some = [p for p in shares if any(retrieved_pos(d) for d in p)]
    pairs_both = [p for p in shares if all(retrieved_pos(d) for d in p)]
    ful = sum(fulfilled(w, lo) for _, w, lo in stated)
    return {
        "prefs_num_prefs_poss": len(stated),
        "prefs_num_prefs_ful": ful,
        "prefs_num_prefs_ful_ret": sum(fulfilled(w, lo) for w, lo in both),
        "prefs_simp": ful / len(stated) if stated else 0.0,
        "prefs_simp_imp": sum(fulfilled(w, lo) for w, lo in some) / len(some) if some else 0.0,
        "prefs_pair": sum(shares[p] for p in pairs_some) / len(shares) if shares else 0.0,
        "prefs_pair_ret": (
            sum(shares[p] for p in pairs_both) / len(pairs_both) if pairs_both else 0.0
        ),
    }


@settings(max_examples=examples(80), deadline=None)
@given(topics_with_preferences())
def test_counts_and_ratios_match_enumeration(case) -> None:
    lines, scores, cut = case
    expected = enumerated(lines, scores, cut)
    run = Run.from_dict({"q": scores} if scores else {"q": {"zz": 0.0}})
    got = values(
        evaluate_prefs(lines, run, list(expected), TrecEvalFlags(per_topic=True, max_results=cut)),
        "q",
    )
    assert got == pytest.approx(expected)
