"""Qrels derived by `select`, `without` (a leave-one-out's reduced qrels), `part_of` (an
assessor's qrels over the final ones) and `as_derived` are ranked through the root row each
ranked document matches (`metrics.ranked`, `Qrels.lineage`): every value must be the one that
the same entries give as qrels of their own, built afresh."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.property_examples import examples
from workbench.metrics import evaluate
from workbench.metrics.evaluation import TopicError
from workbench.metrics.ranked import rank_topics
from workbench.trec import Qrels, read_qrels, read_run

TOPICS = [f"q{i}" for i in range(7)]


def _root(rng: np.random.Generator, *, twice: bool = False) -> Qrels:
    """Random qrels over a small docno space (grades -2..3), topics interleaved in the file;
    with `twice`, some docnos judged twice in a topic (trec_eval's reading lets them in)."""
    lines = []
    for q in TOPICS[:-1]:  # the last topic: in runs only
        n = int(rng.integers(1, 14))
        for d in rng.choice(30, size=n, replace=False).tolist():
            lines.append((q, f"D{d}", int(rng.choice([-2, -1, 0, 0, 1, 1, 2, 3]))))
        if twice and rng.random() < 0.5:
            q_, d, _ = lines[-1]
            lines.append((q_, d, int(rng.integers(0, 3))))
    order = rng.permutation(len(lines))
    text = "".join(f"{lines[i][0]} 0 {lines[i][1]} {lines[i][2]}\n" for i in order)
    return read_qrels(io.BytesIO(text.encode()), check_duplicates=not twice)


def _run(rng: np.random.Generator) -> object:
    lines = []
    for q in rng.choice(TOPICS, size=int(rng.integers(1, len(TOPICS) + 1)), replace=False):
        for rank, d in enumerate(rng.choice(30, size=int(rng.integers(1, 20)), replace=False)):
            score = float(rng.choice([1.0, 0.5, 0.25, 2.0, 0.5000001]))  # ties on purpose
            lines.append(f"{q} Q0 D{d} {rank} {score} tag\n")
    return read_run(io.BytesIO("".join(lines).encode()))


def _part(rng: np.random.Generator, qrels: Qrels) -> Qrels:
    """Some of the entries of `qrels` (some topics, some docnos), grades of their own, in a
    new order: another assessor's qrels over the same documents, as `part_of` them."""
    entries = [(q, d, g) for q, _, d, g in qrels.entries() if rng.random() < 0.7]
    if not entries:
        entries = [next((q, d, g) for q, _, d, g in qrels.entries())]
    order = rng.permutation(len(entries))
    text = "".join(
        f"{entries[i][0]} 0 {entries[i][1]} {int(rng.choice([-1, 0, 1, 2, 3]))}\n" for i in order
    )
    own = read_qrels(io.BytesIO(text.encode()))
    part = own.part_of(qrels)
    assert part is not own and part.to_dict() == own.to_dict()
    return part


def _derive(rng: np.random.Generator, root: Qrels) -> Qrels:
    """One to three steps of `select` (topics in a random order, some missing), `without`
    (random docnos of random topics, some not judged at all) and `part_of` (some entries,
    their grades changed)."""
    qrels = root
    for _ in range(int(rng.integers(1, 4))):
        topics = qrels.topics()
        if rng.random() < 0.15:
            qrels = qrels.as_derived()
        elif rng.random() < 0.25 and len(qrels) and not root.judged_twice:
            qrels = _part(rng, qrels)
        elif rng.random() < 0.5 and topics:
            chosen = [str(q) for q in rng.permutation(topics)[: int(rng.integers(1, 7))]]
            qrels = qrels.select([*chosen, "nowhere"])
        else:
            removed = {
                q: {f"D{d}" for d in rng.choice(32, size=int(rng.integers(0, 12))).tolist()}
                for q in topics
                if rng.random() < 0.7
            }
            qrels = qrels.without(removed)
    return qrels


def _afresh(qrels: Qrels) -> Qrels:
    """The same entries as qrels of their own (no lineage)."""
    fresh = Qrels(
        qrels.qids.copy(), qrels.iterations.copy(), qrels.docnos.copy(), qrels.rels.copy()
    )
    assert fresh.lineage is None
    return fresh


OPTIONS = [
    {},
    {"average_over_all_topics": True},
    {"relevance_level": 2},
    {"judged_only": True, "average_over_all_topics": True},
    {"max_results": 5},
    {"compat": 9, "average_over_all_topics": True},
]


@pytest.mark.parametrize("seed", range(examples(60)))
def test_derived_qrels_evaluate_as_the_same_entries_built_afresh(seed: int) -> None:
    rng = np.random.default_rng(seed)
    root = _root(rng, twice=seed % 5 == 4)
    derived = _derive(rng, root)
    assert derived.lineage is not None and derived.lineage[0] is root
    fresh = _afresh(derived)
    assert fresh.to_dict() == derived.to_dict()
    assert fresh.topics() == derived.topics()
    for name in ("offsets", "grouped_topic", "grouped_rels", "grouped_docnos", "qids"):
        assert getattr(fresh, name).tolist() == getattr(derived, name).tolist(), name
    for _ in range(3):
        run = _run(rng)
        for options in OPTIONS:
            assert _outcome(derived, run, options) == _outcome(fresh, run, options), options


def _outcome(qrels: Qrels, run: object, options: dict) -> tuple[str, ...]:
    """Every value printed exactly, or the refusal and what was evaluated before it."""
    try:
        result = evaluate(qrels, run, ["all_trec"], **options)
    except TopicError as refused:
        done = refused.evaluated
        return str(refused), repr(done.per_topic), repr(done.summary)
    return repr(result.per_topic), repr(result.summary)


@pytest.mark.parametrize("seed", range(examples(40)))
def test_derived_qrels_rank_as_the_same_entries_built_afresh(seed: int) -> None:
    """The ranked arrays themselves (relevance of each ranked document, its type, the
    judged parts), over topics of the derived qrels, some the run lacks, some nowhere."""
    rng = np.random.default_rng(1000 + seed)
    root = _root(rng)
    derived = _derive(rng, root)
    fresh = _afresh(derived)
    run = _run(rng)
    qids = [*derived.topics(), "nowhere", TOPICS[-1]]
    for level in (1, 2):
        a = rank_topics(derived, run, qids, relevance_level=level)
        b = rank_topics(fresh, run, qids, relevance_level=level)
        assert a.qids == b.qids
        for name in ("offsets", "rel", "num_rel", "num_nonrel", "judged_offsets", "judged_rel"):
            left, right = getattr(a, name), getattr(b, name)
            assert left.dtype == right.dtype, name
            assert left.tolist() == right.tolist(), name


def test_lineage_composes_to_the_root_and_rows_are_the_roots():
    root = read_qrels(io.BytesIO(b"2 0 b 1\n1 0 a 1\n1 0 b 0\n2 0 c -1\n1 0 c 2\n"))
    picked = root.select(["2", "1"]).without({"1": {"b"}})
    lineage = picked.lineage
    assert lineage is not None
    top, rows = lineage
    assert top is root
    expected = [(q.decode(), d.decode()) for q, d in zip(picked.qids, picked.docnos, strict=True)]
    got = [(top.grouped_topic[r], top.grouped_docnos[r].decode()) for r in rows.tolist()]
    assert [(top.topics()[t], d) for t, d in got] == expected == [
        ("2", "b"), ("2", "c"), ("1", "a"), ("1", "c")
    ]  # fmt: skip
    assert picked.judged_topics() == ["2", "1"]
    assert root.without({"2": {"b"}}).judged_topics() == ["1"]  # "2" holds only -1 now
    assert read_qrels(io.BytesIO(b"")).judged_topics() == []


def test_as_derived_is_the_same_entries_rooted_here():
    root = read_qrels(io.BytesIO(b"2 0 b 1\n1 0 a 1\n1 0 b 0\n"))
    again = root.as_derived()
    assert again.lineage is not None and again.lineage[0] is root
    assert again.lineage[1].tolist() == [0, 1, 2]
    assert again.to_dict() == root.to_dict() and list(again.entries()) == list(root.entries())
    twice = again.as_derived().lineage
    assert twice is not None and twice[0] is root


def test_part_of_only_when_every_entry_is_the_roots_once():
    root = read_qrels(io.BytesIO(b"1 0 a 1\n1 0 b 0\n2 0 c 2\n"))
    part = read_qrels(io.BytesIO(b"2 0 c 0\n1 0 b 2\n")).part_of(root)
    assert part.lineage is not None and part.lineage[0] is root
    assert part.lineage[1].tolist() == [2, 1]  # c of topic 2, b of topic 1
    assert part.to_dict() == {"2": {"c": 0}, "1": {"b": 2}}  # its own grades
    for text in (b"1 0 c 1\n", b"3 0 a 1\n", b"1 0 zz 1\n"):  # not the root's: as it is
        alone = read_qrels(io.BytesIO(text))
        assert alone.part_of(root) is alone
    twice = read_qrels(io.BytesIO(b"1 0 a 1\n1 0 a 2\n"), check_duplicates=False)
    assert twice.part_of(root) is twice


def test_judged_twice_of_derived_qrels():
    twice = read_qrels(io.BytesIO(b"1 0 a 1\n1 0 a 0\n2 0 b 1\n"), check_duplicates=False)
    assert twice.judged_twice == frozenset({"1"})
    assert twice.select(["1"]).judged_twice == frozenset({"1"})
    assert twice.without({"1": {"a"}}).judged_twice == frozenset()
    once = read_qrels(io.BytesIO(b"1 0 a 1\n2 0 b 1\n"))
    assert once.select(["2"]).judged_twice == frozenset()
