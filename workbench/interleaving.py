"""Online testing by interleaving two ranked_lists, with clicks simulated from qrels (pure).

Notes 002, "Online testing": test on live traffic. Interleaving shows each user one list
merged from the two systems' ranked_lists and credits a system with the clicks on its documents.

* Team-draft interleaving (Radlinski, Kurup & Joachims, CIKM 2008), the default: the team
  with fewer picks (a coin flip when equal) adds its highest-ranked document not yet shown;
  each shown document belongs to the team that picked it. Credit: clicks on each team's
  documents.
* Balanced interleaving (Joachims 2002): a coin flip decides which ranking leads; the lists
  are merged alternately by rank, skipping documents already shown. Credit: with d the
  lowest clicked document and k the best rank d has in either ranking, each ranking gets the
  clicks on its own top k. It is biased: with A = (d1, d2, d3), B = (d2, d3, d1) and every
  shown document clicked with probability 1/2 whatever its relevance, B wins about 37 % of
  the impressions and A 12.5 % (team-draft: 31 % each). Radlinski et al. proposed team-draft
  for this reason; `fidelity` measures it on the runs at hand.

One impression is a win for A, a loss, or a tie by its credits. Per query, A wins when it
won more impressions than it lost; the overall preference is the sign test over queries
(``workbench.stats.sign_test``, scipy's ``binomtest``).

Clicks come from a position-based model: a document at position r is examined with
probability 1 / r^decay and, if examined, clicked with its attractiveness: ``p_nonrelevant``
for a document below the relevance level (or unjudged), rising linearly to ``p_relevant`` at
the highest grade. `RandomClicks` clicks every shown document with one probability, for the
fidelity check (Hofmann, Whiteson & de Rijke, "Fidelity, soundness, and efficiency of
interleaved comparison methods", ACM TOIS 31(4), 2013: a method with fidelity prefers
neither ranking when clicks are random). Every random draw comes from one seeded generator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workbench import stats

METHODS = ("team-draft", "balanced")


@dataclass(frozen=True)
class Interleaved:
    """The list shown, and for team-draft who picked each position ('A' or 'B')."""

    method: str
    docnos: tuple[str, ...]
    teams: tuple[str, ...] = ()


def team_draft(
    a: Sequence[str], b: Sequence[str], rng: np.random.Generator, *, length: int = 10
) -> Interleaved:
    """Team-draft interleaving of ranked_lists ``a`` and ``b`` (best first), at most ``length``."""
    shown: list[str] = []
    teams: list[str] = []
    seen: set[str] = set()
    picks = {"A": 0, "B": 0}
    next_index = {"A": 0, "B": 0}
    lists = {"A": a, "B": b}

    def unused(team: str) -> str | None:
        ranking = lists[team]
        i = next_index[team]
        while i < len(ranking) and ranking[i] in seen:
            i += 1
        next_index[team] = i
        return ranking[i] if i < len(ranking) else None

    while len(shown) < length and unused("A") is not None and unused("B") is not None:
        if picks["A"] < picks["B"] or (picks["A"] == picks["B"] and rng.random() < 0.5):
            team = "A"
        else:
            team = "B"
        docno = unused(team)
        assert docno is not None
        shown.append(docno)
        teams.append(team)
        seen.add(docno)
        picks[team] += 1
    return Interleaved("team-draft", tuple(shown), tuple(teams))


def balanced(
    a: Sequence[str], b: Sequence[str], rng: np.random.Generator, *, length: int = 10
) -> Interleaved:
    """Balanced interleaving of ranked_lists ``a`` and ``b`` (best first), at most ``length``."""
    a_first = rng.random() < 0.5
    shown: list[str] = []
    seen: set[str] = set()
    ka = kb = 0
    while ka < len(a) and kb < len(b) and len(shown) < length:
        if ka < kb or (ka == kb and a_first):
            docno, ka = a[ka], ka + 1
        else:
            docno, kb = b[kb], kb + 1
        if docno not in seen:
            shown.append(docno)
            seen.add(docno)
    return Interleaved("balanced", tuple(shown))


def credit(
    interleaved: Interleaved, clicks: Sequence[bool], a: Sequence[str], b: Sequence[str]
) -> tuple[int, int]:
    """(credit of A, credit of B) for the clicks on the shown list (one flag per position)."""
    if len(clicks) != len(interleaved.docnos):
        raise ValueError(f"{len(clicks)} click flags for {len(interleaved.docnos)} documents")
    clicked = [d for d, c in zip(interleaved.docnos, clicks, strict=True) if c]
    if interleaved.method == "team-draft":
        team_of = dict(zip(interleaved.docnos, interleaved.teams, strict=True))
        return sum(team_of[d] == "A" for d in clicked), sum(team_of[d] == "B" for d in clicked)
    if not clicked:
        return 0, 0
    lowest = clicked[-1]
    ranks = [r.index(lowest) + 1 for r in (a, b) if lowest in r]
    k = min(ranks)
    top_a, top_b = set(a[:k]), set(b[:k])
    return sum(d in top_a for d in clicked), sum(d in top_b for d in clicked)


# ------------------------------------------------------------------------------- clicks


@dataclass(frozen=True)
class ClickModel:
    """Position-based clicks: P(click at r) = (1 / r^decay) * attractiveness(grade)."""

    decay: float = 1.0
    p_relevant: float = 0.9
    p_nonrelevant: float = 0.05
    relevance_level: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.p_nonrelevant <= self.p_relevant <= 1:
            raise ValueError("need 0 <= p_nonrelevant <= p_relevant <= 1")
        if self.decay < 0:
            raise ValueError(f"decay must be >= 0, got {self.decay}")

    def probabilities(self, docnos: Sequence[str], judged: Mapping[str, int]) -> np.ndarray:
        """The click probability of each shown document (its grade from ``judged``)."""
        top = max([g for g in judged.values()] + [self.relevance_level])
        span = max(top - self.relevance_level, 0)
        probabilities = []
        for position, docno in enumerate(docnos, start=1):
            grade = judged.get(docno, 0)
            if grade < self.relevance_level:
                attract = self.p_nonrelevant
            else:
                share = (grade - self.relevance_level + 1) / (span + 1)
                attract = self.p_nonrelevant + (self.p_relevant - self.p_nonrelevant) * share
            probabilities.append(attract / position**self.decay)
        return np.array(probabilities)

    def clicks(
        self, docnos: Sequence[str], judged: Mapping[str, int], rng: np.random.Generator
    ) -> tuple[bool, ...]:
        """One simulated user's clicks on the shown list."""
        draws = rng.random(len(docnos))
        return tuple(bool(x) for x in draws < self.probabilities(docnos, judged))


@dataclass(frozen=True)
class RandomClicks(ClickModel):
    """Clicks at random: each shown document clicked with probability ``p_click``, whatever
    its grade or position (the fidelity check's user)."""

    p_click: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.p_click < 1:
            raise ValueError(f"p_click must be in (0, 1), got {self.p_click}")

    def probabilities(self, docnos: Sequence[str], judged: Mapping[str, int]) -> np.ndarray:
        return np.full(len(docnos), self.p_click)


# ------------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class QueryOutcome:
    qid: str
    wins: int  # impressions A won
    losses: int
    ties: int


@dataclass(frozen=True)
class InterleavingComparison:
    first: str
    second: str
    method: str
    impressions: int  # per query
    seed: int
    queries: tuple[QueryOutcome, ...]
    wins: int  # queries where A won more impressions than it lost
    losses: int
    ties: int
    p_value: float  # two-sided sign test over queries (ties dropped)
    skipped: tuple[str, ...] = ()  # topics without qrels or without a ranking from both

    @property
    def preference(self) -> int:
        """+1 when the first run wins more queries, -1 when the second does, 0 when even."""
        return int(np.sign(self.wins - self.losses))


def interleave(method: str) -> Callable[..., Interleaved]:
    """The interleaving function named ``method``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    return team_draft if method == "team-draft" else balanced


@dataclass(frozen=True)
class Setup:
    """How pairs of runs are interleaved and clicked: the interleaving `method` (METHODS), the
    simulated users per query (`impressions`), the documents shown (`length`), the random
    `seed` and the click model (None: `ClickModel()`)."""

    method: str = "team-draft"
    impressions: int = 10
    length: int = 10
    seed: int = 0
    model: ClickModel | None = None


def compare(
    a: Mapping[str, Sequence[str]],
    b: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    setup: Setup = Setup(),
    *,
    names: tuple[str, str] = ("A", "B"),
) -> InterleavingComparison:
    """Interleave ranked_lists ``a`` and ``b`` (qid -> docnos best first) ``setup.impressions``
    times per query with simulated clicks; topics are those with qrels that both runs rank."""
    method, impressions, length, seed = setup.method, setup.impressions, setup.length, setup.seed
    if impressions < 1 or length < 1:
        raise ValueError("impressions and length must be at least 1")
    merge = interleave(method)
    model = setup.model or ClickModel()
    rng = np.random.default_rng(seed)
    topics = sorted(set(a) & set(b) & set(qrels))
    skipped = tuple(sorted((set(a) | set(b)) - set(topics)))
    outcomes = []
    for qid in topics:
        wins = losses = ties = 0
        for _ in range(impressions):
            shown = merge(a[qid], b[qid], rng, length=length)
            credit_a, credit_b = credit(shown, model.clicks(shown.docnos, qrels[qid], rng),
                                        a[qid], b[qid])  # fmt: skip
            if credit_a > credit_b:
                wins += 1
            elif credit_a < credit_b:
                losses += 1
            else:
                ties += 1
        outcomes.append(QueryOutcome(qid, wins, losses, ties))
    if len(outcomes) >= 2:
        test = stats.sign_test([o.wins for o in outcomes], [o.losses for o in outcomes])
        q_wins, q_losses, q_ties, p = test.wins, test.losses, test.ties, test.p_value
    else:
        q_wins = sum(o.wins > o.losses for o in outcomes)
        q_losses = sum(o.wins < o.losses for o in outcomes)
        q_ties, p = len(outcomes) - q_wins - q_losses, 1.0
    return InterleavingComparison(
        names[0], names[1], method, impressions, seed, tuple(outcomes), q_wins, q_losses, q_ties,
        p, skipped,
    )  # fmt: skip


@dataclass(frozen=True)
class Agreement:
    """How often interleaving prefers the run that the offline measure prefers."""

    pairs: int
    agree: int  # both prefer the same run
    disagree: int  # they prefer different runs
    undecided: int  # interleaving or the offline measure has no preference

    @property
    def rate(self) -> float:
        """agree / (agree + disagree); NaN when no pair is decided by both."""
        decided = self.agree + self.disagree
        return self.agree / decided if decided else float("nan")


def agreement(comparisons: Sequence[tuple[InterleavingComparison, float]]) -> Agreement:
    """Agreement of interleaving preferences with offline mean differences (first - second)."""
    agree = disagree = undecided = 0
    for comparison, offline in comparisons:
        online = comparison.preference
        if online == 0 or offline == 0:
            undecided += 1
        elif online == np.sign(offline):
            agree += 1
        else:
            disagree += 1
    return Agreement(len(comparisons), agree, disagree, undecided)


@dataclass(frozen=True)
class PairOutcome:
    """One pair of runs: the interleaving comparison and the offline mean difference."""

    comparison: InterleavingComparison
    offline_difference: float  # mean over common topics of first - second under the qrels
    offline_topics: int


@dataclass(frozen=True)
class InterleavingStudy:
    method: str
    impressions: int
    seed: int
    measure: str
    model: ClickModel
    pairs: tuple[PairOutcome, ...]
    agreement: Agreement


def study(
    ranked_lists: Mapping[str, Mapping[str, Sequence[str]]],
    qrels: Mapping[str, Mapping[str, int]],
    offline: Mapping[str, Mapping[str, float]],
    *,
    measure: str,
    setup: Setup = Setup(),
) -> InterleavingStudy:
    """Interleave every pair of runs (``ranked_lists``: tag -> qid -> docnos) and set each
    preference beside the offline difference of ``offline`` (tag -> qid -> score) means."""
    model = setup.model or ClickModel()
    tags = list(ranked_lists)
    outcomes = []
    for i, first in enumerate(tags):
        for second in tags[i + 1 :]:
            comparison = compare(
                ranked_lists[first], ranked_lists[second], qrels, setup, names=(first, second)
            )
            common = sorted(set(offline[first]) & set(offline[second]))
            difference = (
                float(np.mean([offline[first][q] - offline[second][q] for q in common]))
                if common
                else 0.0
            )
            outcomes.append(PairOutcome(comparison, difference, len(common)))
    return InterleavingStudy(
        setup.method, setup.impressions, setup.seed, measure, model, tuple(outcomes),
        agreement([(o.comparison, o.offline_difference) for o in outcomes]),
    )  # fmt: skip


# ------------------------------------------------------------------------------- fidelity


@dataclass(frozen=True)
class PairFidelity:
    """One pair of runs interleaved under random clicks: impressions won by each."""

    first: str
    second: str
    impressions: int
    first_wins: int
    second_wins: int
    p_value: float  # two-sided binomial test of first_wins among the decided impressions

    @property
    def bias(self) -> float:
        """(first wins - second wins) / impressions: 0 expected of a method with fidelity."""
        return (self.first_wins - self.second_wins) / self.impressions if self.impressions else 0


@dataclass(frozen=True)
class Fidelity:
    """The random-click fidelity check of one interleaving method over every pair of runs."""

    method: str
    impressions: int  # per query
    p_click: float
    seed: int
    pairs: tuple[PairFidelity, ...]
    alpha: float = 0.05

    @property
    def biased_pairs(self) -> int:
        """Pairs whose random-click preference is significant at alpha (about alpha of the
        pairs are expected by chance of a method with fidelity)."""
        return sum(p.p_value < self.alpha for p in self.pairs)

    @property
    def mean_abs_bias(self) -> float:
        return float(np.mean([abs(p.bias) for p in self.pairs])) if self.pairs else 0.0


def random_click_setup(
    setup: Setup, *, method: str | None = None, p_click: float = 0.5, impressions: int | None = None
) -> Setup:
    """`setup` with random clicks (and another method or number of impressions)."""
    return Setup(method or setup.method, impressions or setup.impressions, setup.length,
                 setup.seed, RandomClicks(p_click=p_click))  # fmt: skip


def fidelity(study_under_random_clicks: InterleavingStudy, *, alpha: float = 0.05) -> Fidelity:
    """The fidelity check from a `study` run with `RandomClicks`: per pair, the impressions
    each run won over every query, and a binomial test of the wins at 1/2."""
    model = study_under_random_clicks.model
    if not isinstance(model, RandomClicks):
        raise ValueError("the fidelity check needs a study under random clicks")
    pairs = []
    for outcome in study_under_random_clicks.pairs:
        c = outcome.comparison
        wins, losses = sum(q.wins for q in c.queries), sum(q.losses for q in c.queries)
        total = sum(q.wins + q.losses + q.ties for q in c.queries)
        decided = wins + losses
        p = float(stats.binomial_p_value(wins, decided)) if decided else 1.0
        pairs.append(PairFidelity(c.first, c.second, total, wins, losses, p))
    s = study_under_random_clicks
    return Fidelity(s.method, s.impressions, model.p_click, s.seed, tuple(pairs), alpha)
