"""Pairwise preference design and presentation (workbench.pairs) and the judging modes'
options (workbench.judging_modes): pure functions."""

from __future__ import annotations

from itertools import combinations

import pytest

from workbench import judging_modes, pairs


def test_top_design_pairs_the_best_ranked_documents() -> None:
    docnos = ["d1", "d2", "d3", "d4", "d5", "d6"]
    best = [4, 1, 6, 3, 3, 1]  # d4 and d5 tie at rank 3: docno order breaks it
    chosen = pairs.design_pairs(docnos, best, design="top", top=3)
    assert chosen == [("d2", "d4"), ("d2", "d6"), ("d4", "d6")]
    assert pairs.design_pairs(docnos, best, top=5) == sorted(
        combinations(["d1", "d2", "d4", "d5", "d6"], 2)
    )
    assert len(pairs.design_pairs(docnos, best, top=6)) == 15  # k(k-1)/2
    assert pairs.design_pairs(["a"], [1], top=5) == []  # one document: no pair
    with pytest.raises(ValueError, match="unknown pair design 'tournament'"):
        pairs.design_pairs(docnos, best, design="tournament")
    with pytest.raises(ValueError, match="at least 2 documents"):
        pairs.design_pairs(docnos, best, top=1)


def test_presentation_is_seeded_per_assessor_and_hides_the_order() -> None:
    chosen = pairs.design_pairs([f"d{i}" for i in range(10)], list(range(10)), top=10)
    one = pairs.presentation(chosen, seed=7, pool_id=1, qid="401", assessor_id=3)
    assert one == pairs.presentation(chosen, seed=7, pool_id=1, qid="401", assessor_id=3)
    other = pairs.presentation(chosen, seed=7, pool_id=1, qid="401", assessor_id=4)
    assert one != other
    assert sorted((p.first, p.second) for p in one) == chosen  # every pair once
    left_is_first = sum(p.left == p.first for p in one)
    assert 10 <= left_is_first <= 35  # of 45: sides by a coin, not by docno or rank
    assert [(p.first, p.second) for p in one] != chosen  # not in rank or docno order


def test_mode_options_are_checked() -> None:
    assert judging_modes.checked_options("document", {}) == {}
    assert judging_modes.checked_options("passages", {}) == {"per_screen": 10}
    assert judging_modes.checked_options("pairwise", {"top": "7"}) == {"design": "top", "top": 7}
    with pytest.raises(ValueError, match="unknown judging mode 'cards'"):
        judging_modes.checked_options("cards", {})
    with pytest.raises(ValueError, match="passages per screen: expected 2 to 50; got 51"):
        judging_modes.checked_options("passages", {"per_screen": 51})
    with pytest.raises(ValueError, match="has no option 'top'"):
        judging_modes.checked_options("passages", {"top": 3})
    with pytest.raises(ValueError, match="pairs: expected one of top; got 'all'"):
        judging_modes.checked_options("pairwise", {"design": "all"})
    with pytest.raises(ValueError, match="expected a whole number; got 'many'"):
        judging_modes.checked_options("pairwise", {"top": "many"})
