"""Pooling strategies on a worked example computed by hand, and against trectools' depth-k pool.

The worked example (one topic, scores decreasing with rank, no ties):
    A: a1 a2 a3 d1 d2      scores 10 8 6 4 2
    B: d1 b2 a1 b4         scores  5 4 3 1
    C: c1 d1 c3            scores  3 2 1
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property_examples import examples
from workbench import pool_contributions, pooling
from workbench.pooling import RankedList

# trectools 0.0.50 sorts with pandas' deprecated inplace keyword
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")

RUNS = {
    "A": (["a1", "a2", "a3", "d1", "d2"], [10.0, 8.0, 6.0, 4.0, 2.0]),
    "B": (["d1", "b2", "a1", "b4"], [5.0, 4.0, 3.0, 1.0]),
    "C": (["c1", "d1", "c3"], [3.0, 2.0, 1.0]),
}


@pytest.fixture
def rankings() -> dict[str, RankedList]:
    return {tag: pooling.ranked_list(d, np.array(s)) for tag, (d, s) in RUNS.items()}


def docnos(pooled: list[pooling.PooledDocument]) -> list[str]:
    return [p.docno for p in pooled]


def test_ranked_list_orders_by_score_then_docno_descending():
    ranked = pooling.ranked_list(["x", "b", "c", "a"], np.array([1.0, 2.0, 2.0, 2.0]))
    assert list(ranked.docnos) == ["c", "b", "a", "x"]
    assert ranked.scores.tolist() == [2.0, 2.0, 2.0, 1.0]
    assert list(
        pooling.ranked_list(["x", "b", "c"], np.array([1.0, 2.0, 2.0]), limit=2).docnos
    ) == [
        "c",
        "b",
    ]


def test_depth_pool_by_hand(rankings):
    pooled = pooling.depth_pool(rankings, 2)
    # top 2: A {a1, a2}, B {d1, b2}, C {c1, d1}
    assert docnos(pooled) == ["a1", "c1", "d1", "a2", "b2"]
    by_docno = {p.docno: p for p in pooled}
    assert by_docno["d1"].n_runs == 2 and by_docno["d1"].best_rank == 1
    # NTCIR priority: runs + 1 / (1 + sum of ranks): d1 = 2 + 1/(1 + 1 + 2)
    assert by_docno["d1"].priority == pytest.approx(2.25)
    assert by_docno["a2"].priority == pytest.approx(1 + 1 / 3)
    assert all(p.sampled and p.inclusion_prob == 1.0 for p in pooled)


def test_take_at_n_round_robin_by_hand(rankings):
    # depth 1: a1 (A), d1 (B), c1 (C); depth 2: a2 (A), b2 (B), [d1 (C) already]; depth 3: a3
    assert docnos(pooling.take_pool(rankings, 4)) == ["a1", "d1", "c1", "a2"]
    assert docnos(pooling.take_pool(rankings, 6)) == ["a1", "d1", "c1", "a2", "b2", "a3"]
    assert docnos(pooling.take_pool(rankings, 4, run_order=["C", "B", "A"])) == [
        "c1",
        "d1",
        "a1",
        "b2",
    ]
    # more budget than documents: every retrieved document once
    assert sorted(docnos(pooling.take_pool(rankings, 100))) == sorted(
        {d for ds, _ in RUNS.values() for d in ds}
    )


def test_fair_take_is_seeded_and_takes_each_depth_before_the_next(rankings):
    first = pooling.take_pool(rankings, 5, fair=True, rng=np.random.default_rng(7))
    again = pooling.take_pool(rankings, 5, fair=True, rng=np.random.default_rng(7))
    assert docnos(first) == docnos(again)
    # whatever the order, depth 1 (a1, d1, c1) is taken before depth 2 (a2, b2)
    assert set(docnos(first)[:3]) == {"a1", "d1", "c1"}
    assert set(docnos(first)[3:]) == {"a2", "b2"}


def test_rrf_take_by_hand(rankings):
    scores = pooling.fusion_scores(rankings, "rrf")
    assert scores["d1"] == pytest.approx(1 / 64 + 1 / 61 + 1 / 62)
    assert scores["a1"] == pytest.approx(1 / 61 + 1 / 63)
    # a2 and b2 tie at 1/62: docno descending puts b2 first
    assert docnos(pooling.fusion_pool(rankings, 5, method="rrf")) == ["d1", "a1", "c1", "b2", "a2"]


def test_combsum_take_by_hand(rankings):
    # min-max per run: A 1 .75 .5 .25 0; B 1 .75 .5 0; C 1 .5 0
    scores = pooling.fusion_scores(rankings, "combsum")
    assert scores["d1"] == pytest.approx(0.25 + 1 + 0.5)
    assert scores["a1"] == pytest.approx(1 + 0.5)
    assert scores["c3"] == 0.0
    assert docnos(pooling.fusion_pool(rankings, 4, method="combsum")) == ["d1", "a1", "c1", "b2"]


def test_borda_take_by_hand(rankings):
    # 9 candidates; A (5 docs) gives 9..5 and 2.5 to each other; B (4) 9..6 and 3; C (3) 9..7, 3.5
    scores = pooling.fusion_scores(rankings, "borda")
    assert scores["d1"] == 6 + 9 + 8
    assert scores["a1"] == 9 + 7 + 3.5
    assert scores["a2"] == scores["c1"] == 14.5
    assert scores["b2"] == 14
    assert docnos(pooling.fusion_pool(rankings, 5, method="borda")) == [
        "d1",
        "a1",
        "c1",
        "a2",
        "b2",
    ]


def test_stratified_sample_by_hand(rankings):
    strata = [(1, 1.0), (2, 0.5), (5, 0.34)]
    pooled = pooling.stratified_pool(rankings, strata, np.random.default_rng(11))
    by_stratum: dict[int, list[pooling.PooledDocument]] = {}
    for p in pooled:
        by_stratum.setdefault(p.stratum, []).append(p)
    # best ranks: a1 c1 d1 -> 1; a2 b2 -> 2; a3 c3 -> 3, b4 -> 4, d2 -> 5
    assert sorted(docnos(by_stratum[1])) == ["a1", "c1", "d1"]
    assert sorted(docnos(by_stratum[2])) == ["a2", "b2"]
    assert sorted(docnos(by_stratum[3])) == ["a3", "b4", "c3", "d2"]
    # ceil(1.0 * 3) = 3, ceil(0.5 * 2) = 1, ceil(0.34 * 4) = 2 sampled
    assert [sum(p.sampled for p in by_stratum[s]) for s in (1, 2, 3)] == [3, 1, 2]
    assert [by_stratum[s][0].inclusion_prob for s in (1, 2, 3)] == [1.0, 0.5, 0.5]


def test_stratified_sample_depends_on_the_seed_alone(rankings):
    strata = [(1, 1.0), (2, 0.5), (5, 0.34)]

    def sample(seed: int) -> list[str]:
        pooled = pooling.stratified_pool(rankings, strata, pooling.topic_rng(seed, "q1"))
        return sorted(p.docno for p in pooled if p.sampled)

    assert sample(5) == sample(5)
    assert len({tuple(sample(seed)) for seed in range(20)}) > 1


def test_stratified_excludes_already_pooled_documents(rankings):
    pooled = pooling.stratified_pool(
        rankings, [(2, 1.0), (5, 1.0)], np.random.default_rng(0), exclude={"d1", "a3"}
    )
    assert sorted(docnos(pooled)) == ["a1", "a2", "b2", "b4", "c1", "c3", "d2"]


def test_parse_strata_and_its_errors():
    assert pooling.parse_strata("10:1.0, 30:0.2,100:0.05") == [(10, 1.0), (30, 0.2), (100, 0.05)]
    with pytest.raises(ValueError, match="BOUND:RATE"):
        pooling.parse_strata("10-1.0")
    with pytest.raises(ValueError, match="increasing"):
        pooling.parse_strata("30:1.0,10:0.5")
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        pooling.parse_strata("10:1.5")


def test_pool_topic_dispatches_and_excludes(rankings):
    rng = np.random.default_rng(0)
    assert docnos(pooling.pool_topic(rankings, strategy="depth", params={"depth": 2}, rng=rng)) == [
        "a1",
        "c1",
        "d1",
        "a2",
        "b2",
    ]
    extended = pooling.pool_topic(
        rankings, strategy="depth", params={"depth": 2}, rng=rng, exclude={"a1", "d1"}
    )
    assert docnos(extended) == ["c1", "a2", "b2"]
    with pytest.raises(ValueError, match="unknown pooling strategy"):
        pooling.pool_topic(rankings, strategy="mtf", params={}, rng=rng)


def test_contributions_by_hand(rankings):
    pooled = {"a1", "c1", "d1", "a2", "b2"}
    contributed = {
        tag: pool_contributions.contributed(r.top(2), pooled) for tag, r in rankings.items()
    }
    assert contributed == {"A": {"a1", "a2"}, "B": {"d1", "b2"}, "C": {"c1", "d1"}}
    topic = pool_contributions.topic_contributions(
        rankings, ["a1", "c1", "d1", "a2", "b2"], 2, ["C", "A", "B", "Z"]
    )
    # rows C, A, B, Z (Z retrieved nothing): B and C share d1
    assert topic.shared.tolist() == [[2, 0, 1, 0], [0, 2, 0, 0], [1, 0, 2, 0], [0, 0, 0, 0]]
    assert topic.unique.tolist() == [1, 2, 1, 0]
    # depth-1 pool {a1, d1, c1}; depth 2 adds a2, b2
    assert topic.growth.tolist() == [3, 5]
    # a pool that holds only some of the documents: a2 is out, so A contributed a1 alone
    partial = pool_contributions.topic_contributions(rankings, ["a1", "d1"], 2, ["A", "B", "C"])
    assert partial.shared.diagonal().tolist() == [1, 1, 1]
    assert partial.unique.tolist() == [1, 0, 0]
    assert partial.growth.tolist() == [3, 5]  # growth is of the runs' depth-d pools
    deeper = pool_contributions.topic_contributions(rankings, [], 4, ["A", "B", "C"])
    assert deeper.growth.tolist() == [3, 5, 7, 8]
    assert deeper.shared.sum() == 0


@settings(max_examples=examples(200), deadline=None)
@given(
    tops=st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "d", "e", "é", "B", "x y"]), unique=True),
        max_size=5,
    ),
    pooled=st.sets(st.sampled_from(["a", "b", "c", "d", "e", "é", "B", "x y"])),
    depth=st.integers(1, 9),
    absent=st.integers(0, 2),
)
def test_contributions_equal_set_arithmetic(tops, pooled, depth, absent):
    """shared[i][j] = |top_i & top_j & pool|, unique[i] = |top_i & pool - the other tops|,
    growth[d - 1] = |union of the depth-d tops|, counted with Python sets."""
    rankings = {
        f"r{i}": pooling.ranked_list(docs, np.arange(len(docs), 0, -1.0))
        for i, docs in enumerate(tops)
    }
    tags = [*reversed(rankings), *(f"z{i}" for i in range(absent))]  # z: retrieved nothing
    topic = pool_contributions.topic_contributions(rankings, pooled, depth, tags)
    top = {tag: set(rankings[tag].top(depth)) if tag in rankings else set() for tag in tags}
    assert topic.shared.tolist() == [[len(top[a] & top[b] & pooled) for b in tags] for a in tags]
    others = {a: set().union(*(top[b] for b in tags if b != a)) for a in tags}
    assert topic.unique.tolist() == [len((top[a] & pooled) - others[a]) for a in tags]
    union = [set().union(*(set(r.top(d)) for r in rankings.values())) for d in range(1, depth + 1)]
    assert topic.growth.tolist() == [len(u) for u in union]


# ---------------------------------------------------------------- trectools cross-check


def write_run(path, tag: str, topics: dict[str, list[tuple[str, float]]]) -> None:
    with open(path, "w") as f:
        for qid, lines in topics.items():
            for rank, (docno, score) in enumerate(lines, start=1):
                f.write(f"{qid} Q0 {docno} {rank} {score!r} {tag}\n")


def trectools_depth_pool(paths, k: int) -> dict[str, set[str]]:
    from trectools import TrecPoolMaker, TrecRun

    runs = [TrecRun(str(path)) for path in paths]
    pool = TrecPoolMaker().make_pool(runs, strategy="topX", topX=k).pool
    return {str(qid): set(docs) for qid, docs in pool.items()}


def our_depth_pool(run_data: list[dict[str, list[tuple[str, float]]]], k: int):
    qids = sorted({q for run in run_data for q in run})
    pool = {}
    for qid in qids:
        rankings = {
            str(i): pooling.ranked_list(
                [d for d, _ in run[qid]], np.array([s for _, s in run[qid]])
            )
            for i, run in enumerate(run_data)
            if qid in run
        }
        pool[qid] = set(docnos(pooling.depth_pool(rankings, k)))
    return pool


@settings(max_examples=examples(10), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 30))
def test_depth_pool_matches_trectools_on_random_runs_without_ties(tmp_path_factory, seed, k):
    """Scores are distinct within a topic, so both tie conventions give the same pool."""
    rng = np.random.default_rng(seed)
    collection = [f"D{i:04d}" for i in range(300)]
    run_data, paths = [], []
    folder = tmp_path_factory.mktemp("runs")
    for r in range(int(rng.integers(2, 6))):
        topics = {}
        for qid in ("301", "302", "7"):
            n = int(rng.integers(1, 60))
            docs = rng.choice(collection, size=n, replace=False).tolist()
            scores = rng.permutation(n).astype(float) + rng.random()
            shuffled = rng.permutation(n)  # file order unrelated to rank
            topics[qid] = [(docs[i], float(scores[i])) for i in shuffled]
        run_data.append(topics)
        paths.append(folder / f"run{r}")
        write_run(paths[-1], f"r{r}", topics)
    assert our_depth_pool(run_data, k) == trectools_depth_pool(paths, k)


def test_depth_pool_tie_convention_is_trec_eval_not_trectools(tmp_path):
    """At the depth boundary, tied documents are taken by docno DESCENDING (trec_eval);
    trectools takes them by docno ascending, so the two pools differ exactly there."""
    tied = {"1": [("d1", 1.0), ("d2", 1.0), ("d3", 1.0), ("d4", 1.0), ("top", 2.0)]}
    write_run(tmp_path / "tied", "t", tied)
    assert our_depth_pool([tied], 3) == {"1": {"top", "d4", "d3"}}
    assert trectools_depth_pool([tmp_path / "tied"], 3) == {"1": {"top", "d1", "d2"}}


@settings(max_examples=examples(40), deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), min_size=0, max_size=40),
    k=st.integers(1, 45),
)
def test_a_limited_ranked_list_is_the_head_of_the_full_one(scores, k):
    """Ordering only the lines scoring at least the k-th highest score loses nothing (ties too)."""
    docnos = [f"d{i:02d}" for i in range(len(scores))][::-1]
    full = pooling.ranked_list(docnos, np.array(scores))
    head = pooling.ranked_list(docnos, np.array(scores), limit=k)
    assert list(head.docnos) == list(full.docnos[:k])
    assert head.scores.tolist() == full.scores[:k].tolist()
    as_bytes = pooling.ranked_list([d.encode() for d in docnos], np.array(scores), limit=k)
    assert list(as_bytes.docnos) == list(head.docnos)


def test_unique_by_unit_leaves_out_what_another_unit_also_contributed():
    contributed = {"a1": {"d1", "d2"}, "a2": {"d3"}, "b1": {"d2", "d4"}}
    by_group = {"a1": "A", "a2": "A", "b1": "B"}
    assert pool_contributions.unique_by_unit(contributed, by_group) == {
        "A": {"d1", "d3"},
        "B": {"d4"},
    }
    by_run = {tag: tag for tag in contributed}
    assert pool_contributions.unique_by_unit(contributed, by_run) == {
        "a1": {"d1"},
        "a2": {"d3"},
        "b1": {"d4"},
    }
    assert pool_contributions.unique_by_unit({"a1": {"d1"}, "b1": {"d1"}}, by_run) == {}
    assert pool_contributions.unique_by_unit({}, {}) == {}


@settings(max_examples=examples(100), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([f"r{i}" for i in range(6)]),
        st.sets(st.sampled_from([f"d{i}" for i in range(8)])),
    ),
    st.integers(1, 6),
)
def test_unique_by_unit_is_each_units_documents_minus_the_others(contributed, n_groups):
    units = {tag: f"g{int(tag[1:]) % n_groups}" for tag in contributed}
    expected = {}
    for unit in set(units.values()):
        mine = set().union(*(d for t, d in contributed.items() if units[t] == unit))
        theirs = set().union(*(d for t, d in contributed.items() if units[t] != unit))
        if mine - theirs:
            expected[unit] = mine - theirs
    assert pool_contributions.unique_by_unit(contributed, units) == expected


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0, -1.0]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=45),
    st.booleans(),
)
def test_the_head_lines_needed_give_the_same_ranked_list(scores, limit, with_nan):
    """ranked_list of the first lines_needed lines is ranked_list of them all, ties at the
    limit-th score included (they are kept whole, then ordered by docno); a NaN asks for all."""
    values = np.array(scores)
    if with_nan:
        values[len(values) // 2] = np.nan
    docnos = [f"d{(i * 7) % 11}-{i}" for i in range(len(values))]
    needed = pooling.lines_needed(values, limit)
    whole = pooling.ranked_list(docnos, values, limit=limit)
    head = pooling.ranked_list(docnos[:needed], values[:needed], limit=limit)
    assert list(head.docnos) == list(whole.docnos)
    assert head.scores.tolist() == pytest.approx(whole.scores.tolist(), nan_ok=True)
    if with_nan or limit >= len(values):
        assert needed == len(values)


def test_lines_needed_stops_after_the_last_line_that_can_be_kept():
    scores = np.array([9.0, 8.0, 7.0, 7.0, 1.0, 7.0, 0.5, 0.2])
    assert pooling.lines_needed(scores, 3) == 6  # the 7.0 tie on line 6 may be kept
    assert pooling.lines_needed(scores, 2) == 2
    assert pooling.lines_needed(scores, None) == 8
