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
