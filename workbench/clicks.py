"""Click signals from a query log: click-through rates, click deviation, preferences.

Pure functions (no Flask, no SQL) over :class:`Impression` records: one result list shown for
one query, the documents in rank order (rank 1 first) and the clicks in time order.  A query
is whatever key the caller groups impressions by (a topic id, a normalised query text).

Clicks are not relevance judgements: they are biased by rank (users click what they see
first) and noisy.  The signals here correct for the rank bias (click deviation) or turn clicks
into relative judgements (preferences between documents), as the course notes (week 6) and
Croft, Metzler & Strohman (*Search Engines*, §8.3) describe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from workbench.agreement import bootstrap_interval
from workbench.trec import PrefsLine

SKIP_ABOVE = "skip-above"
SKIP_NEXT = "skip-next"
LAST_CLICK_SKIP_ABOVE = "last-click-skip-above"
STRATEGIES = (SKIP_ABOVE, SKIP_NEXT, LAST_CLICK_SKIP_ABOVE)


@dataclass(frozen=True)
class Click:
    """A click on ``docno`` at ``time`` (seconds; None when the log has no click times)."""

    docno: str
    time: float | None = None


@dataclass(frozen=True)
class Impression:
    """One result list shown for ``query``: ``results[i]`` at rank i + 1, clicks in time order."""

    query: str
    results: tuple[str, ...]
    clicks: tuple[Click, ...] = ()
    session: str = ""
    user: str = ""
    time: float | None = None

    def __post_init__(self) -> None:
        if len(set(self.results)) != len(self.results):
            raise ValueError(f"impression of {self.query!r} lists a document twice")
        shown = set(self.results)
        missing = [c.docno for c in self.clicks if c.docno not in shown]
        if missing:
            raise ValueError(f"impression of {self.query!r} has clicks on unshown {missing[0]!r}")

    @property
    def clicked(self) -> frozenset[str]:
        return frozenset(c.docno for c in self.clicks)

    def rank_of(self, docno: str) -> int:
        return self.results.index(docno) + 1


@dataclass(frozen=True)
class Rate:
    """``clicks`` out of ``shown`` impressions; ``value`` = clicks / shown (0 when never shown)."""

    clicks: int
    shown: int

    @property
    def value(self) -> float:
        return self.clicks / self.shown if self.shown else 0.0


# --------------------------------------------------------------------------- click-through rates


def ctr_by_rank(impressions: Iterable[Impression]) -> dict[int, Rate]:
    """E(p): clicks on rank p / impressions that show a result at rank p, over all queries.

    Each impression counts a click on a document at most once.  This is the expected click
    frequency at rank p averaged over all queries (weighted by their impressions), the E(p)
    of click deviation.
    """
    clicks: dict[int, int] = {}
    shown: dict[int, int] = {}
    for imp in impressions:
        clicked = imp.clicked
        for rank, docno in enumerate(imp.results, 1):
            shown[rank] = shown.get(rank, 0) + 1
            if docno in clicked:
                clicks[rank] = clicks.get(rank, 0) + 1
    return {rank: Rate(clicks.get(rank, 0), n) for rank, n in sorted(shown.items())}


def ctr_by_document(impressions: Iterable[Impression]) -> dict[tuple[str, str, int], Rate]:
    """O(d, p) per query: {(query, docno, rank): clicks on d at rank p / impressions of the
    query showing d at rank p}."""
    counts: dict[tuple[str, str, int], list[int]] = {}
    for imp in impressions:
        clicked = imp.clicked
        for rank, docno in enumerate(imp.results, 1):
            entry = counts.setdefault((imp.query, docno, rank), [0, 0])
            entry[0] += docno in clicked
            entry[1] += 1
    return {key: Rate(c, n) for key, (c, n) in counts.items()}


def ctr_by_query_document(impressions: Iterable[Impression]) -> dict[tuple[str, str], Rate]:
    """Raw CTR per (query, docno), whatever the rank: clicks / impressions showing d."""
    out: dict[tuple[str, str], list[int]] = {}
    for (query, docno, _), rate in ctr_by_document(impressions).items():
        entry = out.setdefault((query, docno), [0, 0])
        entry[0] += rate.clicks
        entry[1] += rate.shown
    return {key: Rate(c, n) for key, (c, n) in out.items()}


# --------------------------------------------------------------------------- click deviation


def click_deviation(impressions: Sequence[Impression]) -> dict[tuple[str, str, int], float]:
    """CD(d, p) = O(d, p) - E(p) for every (query, docno, rank) shown.

    O(d, p) is the observed click frequency of document d at rank p over the impressions of a
    query, E(p) the expected click frequency at rank p over all queries (:func:`ctr_by_rank`).
    Agichtein, Brill & Dumais, "Improving web search ranking by incorporating user behavior
    information", SIGIR 2006; Agichtein, Brill, Dumais & Ragno, SIGIR 2006 (preferences).
    (The course notes gloss p as the query; the papers' p is the rank position.)
    """
    expected = {rank: rate.value for rank, rate in ctr_by_rank(impressions).items()}
    return {
        key: rate.value - expected[key[2]] for key, rate in ctr_by_document(impressions).items()
    }


def document_deviation(impressions: Sequence[Impression]) -> dict[tuple[str, str], float]:
    """CD per (query, docno) over all the ranks d was shown at, weighted by impressions:

    CD(d) = sum_p n(d, p) CD(d, p) / sum_p n(d, p) = (clicks on d - sum_p n(d, p) E(p)) / n(d),

    n(d, p) the impressions showing d at rank p: observed clicks minus the clicks expected
    where d was shown, per impression.
    """
    expected = {rank: rate.value for rank, rate in ctr_by_rank(impressions).items()}
    totals: dict[tuple[str, str], list[float]] = {}
    for (query, docno, rank), rate in ctr_by_document(impressions).items():
        entry = totals.setdefault((query, docno), [0.0, 0.0])
        entry[0] += rate.clicks - rate.shown * expected[rank]
        entry[1] += rate.shown
    return {key: excess / shown for key, (excess, shown) in totals.items()}


def deviating_clicks(
    deviations: Mapping[tuple[str, str, int], float], threshold: float
) -> set[tuple[str, str, int]]:
    """The (query, docno, rank) whose click deviation exceeds ``threshold``: clicks more
    frequent than the rank alone explains (CD(d, p) > threshold)."""
    return {key for key, cd in deviations.items() if cd > threshold}


def filter_clicks(
    impressions: Iterable[Impression], keep: set[tuple[str, str, int]]
) -> list[Impression]:
    """The impressions with only the clicks whose (query, docno, rank) is in ``keep``."""
    out = []
    for imp in impressions:
        clicks = tuple(c for c in imp.clicks if (imp.query, c.docno, imp.rank_of(c.docno)) in keep)
        out.append(replace(imp, clicks=clicks))
    return out


# --------------------------------------------------------------------------- preferences


def last_click(impression: Impression) -> str | None:
    """The document clicked last (the latest click time; without times, the last click
    listed), None without clicks."""
    if not impression.clicks:
        return None
    if all(c.time is not None for c in impression.clicks):
        return max(enumerate(impression.clicks), key=lambda ic: (ic[1].time, ic[0]))[1].docno
    return impression.clicks[-1].docno


def impression_preferences(impression: Impression, strategy: str) -> list[tuple[str, str]]:
    """Pairs (preferred, other) one impression states (Joachims' strategies):

    * ``skip-above`` (Click > Skip Above, Joachims KDD 2002): a clicked document at rank i is
      preferred to every unclicked document at a rank j < i;
    * ``skip-next`` (Click > No-Click Next, Joachims, Granka, Pan, Hembrooke & Gay, SIGIR
      2005): a clicked document at rank i is preferred to the document at rank i + 1 when that
      one is unclicked;
    * ``last-click-skip-above`` (Last Click > Skip Above, SIGIR 2005): only the last clicked
      document is preferred to every unclicked document above it.
    """
    clicked = impression.clicked
    results = impression.results
    pairs: list[tuple[str, str]] = []
    if strategy in (SKIP_ABOVE, LAST_CLICK_SKIP_ABOVE):
        sources = clicked if strategy == SKIP_ABOVE else {last_click(impression)} - {None}
        for i, docno in enumerate(results):
            if docno in sources:
                pairs.extend((docno, above) for above in results[:i] if above not in clicked)
    elif strategy == SKIP_NEXT:
        for i, docno in enumerate(results[:-1]):
            if docno in clicked and results[i + 1] not in clicked:
                pairs.append((docno, results[i + 1]))
    else:
        raise ValueError(f"unknown preference strategy {strategy!r}; expected {STRATEGIES}")
    return pairs


@dataclass(frozen=True)
class Preference:
    """``preferred`` > ``other`` for ``query``: stated by ``support`` impressions, the opposite
    by ``against``."""

    query: str
    preferred: str
    other: str
    support: int
    against: int


def aggregate_preferences(
    impressions: Iterable[Impression], strategy: str = SKIP_ABOVE, *, min_support: int = 1
) -> list[Preference]:
    """Preferences summed over impressions, per query and document pair.

    For each unordered pair {a, b} of a query, n(a > b) and n(b > a) count the impressions that
    state each direction.  The majority direction is kept when it has at least ``min_support``
    (m) impressions and strictly more than the other: n(a > b) >= m and n(a > b) > n(b > a).
    Sorted by query, then preferred and other docno.
    """
    if min_support < 1:
        raise ValueError(f"min_support must be at least 1, got {min_support}")
    counts: dict[tuple[str, str, str], int] = {}
    for imp in impressions:
        for pair in set(impression_preferences(imp, strategy)):
            key = (imp.query, *pair)
            counts[key] = counts.get(key, 0) + 1
    kept = []
    for (query, a, b), n in counts.items():
        against = counts.get((query, b, a), 0)
        if n >= min_support and n > against:
            kept.append(Preference(query, a, b, n, against))
    return sorted(kept, key=lambda p: (p.query, p.preferred, p.other))


def prefs_lines(preferences: Iterable[Preference]) -> list[PrefsLine]:
    """trec_eval ``-R prefs`` lines ``(qid, jg, jsg, docno, rel)``: each preference is its own
    judgment group (``p1``, ``p2``, … per query) with one sub-group where the preferred document
    has rel 1 and the other rel 0, so aggregated preferences never contradict one another
    inside a group (trec_eval refuses cycles within a group)."""
    lines: list[PrefsLine] = []
    numbers: dict[str, int] = {}
    for p in preferences:
        n = numbers[p.query] = numbers.get(p.query, 0) + 1
        lines.append(PrefsLine(p.query, f"p{n}", "1", p.preferred, 1.0))
        lines.append(PrefsLine(p.query, f"p{n}", "1", p.other, 0.0))
    return lines


def prefs_text(lines: Iterable[PrefsLine]) -> str:
    """The lines as a trec_eval prefs file: ``qid jg jsg docno rel`` per line."""
    return "".join(f"{p.qid} {p.jg} {p.jsg} {p.docno} {p.rel:g}\n" for p in lines)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class PairAgreement:
    """Click preferences on pairs the assessors graded differently: ``consistent`` of
    ``comparable`` prefer the higher grade; ``share`` = consistent / comparable (NaN if none)."""

    consistent: int
    comparable: int

    @property
    def share(self) -> float:
        return self.consistent / self.comparable if self.comparable else float("nan")


def preference_agreement(
    preferences: Iterable[Preference], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, PairAgreement]:
    """Per query: of the click preferences a > b where both documents are judged with
    different grades, how many have grade(a) > grade(b).  Pairs with an unjudged document or
    equal grades say nothing and are not counted.  Queries are qrels topic ids."""
    counts: dict[str, list[int]] = {}
    for p in preferences:
        grades = qrels.get(p.query, {})
        if p.preferred in grades and p.other in grades:
            a, b = grades[p.preferred], grades[p.other]
            if a != b:
                entry = counts.setdefault(p.query, [0, 0])
                entry[0] += a > b
                entry[1] += 1
    return {query: PairAgreement(c, n) for query, (c, n) in sorted(counts.items())}


def pooled_agreement(per_query: Mapping[str, PairAgreement]) -> PairAgreement:
    """All queries' pairs together: sum of consistent / sum of comparable."""
    return PairAgreement(
        sum(a.consistent for a in per_query.values()),
        sum(a.comparable for a in per_query.values()),
    )


def agreement_interval(
    per_query: Mapping[str, PairAgreement],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the pooled share, resampling queries (topics) with
    replacement and keeping all the pairs of each (the topic-clustered bootstrap of
    :func:`workbench.agreement.bootstrap_interval`); (NaN, NaN) without any pair."""
    rows = [a for a in per_query.values() if a.comparable]
    if not rows:
        return float("nan"), float("nan")

    def share(drawn: list[int]) -> float:
        return pooled_agreement({str(k): rows[i] for k, i in enumerate(drawn)}).share

    return bootstrap_interval(
        share, len(rows), n_resamples=n_resamples, confidence=confidence, seed=seed
    )
