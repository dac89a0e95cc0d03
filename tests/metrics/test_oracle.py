"""Every command of trec_eval's own test suite, diffed against its expected output.

The commands and expected files are ../shared/oracle/trec_eval_test (README there); tests
skip where it is absent.  ``rbp`` lines are compared by name and position only: trec_eval's
expected values come from uninitialised memory in m_rbp.c.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from workbench.trec_eval_command import run_trec_eval

MEAS_PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"
)

V10 = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.prefs", "-m all_prefs -q -R prefs prefs.test prefs.results.test"),
    ("out.test.prefs", "-m all_prefs -q -R prefs prefs.comment.test prefs.results.test"),
    ("out.test.qrels_prefs", "-m all_prefs -q -R qrels_prefs qrels.test results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.123 results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test"),
    ("out.test.meas_params", MEAS_PARAMS),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
]

V9 = [
    ("v9.0.8/out.test", "qrels.test results.test"),
    ("v9.0.8/out.test.a", "-m all_trec qrels.test results.test"),
    ("v9.0.8/out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("v9.0.8/out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("v9.0.8/out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("v9.0.8/out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("v9.0.8/out.test.meas_params", MEAS_PARAMS),
    ("v9.0.8/out.test.aqZ", "-q -m all_trec -Z v9.0.8/zscores_file qrels.test results.test"),
]


def _run(oracle_dir: Path, args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(oracle_dir)
    try:
        status = run_trec_eval(args.split(), out, err)
    finally:
        os.chdir(cwd)
    return status, out.getvalue(), err.getvalue()


def _comparable(text: str) -> list[str]:
    """Lines, with the value of rbp lines blanked (their expected values are accidental)."""
    lines = []
    for line in text.splitlines():
        if line.startswith(("rbp ", "Zrbp ")):
            line = line.rsplit("\t", 1)[0]
        lines.append(line)
    return lines


@pytest.mark.parametrize(("expected", "args"), V10, ids=[f"{e}:{a}" for e, a in V10])
def test_trec_eval_10(oracle_dir: Path, expected: str, args: str) -> None:
    status, out, err = _run(oracle_dir, args)
    assert status == 0, err
    assert _comparable(out) == _comparable((oracle_dir / expected).read_text())


@pytest.mark.parametrize(("expected", "args"), V9, ids=[f"{e}:{a}" for e, a in V9])
def test_trec_eval_9(oracle_dir: Path, expected: str, args: str) -> None:
    status, out, err = _run(oracle_dir, "--compat 9 " + args)
    assert status == 0, err
    assert out == (oracle_dir / expected).read_text()


def test_rbp_is_moffat_zobel(oracle_dir: Path) -> None:
    """rbp = (1 - p) sum_i rel_i p^(i-1) with p = 0.9 over binary gains, recomputed here."""
    from workbench.metrics import evaluate, trec_order
    from workbench.trec import read_qrels, read_run

    qrels = read_qrels(oracle_dir / "qrels.test")
    run = read_run(oracle_dir / "results.test")
    result = evaluate(qrels, run, ["rbp"])
    for qid in run.topics():
        lines = run.topic_lines(qid)
        judged = qrels.topic(qid)
        ranked = [lines.docnos[i] for i in trec_order(lines.docnos, lines.scores)]
        expected = 0.1 * sum(0.9**i for i, d in enumerate(ranked) if judged.get(d, 0) >= 1)
        assert result.per_topic[qid]["rbp"] == pytest.approx(expected, abs=1e-12)


def test_missing_topic_warns_instead_of_failing(oracle_dir: Path) -> None:
    """trec_eval 10 exits 4 on a qrels topic absent from the run; we skip it and warn."""
    status, out, err = _run(oracle_dir, "qrels.test results.trunc")
    assert status == 0
    assert "'302'" in err and "warning" in err
    assert "num_q                 \tall\t2\n" in out


def test_several_runs_one_block_each(oracle_dir: Path) -> None:
    status, out, _ = _run(oracle_dir, "qrels.test results.test results.test")
    expected = (oracle_dir / "out.test").read_text()
    assert status == 0
    assert out == expected + expected
