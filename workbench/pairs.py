"""Pairwise preference judging: which pairs of a topic's pooled documents are judged, and in
what order and on which side each assessor sees them (pure).

The design ``top`` judges every pair of the k pooled documents that the runs rank best:
every pair of a small set of documents is judged, as in Carterette, Bennett, Chickering &
Dumais, "Here or There: Preference Judgments for Relevance" (ECIR 2008, section 3), whose
assessors judged all pairs of a topic's documents; and among the best-ranked documents of a
pool, where users look and the measures weigh most, as in the top-k preference judging of
Clarke, Vtyurina & Smucker, "Assessing Top-k Preferences" (ACM TOIS 39(3), 2021). Choosing
the k documents by best rank (ties by docno) is our own reading. Each assessor sees the
k(k-1)/2 pairs in a seeded random order, each side chosen by a seeded coin, so that neither
rank nor position tells which document the runs preferred.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from workbench.pooling import topic_rng

DEFAULT_TOP = 5
MAX_TOP = 20


@dataclass(frozen=True)
class PairDesign:
    name: str
    help: str


PAIR_DESIGNS: dict[str, PairDesign] = {
    design.name: design
    for design in (
        PairDesign(
            "top",
            "every pair of the k pooled documents the runs rank best (Carterette et al., "
            "ECIR 2008; Clarke et al., TOIS 2021)",
        ),
    )
}


@dataclass(frozen=True)
class Pair:
    """Two documents of a topic as one assessor sees them: `left` and `right`. `first` and
    `second` name the pair whatever its sides (first < second)."""

    left: str
    right: str

    @property
    def first(self) -> str:
        return min(self.left, self.right)

    @property
    def second(self) -> str:
        return max(self.left, self.right)


def design_pairs(
    docnos: Sequence[str], best_ranks: Sequence[int], *, design: str = "top", top: int = DEFAULT_TOP
) -> list[tuple[str, str]]:
    """The pairs (first, second), first < second, that `design` judges among a topic's pooled
    documents (`best_ranks[i]`: the best rank any run gave `docnos[i]`), sorted."""
    if design not in PAIR_DESIGNS:
        raise ValueError(
            f"unknown pair design {design!r}; expected one of {', '.join(PAIR_DESIGNS)}"
        )
    if len(docnos) != len(best_ranks):
        raise ValueError("docnos and best_ranks must have the same length")
    if top < 2:
        raise ValueError(f"a pair needs at least 2 documents; got top={top}")
    chosen = sorted(zip(best_ranks, docnos, strict=True))[:top]
    return sorted(combinations(sorted(docno for _, docno in chosen), 2))


def presentation(
    pairs: Sequence[tuple[str, str]], *, seed: int, pool_id: int, qid: str, assessor_id: int
) -> list[Pair]:
    """The pairs in the order and on the sides one assessor sees them: a permutation and a
    coin per pair, seeded by (seed, pool, topic, assessor) alone."""
    rng = topic_rng(seed, "pairs", pool_id, qid, assessor_id)
    order = rng.permutation(len(pairs))
    flips = rng.integers(0, 2, size=len(pairs))
    shown = []
    for n, i in enumerate(order):
        first, second = pairs[i]
        shown.append(Pair(second, first) if flips[n] else Pair(first, second))
    return shown
