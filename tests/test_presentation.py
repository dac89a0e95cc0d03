"""Presentation orders: seeded per assessor, stable when the pool is extended, by docno or
priority."""

from __future__ import annotations

import pytest

from workbench.presentation import presentation_order

DOCS = [f"doc{i:02d}" for i in range(12)]


def test_presentation_order_random_is_a_seeded_permutation_per_assessor():
    def order(assessor: int, seed: int = 3) -> list[str]:
        return presentation_order(
            DOCS, mode="random", seed=seed, pool_id=1, qid="7", assessor_id=assessor
        )

    assert sorted(order(1)) == DOCS
    assert order(1) == order(1)
    assert order(1) != order(2)
    assert order(1) != order(1, seed=4)
    # independent of the order the documents are given in
    shuffled = list(reversed(DOCS))
    assert presentation_order(
        shuffled, mode="random", seed=3, pool_id=1, qid="7", assessor_id=1
    ) == order(1)


def test_presentation_order_is_stable_when_the_pool_is_extended():
    first = presentation_order(
        DOCS, mode="random", seed=3, pool_id=1, qid="7", assessor_id=1, builds=[0] * 12
    )
    new = ["new1", "new0", "new2"]
    extended = presentation_order(
        DOCS + new,
        mode="random",
        seed=3,
        pool_id=1,
        qid="7",
        assessor_id=1,
        builds=[0] * 12 + [1] * 3,
    )
    assert extended[:12] == first
    assert sorted(extended[12:]) == sorted(new)


def test_presentation_order_docno_and_priority():
    docs = ["b", "c", "a", "d"]
    kwargs = {"seed": 0, "pool_id": 1, "qid": "1", "assessor_id": 1}
    assert presentation_order(docs, mode="docno", **kwargs) == ["a", "b", "c", "d"]
    priorities = [1.2, 3.1, 1.2, 2.5]
    assert presentation_order(docs, mode="priority", priorities=priorities, **kwargs) == [
        "c",
        "d",
        "a",
        "b",
    ]
    with pytest.raises(ValueError, match="priorities"):
        presentation_order(docs, mode="priority", **kwargs)
    with pytest.raises(ValueError, match="unknown order"):
        presentation_order(docs, mode="rank", **kwargs)
