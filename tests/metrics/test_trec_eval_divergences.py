"""Each divergence from trec_eval found by the differential harness, pinned with the output the
trec_eval 10.0 and 9.0.8 binaries print for these inputs (identical in both unless stated)."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from workbench import metrics
from workbench.metrics.evaluation import TopicError
from workbench.metrics.measures import glibc_merge_sort
from workbench.trec import TrecFormatError, read_qrels, read_run
from workbench.trec_eval_command import run_trec_eval


def _files(tmp_path: Path, qrels: str, run: str) -> tuple[str, str]:
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return str(tmp_path / "q"), str(tmp_path / "r")


def _trec_eval(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_trec_eval(list(args), out, err)
    return status, out.getvalue(), err.getvalue()


def _line(name: str, qid: str, value: str) -> str:
    return f"{name:<22}\t{qid}\t{value}\n"


@pytest.mark.parametrize("compat", ["9", "10"])
def test_set_map_is_rel_ret_squared_over_ret_times_rel(tmp_path: Path, compat: str) -> None:
    """9/160 = 0.05625: trec_eval's 3*3 / (16*10) prints 0.0563; (3/16)*(3/10) gave 0.0562."""
    qrels = "".join(f"1 0 d{i} 1\n" for i in range(1, 11))
    docs = [f"x{i}" for i in range(1, 17)]
    docs[0], docs[4], docs[8] = "d1", "d2", "d3"
    run = "".join(f"1 Q0 {d} {i} {100 - i} r\n" for i, d in enumerate(docs, 1))
    q, r = _files(tmp_path, qrels, run)
    assert _trec_eval("--compat", compat, "-m", "set_map", q, r)[1] == _line(
        "set_map", "all", "0.0563"
    )


@pytest.mark.parametrize("compat", ["9", "10"])
def test_num_rel_summary_under_c_counts_every_positive_qrels_line(
    tmp_path: Path, compat: str
) -> None:
    """te_calc_avg_num_rel: rel > 0 lines of every qrels topic, whatever -l, -J, -M."""
    q, r = _files(
        tmp_path,
        "1 0 a 1\n1 0 b 2\n1 0 c -1\n2 0 a 3\n2 0 b 0\n3 0 z 1\n",
        "1 Q0 a 1 1 r\n2 Q0 b 1 1 r\n",
    )
    for flags in (["-l", "2"], ["-J", "-M", "1"], []):
        status, out, _ = _trec_eval("--compat", compat, "-c", *flags, "-m", "num_rel", q, r)
        assert (status, out) == (0, _line("num_rel", "all", "4"))
    # without -c the summary stays the sum of the per-topic values
    assert _trec_eval("--compat", compat, "-l", "2", "-m", "num_rel", q, r)[1].endswith(
        _line("num_rel", "all", "2")
    )


@pytest.mark.parametrize("compat", ["9", "10"])
def test_judged_only_topic_with_nothing_judged_retrieved_is_nan(
    tmp_path: Path, compat: str
) -> None:
    q, r = _files(
        tmp_path,
        "1 0 a 1\n1 0 b 0\n2 0 a 1\n2 0 q 0\n",
        "1 Q0 a 1 1.0 r\n1 Q0 b 2 0.5 r\n2 Q0 x 1 1 r\n2 Q0 y 1 2 r\n",
    )
    args = ["--compat", compat, "-J", "-q", "-m", "iprec_at_recall..0,.5", "-m", "11pt_avg"]
    status, out, _ = _trec_eval(*args, q, r)
    assert status == 0
    assert out == "".join(
        _line(*fields)
        for fields in [
            ("iprec_at_recall_0.00", "1", "1.0000"),
            ("iprec_at_recall_0.50", "1", "1.0000"),
            ("11pt_avg", "1", "1.0000"),
            ("iprec_at_recall_0.00", "2", "  -nan"),
            ("iprec_at_recall_0.50", "2", "0.0000"),
            ("11pt_avg", "2", "  -nan"),
            ("iprec_at_recall_0.00", "all", "  -nan"),
            ("iprec_at_recall_0.50", "all", "0.5000"),
            ("11pt_avg", "all", "  -nan"),
        ]
    )
    # The Python API gives NaN, not a made-up 0.
    result = metrics.evaluate(
        read_qrels(q), read_run(r), ["iprec_at_recall", "11pt_avg"], judged_only=True
    )
    assert math.isnan(result.per_topic["2"]["iprec_at_recall_0.00"])
    assert math.isnan(result.summary["11pt_avg"])
    assert result.per_topic["2"]["iprec_at_recall_1.00"] == 0.0


DUP_QRELS = "1 0 a 1\n1 0 b 0\n2 0 a 1\n3 0 c 1\n"
DUP_RUN = (
    "1 Q0 a 1 1.0 r\n1 Q0 b 2 0.5 r\n3 Q0 c 1 1 r\n4 Q0 z 1 1 r\n4 Q0 z 1 1 r\n"
    "2 Q0 a 1 1 r\n2 Q0 x 1 1 r\n2 Q0 a 1 0.1 r\n"
)


def test_duplicate_docno_in_a_topic_without_qrels_is_no_error(tmp_path: Path) -> None:
    q, r = _files(tmp_path, DUP_QRELS, DUP_RUN)
    # -M1 cuts topic 2's repeated 'a' (ranked 2nd and 3rd): every topic is evaluated
    status, out, _ = _trec_eval("-q", "-M1", "-m", "P.2", q, r)
    assert status == 0
    assert out == "".join(
        _line("P_2", qid, value)
        for qid, value in [("1", "0.5000"), ("2", "0.0000"), ("3", "0.5000"), ("all", "0.3333")]
    )


@pytest.mark.parametrize("compat", ["9", "10"])
def test_duplicate_docno_in_an_evaluated_topic_stops_as_trec_eval(
    tmp_path: Path, compat: str
) -> None:
    """trec_eval prints the topics before it (-q), no summary, and exits with status 4."""
    q, r = _files(tmp_path, DUP_QRELS, DUP_RUN)
    status, out, err = _trec_eval("--compat", compat, "-q", "-m", "P.2", q, r)
    assert (status, out) == (4, _line("P_2", "1", "0.5000"))
    assert "topic '2'" in err and "'a' appears twice" in err and "measure 'P'" in err
    with pytest.raises(TopicError) as caught:
        metrics.evaluate(read_qrels(q), read_run(r, check_duplicates=False), ["P.2"])
    assert caught.value.qid == "2"
    assert list(caught.value.evaluated.per_topic) == ["1"]


DUP_JUDGED = "1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n2 0 d1 0\n3 0 d3 1\n"
RUN_123 = "1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n2 Q0 d1 1 2 r\n3 Q0 d3 1 1 r\n"
RUN_13 = "1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n3 Q0 d3 1 1 r\n"


@pytest.mark.parametrize(
    ("compat", "run", "flags", "status", "printed"),
    [
        # trec_eval prints the topics before the one judged twice, then stops (exit 4)
        ("10", RUN_123, [], 4, [("1", "0.2000")]),
        ("9", RUN_123, [], 4, [("1", "0.2000")]),
        # -c: trec_eval 10 evaluates the missing topic 2 (and stops); 9.0.8 never evaluates it
        ("10", RUN_13, ["-c"], 4, [("1", "0.2000")]),
        ("9", RUN_13, ["-c"], 0, [("1", "0.2000"), ("3", "0.2000"), ("all", "0.1333")]),
        # a topic judged twice that is not evaluated is no error
        ("9", RUN_13, [], 0, [("1", "0.2000"), ("3", "0.2000"), ("all", "0.2000")]),
    ],
)
def test_docno_judged_twice_stops_where_trec_eval_evaluates_it(
    tmp_path: Path, compat: str, run: str, flags: list[str], status: int, printed: list
) -> None:
    """trec_eval's form_res_rels: "duplicate docs" when it evaluates the topic, exit 4 (the
    outputs of both binaries); imports still refuse such a file with the line named."""
    q, r = _files(tmp_path, DUP_JUDGED, run)
    result = _trec_eval("--compat", compat, *flags, "-q", "-m", "P.5", q, r)
    assert result[:2] == (status, "".join(_line("P_5", qid, v) for qid, v in printed))
    if status == 4:
        assert "topic '2': docno 'd1' is judged twice in the qrels" in result[2]
    with pytest.raises(TrecFormatError) as refused:
        read_qrels(q)
    assert refused.value.line_number == 4


def test_first_topic_judged_only_negative_cannot_be_evaluated(tmp_path: Path) -> None:
    """trec_eval finds no grade buffer for it (exit 4); after a normal topic it evaluates."""
    q, r = _files(tmp_path, "1 0 a -1\n2 0 a 1\n", "1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    status, out, err = _trec_eval("-q", "-m", "num_q", "-m", "map", q, r)
    assert (status, out) == (4, "")
    assert "measure 'map'" in err
    q, r = _files(tmp_path, "1 0 a 1\n2 0 a -1\n", "1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    status, out, _ = _trec_eval("-m", "map", q, r)
    assert (status, out) == (0, _line("map", "all", "0.5000"))


def test_ideal_dcg_of_a_topic_judged_only_minus_one_is_left_over(tmp_path: Path) -> None:
    """trec_eval 10 keeps the previous topic's grade counts for it."""
    q, r = _files(tmp_path, "1 0 a 2\n1 0 b 1\n2 0 a -1\n", "1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    status, out, _ = _trec_eval("-q", "-m", "ideal_dcg", q, r)
    assert status == 0
    assert out == "".join(
        _line("ideal_dcg", qid, value)
        for qid, value in [("1", "2.6309"), ("2", "2.6309"), ("all", "2.6309")]
    )


def test_gain_levels_sorted_with_trec_evals_truncating_comparator(tmp_path: Path) -> None:
    """(int)(g1 - g2) calls gains less than 1 apart equal: level 2 (gain 0.5) stays below
    level 0 (gain 0), so the ideal ranking stops before it."""
    gains = [(2, 0.5), (0, 0.0), (1, 1.0)]
    ordered = glibc_merge_sort(gains, lambda a, b: int(a[1] - b[1]))
    assert ordered == [(2, 0.5), (0, 0.0), (1, 1.0)]
    q, r = _files(
        tmp_path,
        "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 2\n",
        "1 Q0 a 1 4 r\n1 Q0 c 2 3 r\n1 Q0 b 3 2 r\n",
    )
    status, out, _ = _trec_eval("-m", "ndcg.2=0.5", q, r)
    assert (status, out) == (0, _line("ndcg_2=0.5", "all", "1.0000"))


def test_first_parameters_given_win(tmp_path: Path) -> None:
    q, r = _files(tmp_path, "1 0 a 1\n1 0 b 2\n", "1 Q0 b 1 2 r\n1 Q0 a 2 1 r\n1 Q0 c 3 0 r\n")
    status, out, _ = _trec_eval("-m", "P.1", "-m", "P", "-m", "P.3", q, r)
    assert (status, out) == (0, _line("P_1", "all", "1.0000"))


def test_shared_gain_parameters_are_refused(tmp_path: Path) -> None:
    """trec_eval 10 frees dcg/ideal_dcg/ndcg's one parameter block twice and crashes."""
    q, r = _files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 r\n")
    status, out, err = _trec_eval("-m", "ndcg.1=2", "-m", "dcg", q, r)
    assert (status, out) == (1, "")
    assert "share one set of gain parameters" in err


def test_duplicate_documents_are_reported_before_the_shared_gains(tmp_path: Path) -> None:
    """trec_eval 10 meets the duplicate first (exit 4) and never reaches its crash at exit."""
    q, r = _files(tmp_path, "1 0 d1 1\n", "1 Q0 d1 1 2 r\n1 Q0 d1 2 1 r\n")
    status, out, err = _trec_eval("-m", "ideal_dcg", "-m", "ndcg.0=1,1=2", q, r)
    assert (status, out) == (4, "")
    assert "duplicate" in err and "share one set" not in err


def test_shared_gains_before_an_error_follow_trec_evals_one_gain_table(tmp_path: Path) -> None:
    """Before the duplicate in topic 2 stops it, trec_eval 10 prints topic 1 computed with the
    gains written last (ndcg's) for all three, each named after the gains set before it
    (expected lines from the trec_eval 10.0 binary)."""
    q, r = _files(
        tmp_path,
        "1 0 a 1\n1 0 b 2\n2 0 c 1\n",
        "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 c 1 2 r\n2 Q0 c 2 1 r\n",
    )
    status, out, _ = _trec_eval("-q", "-m", "dcg.1=7", "-m", "ideal_dcg", "-m", "ndcg.2=5", q, r)
    assert status == 4
    assert out == (
        _line("dcg_1=7", "1", "4.1546")
        + _line("ideal_dcg_1=7", "1", "5.6309")
        + _line("ndcg_2=5", "1", "0.7378")
    )


def test_rndcg_is_nan_when_the_ideal_gain_never_changes(tmp_path: Path) -> None:
    """-l 0 and only grade-0 judgements: R > 0 but no positive ideal gain, 0/0 in trec_eval."""
    q, r = _files(tmp_path, "1 0 a 0\n1 0 b 0\n", "1 Q0 a 1 1 r\n")
    status, out, _ = _trec_eval("-l", "0", "-q", "-m", "Rndcg", q, r)
    assert (status, out) == (0, _line("Rndcg", "1", "  -nan") + _line("Rndcg", "all", "  -nan"))


@pytest.mark.parametrize(
    ("compat", "utility"), [("9", "-1.5000"), ("10", "-5.0000")], ids=["9.0.8", "10.0"]
)
def test_c_topic_the_run_lacks(tmp_path: Path, compat: str, utility: str) -> None:
    """9.0.8 adds 0 for it; 10.0 scores a one-document ranking (utility counts that document)."""
    q, r = _files(
        tmp_path, "1 0 a 1\n1 0 b 0\n2 0 a 1\n2 0 c 1\n", "1 Q0 a 1 1 r\n1 Q0 x 2 0.5 r\n"
    )
    flags = ["-c", "-m", "utility.1,-2,-1,1", "-m", "iprec_at_recall..0", "-m", "num_ret"]
    status, out, _ = _trec_eval("--compat", compat, *flags, q, r)
    assert status == 0
    assert out == (
        _line("num_ret", "all", "2")
        + _line("iprec_at_recall_0.00", "all", "0.5000")
        + _line("utility_1,-2,-1,1", "all", utility)
    )


def test_11pt_avg_adds_the_cutoffs_from_the_highest_down(tmp_path: Path) -> None:
    """m_11pt_avg.c sums the 11 interpolated precisions from cutoff 1.0 down to 0.0; adding them
    upwards changed the last printed digit in 2 of 20,000 random cases (harness seed 102387:
    both binaries print 0.2812, the upward sum 0.2813)."""
    from tests.metrics.trec_eval_cases import make_case

    case = make_case(102387)
    case.write(tmp_path)
    args = [str(tmp_path / a) if a in case.files else a for a in case.args]
    status, out, _ = _trec_eval(*args)
    assert status == 0
    assert _line("11pt_avg", "all", "0.2812") in out
