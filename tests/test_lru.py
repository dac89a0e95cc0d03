"""The per-process caches' bounded map: by items, or by the sum of their weights."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.lru import LRU, PerEngine


def test_items_beyond_the_size_go_least_recently_used_first() -> None:
    kept = LRU(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "b" is now the least recently used
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)


def test_weighed_items_are_bounded_by_their_total_weight() -> None:
    kept = LRU(5, weigh=len)
    kept.put("ab", frozenset("ab"))
    kept.put("cde", frozenset("cde"))  # total 5
    kept.put("f", frozenset("f"))  # total 6: "ab" goes
    assert kept.get("ab") is None and kept.get("cde") == frozenset("cde")
    kept.put("cde", frozenset("c"))  # replaced: its old weight no longer counts
    kept.put("gh", frozenset("gh"))  # total 1 + 1 + 2 = 4
    assert [kept.get(k) for k in ("cde", "f", "gh")] == [frozenset("c"), {"f"}, {"g", "h"}]
    kept.put("big", frozenset("abcdef"))  # heavier than the size: not kept, nor the rest
    assert [kept.get(k) for k in ("big", "cde", "f", "gh")] == [None] * 4


def test_one_value_per_engine() -> None:
    made = PerEngine(list)
    first, second = sa.create_engine("sqlite://"), sa.create_engine("sqlite://")
    assert made(first) is made(first) and made(first) is not made(second)


def test_the_kept_judging_sequences_are_bounded_by_the_documents_they_hold(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The judging sequences a process keeps are weighed by their documents (a TREC-size
    topic's takes 322 KiB: by count, 4,096 of them were 1.3 GiB)."""
    from workbench.services import judging

    def sequence(n: int) -> judging.DocumentSequence:
        docnos = tuple(f"D{i}" for i in range(n))
        return judging.DocumentSequence(docnos, {d: i for i, d in enumerate(docnos)})

    monkeypatch.setattr(judging, "KEPT_SEQUENCE_DOCUMENTS", 25)
    kept = judging._EngineCaches().sequences
    kept.put("a", sequence(10))
    kept.put("b", sequence(10))
    assert kept.get("a") is not None  # "b" is now the least recently used
    kept.put("c", sequence(10))  # 33 documents (and one per sequence) > 25: "b" goes
    assert kept.get("b") is None
    assert kept.get("a") is not None and kept.get("c") is not None
