"""Property tests: workbench.metrics.evaluate(compat=9) agrees with pytrec_eval-terrier.

pytrec_eval-terrier embeds trec_eval 9.0.8, so on any qrels and run it is an oracle for our
``compat=9`` mode: scores ranked as 32-bit floats, ties broken by docno descending, iprec
cutoffs with +0.9, topics judged but not retrieved skipped, no ``-c``. The generated data
is small and hostile: ties and near-ties in scores, graded and negative grades, retrieved
documents that were never judged, topics in only one of the two inputs, and empty topics.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.property_examples import examples
from workbench import metrics
from workbench.trec import read_qrels, read_run

pytestmark = pytest.mark.slow  # imports pytrec_eval and evaluates large random runs

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

# trec_eval parameter syntax, understood identically by both sides.
MEASURES = [
    "map",
    "P.1,2,5,10",
    "recall.1,5,10",
    "ndcg",
    "ndcg_cut.1,3,10",
    "recip_rank",
    "bpref",
    "Rprec",
    "iprec_at_recall",
    "11pt_avg",
    "infAP",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "num_nonrel_judged_ret",
    "success.1,5",
    "map_cut.2,10",
    "relative_P.2,10",
    "Rprec_mult.0.5,1.5",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "utility",
    "set_F",
    "set_P",
    "set_recall",
    "set_map",
    "set_relative_P",
    "gm_map",
    "gm_bpref",
]
# Values that are counts: compared exactly.
COUNTS = {"num_rel", "num_rel_ret", "num_ret", "num_nonrel_judged_ret"}
# trec_eval prints these in the summary only (gm_*) or as a placeholder per topic.
NOT_PER_TOPIC = {"gm_map", "gm_bpref", "runid", "num_q", "relstring"}
# Summary-only geometric means and the per-topic measure each is the geometric mean of.
# pytrec_eval 0.5.11 corrupts memory (SIGSEGV, hangs) evaluating gm_map and gm_bpref on
# topics with nothing relevant, so their oracle is trec_eval's definition applied to
# pytrec_eval's per-topic values: exp(mean(log(max(x, 1e-5)))).
GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}
GM_EPSILON = 1e-5
TOLERANCE = 1e-9

QIDS = ["1", "2", "10", "q7"]
# Mixed case and digit lengths, so that strcmp order differs from numeric or natural order.
DOCNOS = ["d0", "d1", "d2", "d3", "d10", "d9", "D5", "a", "b", "FT9-1", "FT10-1", "zz"]
# Scores with exact ties, and doubles that collide only as 32-bit floats.
SCORES = [0.0, 1.0, 1.00000001, 1.00000002, 1.00000003, 1.0000001, 2.5, -0.5, -3.0, 7.0]

grades = st.integers(min_value=-2, max_value=3)
scores = st.one_of(
    st.sampled_from(SCORES),
    st.floats(min_value=-20.0, max_value=20.0, allow_nan=False, allow_infinity=False),
)
# A judged topic has at least one grade >= 0 besides its negative (pooled, unjudged) ones:
# on a topic whose every grade is negative, pytrec_eval 0.5.11's bpref with num_ret reads
# out of bounds (it hangs or crashes), so there is no oracle for it. Empty topics stay.
qrels_topic = st.dictionaries(st.sampled_from(DOCNOS), grades, max_size=9).filter(
    lambda topic: not topic or max(topic.values()) >= 0
)
qrels_strategy = st.dictionaries(st.sampled_from(QIDS), qrels_topic, max_size=4)
# Run topics hold at least one document, as in any TREC file: pytrec_eval 0.5.11 reads freed
# memory on an empty run topic (it hangs, crashes or returns NaN), so empty run topics are
# tested on their own below. Empty qrels topics are fine on both sides.
run_strategy = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCNOS), scores, min_size=1, max_size=11),
    max_size=4,
)


def pytrec_per_topic(qrels: Qrels, run: Run, relevance_level: int) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-topic values of MEASURES (gm_* left out: see GEOMETRIC)."""
    measures = set(MEASURES) - set(GEOMETRIC)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=relevance_level)
    return evaluator.evaluate(run)


def assert_close(ours: float, theirs: float, where: str) -> None:
    assert math.isclose(float(ours), theirs, rel_tol=0.0, abs_tol=TOLERANCE), (
        f"{where}: workbench {ours!r} != pytrec_eval {theirs!r}"
    )


def check_against_pytrec(
    qrels: Qrels, run: Run, relevance_level: int, ours_from: tuple[object, object] | None = None
) -> None:
    """Our evaluation of ``ours_from`` (default: the same dicts) against pytrec_eval's."""
    expected = pytrec_per_topic(qrels, run, relevance_level)
    our_qrels, our_run = ours_from or (qrels, run)
    ours = metrics.evaluate(
        our_qrels, our_run, measures=MEASURES, relevance_level=relevance_level, compat=9
    )

    assert set(ours.per_topic) == set(expected), "evaluated topics differ"
    for qid, values in expected.items():
        for name, theirs in values.items():
            if name in NOT_PER_TOPIC:
                continue
            where = f"topic {qid!r} {name}"
            assert name in ours.per_topic[qid], f"{where} missing"
            if name in COUNTS:
                assert ours.per_topic[qid][name] == theirs, where
            else:
                assert_close(ours.per_topic[qid][name], theirs, where)

    if not expected:
        return
    names = {name for values in expected.values() for name in values} - {"runid", "relstring"}
    for name in names:
        column = [values[name] for values in expected.values()]
        if name in COUNTS:
            assert ours.summary[name] == sum(column), f"summary {name}"
        elif name == "num_q":
            assert ours.summary[name] == len(column), "summary num_q"
        else:
            assert_close(ours.summary[name], sum(column) / len(column), f"summary {name}")
    for name, base in GEOMETRIC.items():
        logs = [math.log(max(values[base], GM_EPSILON)) for values in expected.values()]
        assert_close(ours.summary[name], math.exp(sum(logs) / len(logs)), f"summary {name}")


FLOAT32_TIES: tuple[Qrels, Run] = (
    {"1": {"d1": 1, "d2": 0, "d3": 1}},
    {"1": {"d1": 1.00000003, "d2": 1.00000002, "d3": 1.00000001}},
)
ONE_SIDED_TOPICS: tuple[Qrels, Run] = (
    {"1": {"a": 2, "b": -1, "zz": 0}, "2": {"d0": 1}, "10": {}},
    {"1": {"a": 0.5, "b": 0.5, "d9": 0.5, "zz": 3.0}, "q7": {"a": 1.0}, "10": {"d1": 1.0}},
)
NOTHING_RELEVANT: tuple[Qrels, Run] = (
    {"1": {"a": 0, "b": -2}, "2": {"d1": -1, "d2": 0}},
    {"1": {"a": 1.0, "b": 2.0, "d3": 2.0}, "2": {"d1": 1.0, "d2": 1.0}},
)


@pytest.mark.parametrize("relevance_level", [1, 2])
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_strategy, run=run_strategy)
@example(qrels=FLOAT32_TIES[0], run=FLOAT32_TIES[1])
@example(qrels=ONE_SIDED_TOPICS[0], run=ONE_SIDED_TOPICS[1])
@example(qrels=NOTHING_RELEVANT[0], run=NOTHING_RELEVANT[1])
def test_per_topic_and_summary_match_pytrec_eval(qrels: Qrels, run: Run, relevance_level: int):
    check_against_pytrec(qrels, run, relevance_level)


@settings(max_examples=examples(150), deadline=None)
@given(
    qrels=qrels_strategy,
    run=run_strategy,
    empty=st.sets(st.sampled_from(QIDS), min_size=1),
    relevance_level=st.sampled_from([1, 2]),
)
def test_empty_run_topics_retrieve_nothing_and_change_nothing_else(
    qrels: Qrels, run: Run, empty: set[str], relevance_level: int
):
    """A run topic given as an empty dict is a topic with nothing retrieved.

    The other topics keep their values; an empty topic with judgements is evaluated with
    num_ret 0, its num_rel, and 0 for every other per-topic measure, except where trec_eval
    divides 0 by 0: interpolated precision at a cutoff of 0 relevant documents (recall 0.00
    always) is NaN, as trec_eval's ``-nan`` for a topic that ``-J`` leaves empty.
    """
    run = {qid: docs for qid, docs in run.items() if qid not in empty}
    padded = {**run, **{qid: {} for qid in empty}}
    plain = metrics.evaluate(
        qrels, run, measures=MEASURES, relevance_level=relevance_level, compat=9
    )
    ours = metrics.evaluate(
        qrels, padded, measures=MEASURES, relevance_level=relevance_level, compat=9
    )
    for qid, values in plain.per_topic.items():
        assert ours.per_topic[qid] == values
    for qid in set(ours.per_topic) - set(plain.per_topic):
        assert qid in empty and qrels.get(qid), f"topic {qid!r} evaluated from nothing"
        values = ours.per_topic[qid]
        num_rel = sum(grade >= relevance_level for grade in qrels[qid].values())
        assert values["num_rel"] == num_rel
        others = {k: v for k, v in values.items() if k != "num_rel" and k not in NOT_PER_TOPIC}
        undefined = {k for k, v in others.items() if v != v}
        if "iprec_at_recall_0.00" in others:
            assert "iprec_at_recall_0.00" in undefined
        assert all(k.startswith(("iprec_at_recall", "11pt_avg")) for k in undefined), undefined
        assert others and all(v == 0 for k, v in others.items() if k not in undefined), others


@settings(max_examples=examples(100), deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, relevance_level=st.sampled_from([1, 2]))
def test_files_read_by_workbench_match_pytrec_eval_on_the_same_bytes(
    qrels: Qrels, run: Run, relevance_level: int
):
    """TREC files, parsed by our readers and by pytrec_eval's, evaluate alike.

    The rank column is written in file order, not score order (trec_eval ignores it), and
    scores with ``repr`` so that both sides read the same doubles.
    """
    qrels_text = "".join(
        f"{qid} 0 {docno} {grade}\n" for qid, docs in qrels.items() for docno, grade in docs.items()
    )
    run_text = "".join(
        f"{qid} Q0 {docno} {rank} {score!r} tag\n"
        for qid, docs in run.items()
        for rank, (docno, score) in enumerate(docs.items(), 1)
    )
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = Path(tmp) / "qrels", Path(tmp) / "run"
        qrels_path.write_text(qrels_text)
        run_path.write_text(run_text)
        with qrels_path.open() as f:
            parsed_qrels = pytrec_eval.parse_qrel(f)
        with run_path.open() as f:
            parsed_run = pytrec_eval.parse_run(f)
        ours_from = (read_qrels(qrels_path), read_run(run_path))
    check_against_pytrec(parsed_qrels, parsed_run, relevance_level, ours_from)
