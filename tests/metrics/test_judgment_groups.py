"""trec_eval's judgment-group measures (-R qrels_jg): the oracle and hand-worked cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.metrics.judgment_groups import evaluate_judgment_groups
from workbench.metrics.names import MeasureError
from workbench.metrics.prefs import TrecEvalFlags
from workbench.metrics.report import format_line
from workbench.trec import JudgmentGroupLine, Run, TrecFormatError, read_qrels_jg, read_run


def trec_eval_text(lines: list[tuple[str, str, int | float | str]]) -> str:
    """The lines as trec_eval prints them, through the CLI's one formatter."""
    return "".join(format_line(name, qid, value) for name, qid, value in lines)


def values(lines: list[tuple[str, str, int | float | str]], qid: str) -> dict:
    return {name: value for name, q, value in lines if q == qid}


def judged(qid: str, jg: str, *docs: tuple[str, int]) -> list[JudgmentGroupLine]:
    return [JudgmentGroupLine(qid, jg, docno, rel) for docno, rel in docs]


# Topic q, run d1 > d2 > d3.  JG "a" judges d1 relevant; JG "b" judges d2 and d3 relevant.
TWO_GROUPS = judged("q", "b", ("d2", 1), ("d3", 1), ("d1", 0)) + judged("q", "a", ("d1", 1))
RUN = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, tag="r1")


@pytest.mark.parametrize("qrels_file", ["qrels.123", "qrels.comments.123"])
def test_qrels_jg_matches_trec_eval(oracle_dir: Path, qrels_file: str) -> None:
    lines = evaluate_judgment_groups(
        read_qrels_jg(oracle_dir / qrels_file),
        read_run(oracle_dir / "results.test"),
        ["qrels_jg"],
        TrecEvalFlags(per_topic=True),
    )
    assert trec_eval_text(lines) == (oracle_dir / "out.test.qrels_jg").read_text()


def test_measures_are_averaged_over_judgment_groups() -> None:
    out = evaluate_judgment_groups(
        TWO_GROUPS,
        RUN,
        ["map_avgjg", "P_avgjg.2,1", "Rprec_mult_avgjg.1.0,0.5"],
        TrecEvalFlags(per_topic=True),
    )
    v = values(out, "q")
    # AP: JG a 1/1; JG b (1/2 + 2/3) / 2
    assert v["map_avgjg"] == pytest.approx((1 + (1 / 2 + 2 / 3) / 2) / 2)
    # P@1: a 1, b 0.  P@2: a 1/2, b 1/2.
    assert v["P_avgjg_1"] == pytest.approx(0.5)
    assert v["P_avgjg_2"] == pytest.approx(0.5)
    # R-prec x1.0: a R=1, P@1 = 1; b R=2, P@2 = 1/2.   x0.5: c = (long)(0.5 R + 0.9) = 1 in
    # both JGs: a P@1 = 1, b P@1 = 0.
    assert v["Rprec_mult_avgjg_1.00"] == pytest.approx(0.75)
    assert v["Rprec_mult_avgjg_0.50"] == pytest.approx(0.5)
    # parameters print sorted, trec_eval's names
    assert [name for name, qid, _ in out if qid == "q"] == [
        "map_avgjg", "P_avgjg_1", "P_avgjg_2", "Rprec_mult_avgjg_0.50", "Rprec_mult_avgjg_1.00",
    ]  # fmt: skip


def test_one_group_is_not_divided() -> None:
    one = judged("q", "b", ("d2", 1), ("d3", 1))
    v = values(
        evaluate_judgment_groups(one, RUN, ["map_avgjg"], TrecEvalFlags(per_topic=True)), "q"
    )
    assert v["map_avgjg"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_summary_and_topic_selection() -> None:
    lines = TWO_GROUPS + judged("absent", "a", ("d1", 1))
    out = evaluate_judgment_groups(lines, RUN, ["qrels_jg"], TrecEvalFlags(per_topic=False))
    v = values(out, "all")
    assert (v["runid"], v["num_q"]) == ("r1", 1)
    assert {qid for _, qid, _ in out} == {"all"}
    assert len(out) == 2 + 1 + 9 + 10
    complete = evaluate_judgment_groups(
        lines,
        RUN,
        ["num_q", "P_avgjg.1"],
        TrecEvalFlags(per_topic=True, average_over_all_topics=True),
    )
    assert values(complete, "absent") == {"P_avgjg_1": 0.0}
    assert values(complete, "all") == {"num_q": 2, "P_avgjg_1": pytest.approx(0.25)}


def test_relevance_level_and_max_results() -> None:
    graded = judged("q", "a", ("d1", 1), ("d2", 2))
    level2 = evaluate_judgment_groups(
        graded, RUN, ["P_avgjg.1,2"], TrecEvalFlags(per_topic=True, relevance_level=2)
    )
    assert values(level2, "q") == {"P_avgjg_1": 0.0, "P_avgjg_2": 0.5}
    cut = evaluate_judgment_groups(
        graded, RUN, ["P_avgjg.2"], TrecEvalFlags(per_topic=True, max_results=1)
    )
    assert values(cut, "q") == {"P_avgjg_2": 0.5}  # d2 is cut off; P@2 = 1/2


def test_score_ties_are_broken_by_docno_descending() -> None:
    tied = Run.from_dict({"q": {"a": 1.0, "b": 1.0}})
    lines = judged("q", "0", ("a", 0), ("b", 1))
    v = values(
        evaluate_judgment_groups(lines, tied, ["P_avgjg.1"], TrecEvalFlags(per_topic=True)), "q"
    )
    assert v == {"P_avgjg_1": 1.0}


@pytest.mark.parametrize(
    "measure", ["P_avgjg.0", "P_avgjg.5,5", "P_avgjg.x", "P_avgjg.", "Rprec_mult_avgjg.1,1", "map"]
)
def test_bad_measures_are_rejected(measure: str) -> None:
    with pytest.raises(MeasureError):
        evaluate_judgment_groups(TWO_GROUPS, RUN, [measure], TrecEvalFlags(per_topic=True))


def test_cutoffs_are_read_as_trec_eval_reads_them() -> None:
    # C's atol, as for P.k: trec_eval 10 prints P_avgjg_1 and P_avgjg_2 for -m P_avgjg.1x,2
    out = evaluate_judgment_groups(TWO_GROUPS, RUN, ["P_avgjg.2x,1"], TrecEvalFlags(per_topic=True))
    assert list(values(out, "q")) == ["P_avgjg_1", "P_avgjg_2"]


def test_docno_twice_in_a_group_is_rejected() -> None:
    lines = judged("q", "a", ("d1", 1), ("d1", 0))
    with pytest.raises(TrecFormatError, match="at most once"):
        evaluate_judgment_groups(lines, RUN, ["qrels_jg"], TrecEvalFlags(per_topic=True))
