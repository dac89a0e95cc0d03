"""Team-draft and balanced interleaving, credit from clicks, the click model, agreement."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import interleaving as il

A = ["a", "b", "c", "d"]
B = ["b", "e", "a", "f"]


class Coins:
    """A generator stand-in whose random() returns the scripted values in turn."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def random(self, size=None):  # type: ignore[no-untyped-def]
        return self.values.pop(0)


def test_team_draft_by_hand() -> None:
    """Coin 0.3 -> A picks a; B (fewer picks) b; tie, coin 0.7 -> B picks e; A picks c (b is
    shown); tie, coin 0.2 -> A picks d. A has nothing left to add, so the list stops (the
    paper merges while both rankings have an unshown document), though B still has f."""
    shown = il.team_draft(A, B, Coins(0.3, 0.7, 0.2))
    assert shown.docnos == ("a", "b", "e", "c", "d")
    assert shown.teams == ("A", "B", "B", "A", "A")
    assert il.team_draft(A, B, Coins(0.3, 0.7), length=3).docnos == ("a", "b", "e")


def test_balanced_by_hand() -> None:
    """A leads: a (A1), b (B1), skip b (A2), e (B2), c (A3), skip a (B3), d (A4); A is used up."""
    shown = il.balanced(A, B, Coins(0.3))
    assert shown.docnos == ("a", "b", "e", "c", "d")
    assert il.balanced(A, B, Coins(0.9)).docnos == ("b", "a", "e", "c", "f")


def test_credit_by_hand() -> None:
    """Clicks on b and c. Balanced: the lowest click c has rank 3 in A (absent from B), k = 3:
    A's top 3 {a, b, c} hold 2 clicks, B's {b, e, a} 1. Team draft: b is B's, c is A's: 1-1."""
    shown = il.balanced(A, B, Coins(0.3))
    assert il.credit(shown, (False, True, False, True, False), A, B) == (2, 1)
    assert il.credit(shown, (False,) * 5, A, B) == (0, 0)
    team = il.team_draft(A, B, Coins(0.3, 0.7, 0.2))
    assert il.credit(team, (False, True, False, True, False), A, B) == (1, 1)
    assert il.credit(team, (True, False, False, False, True), A, B) == (2, 0)
    with pytest.raises(ValueError, match="click flags"):
        il.credit(team, (True,), A, B)


def test_position_based_click_probabilities() -> None:
    model = il.ClickModel(decay=1.0, p_relevant=0.9, p_nonrelevant=0.1)
    judged = {"r2": 2, "r1": 1, "n": 0}
    p = model.probabilities(["r2", "r1", "n", "unjudged"], judged)
    # grades 1..2 above level 1: attractiveness 0.1 + 0.8 * (1/2) = 0.5 at grade 1, 0.9 at 2
    assert p == pytest.approx([0.9 / 1, 0.5 / 2, 0.1 / 3, 0.1 / 4])
    binary = il.ClickModel(decay=0.0).probabilities(["x", "y"], {"x": 1})
    assert binary == pytest.approx([0.9, 0.05])
    with pytest.raises(ValueError):
        il.ClickModel(p_relevant=0.1, p_nonrelevant=0.5)


def test_clicks_follow_the_model() -> None:
    model = il.ClickModel(decay=0.0, p_relevant=0.8, p_nonrelevant=0.2)
    rng = np.random.default_rng(1)
    draws = np.array([model.clicks(["x", "y"], {"x": 1}, rng) for _ in range(4000)])
    assert draws.mean(0) == pytest.approx([0.8, 0.2], abs=0.03)


def _runs(n_topics: int = 30):
    """good ranks its relevant documents first; bad ranks them last."""
    qrels, good, bad = {}, {}, {}
    for t in range(n_topics):
        rel = [f"r{t}_{i}" for i in range(3)]
        non = [f"n{t}_{i}" for i in range(7)]
        qrels[f"q{t}"] = {d: 1 for d in rel} | {d: 0 for d in non}
        good[f"q{t}"] = rel + non
        bad[f"q{t}"] = non + rel
    return qrels, good, bad


@pytest.mark.parametrize("method", il.METHODS)
def test_interleaving_prefers_the_better_run(method) -> None:
    qrels, good, bad = _runs()
    result = il.compare(good, bad, qrels, il.Setup(method, seed=4), names=("good", "bad"))
    assert result.preference == 1
    assert result.wins > 20 and result.losses == 0
    assert result.p_value < 1e-5
    assert len(result.queries) == 30 and sum(q.wins for q in result.queries) > 200
    assert result == il.compare(good, bad, qrels, il.Setup(method, seed=4), names=("good", "bad"))
    swapped = il.compare(bad, good, qrels, il.Setup(method, seed=4))
    assert swapped.preference == -1


def test_identical_runs_are_not_told_apart() -> None:
    qrels, good, _ = _runs()
    result = il.compare(good, good, qrels, il.Setup("balanced", seed=2))
    assert (result.wins, result.losses, result.p_value) == (0, 0, 1.0)
    team = il.compare(good, good, qrels, il.Setup("team-draft", impressions=20, seed=2))
    assert team.p_value > 0.01  # the coin decides the teams: no systematic preference


def test_topics_without_qrels_are_skipped_and_listed() -> None:
    qrels, good, bad = _runs(3)
    good["extra"] = ["x"]
    bad["extra"] = ["y"]
    result = il.compare(good, bad, qrels, il.Setup(seed=0))
    assert result.skipped == ("extra",) and len(result.queries) == 3
    with pytest.raises(ValueError, match="method"):
        il.compare(good, bad, qrels, il.Setup("probabilistic"))


def test_agreement_with_offline_differences() -> None:
    qrels, good, bad = _runs(5)
    ab = il.compare(good, bad, qrels, il.Setup(seed=0))
    same = il.compare(good, good, qrels, il.Setup("balanced", seed=0))
    result = il.agreement([(ab, 0.3), (ab, -0.1), (same, 0.2), (ab, 0.0)])
    assert (result.pairs, result.agree, result.disagree, result.undecided) == (4, 1, 1, 2)
    assert result.rate == 0.5


def test_balanced_interleaving_is_biased_under_random_clicks() -> None:
    """The issue's example: A = (d1, d2, d3), B = (d2, d3, d1), each shown document clicked
    with probability 1/2. Exactly: balanced credits B more often (3/8 against 1/8 of the
    impressions); team-draft is even."""
    a, b = {"q": ["d1", "d2", "d3"]}, {"q": ["d2", "d3", "d1"]}
    qrels = {"q": {"d1": 1}}
    offline = {"A": {"q": 0.0}, "B": {"q": 0.0}}
    runs = {"A": a, "B": b}
    checks = {}
    for method in il.METHODS:
        setup = il.random_click_setup(il.Setup(method=method, seed=0), impressions=20_000)
        checks[method] = il.fidelity(il.study(runs, qrels, offline, measure="x", setup=setup))
    balanced, team = checks["balanced"].pairs[0], checks["team-draft"].pairs[0]
    assert balanced.first_wins / balanced.impressions == pytest.approx(1 / 8, abs=0.01)
    assert balanced.second_wins / balanced.impressions == pytest.approx(3 / 8, abs=0.01)
    assert balanced.bias == pytest.approx(-0.25, abs=0.01) and balanced.p_value < 1e-100
    assert abs(team.bias) < 0.01 and team.p_value > 0.05
    assert checks["balanced"].biased_pairs == 1
    with pytest.raises(ValueError, match="random clicks"):
        il.fidelity(il.study(runs, qrels, offline, measure="x", setup=il.Setup()))


def test_balanced_bias_by_enumeration() -> None:
    """Independent of the simulator: every lead coin and click pattern of the example."""
    import itertools

    a, b = ["d1", "d2", "d3"], ["d2", "d3", "d1"]
    first = second = 0
    for coin in (0.1, 0.9):
        shown = il.balanced(a, b, Coins(coin))
        for clicks in itertools.product((False, True), repeat=len(shown.docnos)):
            ca, cb = il.credit(shown, clicks, a, b)
            first += ca > cb
            second += ca < cb
    patterns = 2 * 2**3
    assert (first / patterns, second / patterns) == (1 / 8, 3 / 8)
    first = second = 0
    for coins in itertools.product((0.1, 0.9), repeat=2):  # who starts, who takes d3
        shown = il.team_draft(a, b, Coins(*coins))
        for clicks in itertools.product((False, True), repeat=len(shown.docnos)):
            ca, cb = il.credit(shown, clicks, a, b)
            first += ca > cb
            second += ca < cb
    assert first == second  # team-draft: 5/16 each


def test_random_clicks_ignore_relevance_and_rank() -> None:
    model = il.RandomClicks(p_click=0.3)
    assert model.probabilities(["a", "b", "c"], {"a": 2}) == pytest.approx([0.3] * 3)
    with pytest.raises(ValueError, match="p_click"):
        il.RandomClicks(p_click=1.0)
