"""Adaptive judging strategies against hand-computed small cases (workbench.adaptive)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from workbench import adaptive, pooling
from workbench.adaptive import TopicPool


def ranked(*docnos: str) -> pooling.RankedList:
    return pooling.RankedList(list(docnos), np.arange(len(docnos), 0, -1, dtype=float))


def judge_all(strategy: str, pool: TopicPool, relevant: set[str], budget: int, **kw) -> list[str]:
    """Judge `budget` documents one at a time, labels from `relevant`."""
    state = adaptive.start_state(strategy, pool, **kw)
    seen = []
    for _ in range(budget):
        chosen = state.take(1)
        if not chosen:
            break
        seen.append(chosen[0])
        state.observe(chosen[0], chosen[0] in relevant)
    return seen


TWO_RUNS = {"A": ranked("a1", "a2", "a3"), "B": ranked("b1", "b2", "b3")}


def test_pool_is_the_depth_pool_with_each_runs_list():
    pool = TopicPool.build({"B": ranked("b1", "a2", "b3"), "A": ranked("a1", "a2", "a3")}, 2)
    assert pool.docnos == ("a1", "b1", "a2")  # best rank, then docno; depth 2 cuts b3, a3
    assert pool.tags == ("A", "B")
    assert [lst.tolist() for lst in pool.lists] == [[0, 2], [1, 2]]


def test_baselines_follow_the_pooling_module():
    rankings = {"A": ranked("a1", "x", "a3"), "B": ranked("b1", "b2", "x")}
    pool = TopicPool.build(rankings, 3)
    order = adaptive.next_documents("depth", pool, [], 10)
    assert order == [p.docno for p in pooling.depth_pool(rankings, 3)]
    assert adaptive.next_documents("take", pool, [], 10) == ["a1", "b1", "x", "b2", "a3"]
    # rrf: x = 1/62 + 1/63 beats every single rank-1 document 1/61
    assert adaptive.next_documents("rrf", pool, [], 2) == ["x", "b1"]
    # a baseline skips what is judged and ignores labels
    assert adaptive.next_documents("take", pool, [("b1", True), ("zz", True)], 2) == ["a1", "x"]


def test_move_to_front_stays_on_relevant_and_moves_on_non_relevant():
    # A: a1 R -> stay; a2 N (A -1) -> B; b1 N (B -1) -> tie, A first; a3 N (A -2) -> B: b2 R, b3
    order = judge_all("mtf", TopicPool.build(TWO_RUNS, 3), {"a1", "b2", "b3"}, 6)
    assert order == ["a1", "a2", "b1", "a3", "b2", "b3"]


def test_max_mean_uses_the_beta_posterior_mean():
    # A 1/2 -> a1 R: 2/3; a2 N: 2/4 ties B 1/2 -> A first; a3 N: 2/5 > ... A exhausted -> B
    order = judge_all("mm", TopicPool.build(TWO_RUNS, 3), {"a1", "b2", "b3"}, 6)
    assert order == ["a1", "a2", "a3", "b1", "b2", "b3"]


def test_discounted_max_mean_discounts_the_top_of_the_prefix():
    # gamma = 0.9. A after a1 R: 2/3; after a2 N: x = 0.9, n = 1.9: 1.9/3.9 = 0.487 < B's 0.5
    # -> b1 N: B 1/3; A 0.487 -> a3 N: x = 0.81, n = 2.71: 1.81/4.71 = 0.384 > 1/3; A is then
    # exhausted -> b2, b3
    assert adaptive.DISCOUNT_GAMMA == 0.9
    order = judge_all("mm-discounted", TopicPool.build(TWO_RUNS, 3), {"a1", "b2", "b3"}, 6)
    assert order == ["a1", "a2", "b1", "a3", "b2", "b3"]
    state = adaptive.start_state("mm-discounted", TopicPool.build(TWO_RUNS, 3))
    for docno, rel in [("a1", True), ("a2", False)]:
        state.observe(docno, rel)
    assert state.x[0] == pytest.approx(0.9) and state.n[0] == pytest.approx(1.9)


def test_the_old_name_mm_ns_is_refused_with_the_new_one():
    with pytest.raises(adaptive.MethodError, match="now called 'mm-discounted'"):
        adaptive.get_method("mm-ns")
    assert "mm-ns" not in adaptive.METHODS and adaptive.DEFAULT_METHOD == "mm"


def test_cormacks_move_to_front_raises_a_run_with_a_relevant_document_to_the_front():
    """A = (q, p, u), B = (t, p, q), C = (p, q, u); only q relevant.
    Both: A first (all at 0): q R; A again: p N (A -1). p and q now make C's judged prefix.
    mtf: C has 1 miss (-1), B none (0) -> t N (B has 2 misses) -> A, C at -1, A first: u.
    mtf-cormack: C's prefix ends with the relevant q, which lifts C to the highest priority (0,
    B's) and to the front -> u (C's next); then B: t."""
    runs = {"A": ranked("q", "p", "u"), "B": ranked("t", "p", "q"), "C": ranked("p", "q", "u")}
    pool = TopicPool.build(runs, 3)
    assert judge_all("mtf", pool, {"q"}, 4) == ["q", "p", "t", "u"]
    assert judge_all("mtf-cormack", pool, {"q"}, 4) == ["q", "p", "u", "t"]
    # on the two-run case both rules agree: a run is pulled only when it is at the front
    order = judge_all("mtf-cormack", TopicPool.build(TWO_RUNS, 3), {"a1", "b2", "b3"}, 6)
    assert order == ["a1", "a2", "b1", "a3", "b2", "b3"]


def test_free_documents_are_read_when_picked_and_cost_nothing():
    # mm after a1 R: A 2/3 -> a2 is free (N): A 2/4 = B's 1/2, A first -> a3 handed out;
    # A is then exhausted -> b1
    pool = TopicPool.build(TWO_RUNS, 3)
    choices = adaptive.choose("mm", pool, [("a1", True)], 2, free={"a2": False, "b3": True})
    assert choices == adaptive.Choices(reveal=["a3", "b1"], free=["a2"], order=["a2", "a3", "b1"])
    # replaying the choices in order, free ones included, gives the same next documents
    again = adaptive.choose("mm", pool, [("a1", True), ("a2", False)], 2, free={"b3": True})
    assert again.reveal == ["a3", "b1"] and again.free == []


def test_a_document_judged_through_another_run_counts_for_every_run_that_has_it():
    pool = TopicPool.build({"A": ranked("d1", "d2"), "B": ranked("d2", "d3")}, 2)
    state = adaptive.start_state("mm", pool)
    state.observe("d1", False)
    assert state.n.tolist() == [1, 0]
    state.observe("d2", True)  # extends A's prefix to 2 and B's to 1
    assert state.prefix.tolist() == [2, 1]
    assert state.x.tolist() == [1, 1] and state.n.tolist() == [2, 1]


def test_hedge_weights_and_choices_by_hand():
    pool = TopicPool.build({"A": ranked("a1", "a2"), "B": ranked("b1", "b2")}, 2)
    gains = adaptive.hedge_gains(pool)  # D = 3: g(1) = ln 3, g(2) = ln 1.5, absent g(3) = 0
    columns = {d: i for i, d in enumerate(pool.docnos)}
    assert gains[0, columns["a1"]] == pytest.approx(math.log(3))
    assert gains[0, columns["a2"]] == pytest.approx(math.log(1.5))
    assert gains[0, columns["b1"]] == 0.0
    state = adaptive.start_state("hedge", pool)
    assert state.take(1) == ["a1"]  # a1 and b1 tie at 0.5 ln 3; a1 first in depth order
    state.observe("a1", False)  # L_A = ln3 / 2
    w_a = 0.8 ** (math.log(3) / 2)
    assert state.weights().tolist() == pytest.approx([w_a / (w_a + 1), 1 / (w_a + 1)])
    assert state.take(1) == ["b1"]
    state.observe("b1", True)  # L_B = -ln3 / 2
    w_a = 0.8 ** math.log(3)
    assert state.weights().tolist() == pytest.approx([w_a / (w_a + 1), 1 / (w_a + 1)])
    assert state.take(2) == ["b2", "a2"]  # 0.561 ln1.5 > 0.439 ln1.5


def test_hedge_gain_of_an_unretrieved_document_is_the_mean_below_the_list():
    pool = TopicPool.build({"A": ranked("a1"), "B": ranked("b1", "b2", "b3")}, 3)
    gains = adaptive.hedge_gains(pool)  # D = 4; A misses ranks 2..4
    expected = np.mean([math.log(4) - math.log(k) for k in (2, 3, 4)])
    b1 = pool.index("b1")
    assert gains[0, b1] == pytest.approx(expected)


def test_thompson_sampling_is_seeded_and_follows_the_posterior():
    runs = {
        "A": ranked(*[f"a{i}" for i in range(30)]),
        "B": ranked(*[f"b{i}" for i in range(30)]),
    }
    pool = TopicPool.build(runs, 30)
    relevant = {f"b{i}" for i in range(30)}
    first = judge_all("ts", pool, relevant, 40, seed=7, qid="q1")
    assert first == judge_all("ts", pool, relevant, 40, seed=7, qid="q1")
    assert first != judge_all("ts", pool, relevant, 40, seed=8, qid="q1")
    # B is always relevant, A never: B is used up within 40 pulls, A sampled a few times
    assert sum(d.startswith("b") for d in first) == 30


@pytest.mark.parametrize("strategy", [s for s in adaptive.METHODS if s != "al"])
def test_replaying_the_judgements_gives_the_states_next_document(strategy):
    rng = np.random.default_rng(3)
    docs = [f"d{i:02d}" for i in range(40)]
    runs = {t: ranked(*rng.choice(docs, 15, replace=False).tolist()) for t in "ABCD"}
    pool = TopicPool.build(runs, 15)
    relevant = set(rng.choice(docs, 12, replace=False).tolist())
    order = judge_all(strategy, pool, relevant, len(pool), seed=5, qid="7")
    assert sorted(order) == sorted(pool.docnos)  # every pooled document, once
    history = [(d, d in relevant) for d in order]
    for k in (0, 1, 5, 17, len(order) - 1):
        replayed = adaptive.next_documents(strategy, pool, history[:k], seed=5, qid="7")
        assert replayed == [order[k]]
    assert adaptive.next_documents(strategy, pool, history, 3, seed=5, qid="7") == []


def test_take_hands_out_a_batch_of_distinct_documents():
    pool = TopicPool.build(TWO_RUNS, 3)
    batch = adaptive.next_documents("mm", pool, [("a1", True)], 4)
    assert batch == ["a2", "a3", "b1", "b2"]


def test_active_learning_ranks_by_a_classifier_of_the_judged_texts():
    pytest.importorskip("sklearn")
    runs = {"A": ranked("a1", "a2", "a3"), "B": ranked("b1", "b2", "b3")}
    texts = {
        "a1": "apple orchard harvest",
        "b1": "zebra stripes savanna",
        "a2": "zebra herd savanna",
        "b2": "zebra grazing plains",
        "a3": "lion savanna",
        "b3": "apple harvest pie",
    }
    pool = TopicPool.build(runs, 3)
    history = [("a1", True), ("b1", False)]
    assert adaptive.next_documents("al", pool, history, 1, texts=texts) == ["b3"]
    # before both labels are known: the depth order
    assert adaptive.next_documents("al", pool, [("a1", True)], 2, texts=texts) == ["b1", "a2"]
    with pytest.raises(adaptive.MethodError, match="text of every pooled document"):
        adaptive.next_documents("al", pool, [], texts={"a1": "x"})


def test_active_learning_without_scikit_learn_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    pool = TopicPool.build(TWO_RUNS, 3)
    with pytest.raises(adaptive.MethodError, match="needs scikit-learn"):
        adaptive.next_documents("al", pool, [], texts=dict.fromkeys(pool.docnos, "x"))


def test_unknown_strategy_is_refused():
    with pytest.raises(adaptive.MethodError, match="unknown adaptive method 'nope'"):
        adaptive.get_method("nope")


def test_the_core_module_imports_neither_flask_nor_sqlalchemy():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(adaptive))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not {m for m in imported if m.split(".")[0] in {"flask", "sqlalchemy"}}


def test_remaining_relevant_extrapolates_the_yield_curve():
    assert adaptive.remaining_relevant([True], 50) is None
    # last 10 all relevant, the 10 before too: no decay, 100 more at that yield
    assert adaptive.remaining_relevant([True] * 20, 100, window=10) == 100
    # last 10 none relevant: nothing expected
    assert adaptive.remaining_relevant([True] * 10 + [False] * 10, 100, window=10) == 0
    # x0 = 8, x1 = 4: y = 0.4, q = (4.5 / 8.5)^(1/10)
    labels = [True] * 8 + [False] * 2 + [True] * 4 + [False] * 6
    q = (4.5 / 8.5) ** 0.1
    expected = 0.4 * q * (1 - q**100) / (1 - q)
    assert adaptive.remaining_relevant(labels, 100, window=10) == pytest.approx(expected)
    # fewer than 2 windows: w = n // 2 = 3
    assert adaptive.remaining_relevant([True] * 6, 10) == pytest.approx(10.0)
