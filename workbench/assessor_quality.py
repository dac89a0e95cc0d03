"""Assessor quality while a campaign runs: gold accuracy, speed, grade use, agreement, drift and
the outlier rules (pure: numpy and scipy only).

Inputs are plain values: `Event`s of the judgement log (revisions included, in log order) and
the gold grades. The current judgement of an (assessor, topic, document) key is its last event.

- Gold accuracy: the share of gold documents given exactly their gold grade, with the Wilson
  (1927) score interval; and Cohen's weighted kappa against the gold grades (Cohen 1968; the
  scale's values as categories, linear weights by default) with the Fleiss, Cohen & Everitt
  (1969) interval (`agreement.cohen_kappa_interval`).
- Speed: a document's time is the sum of the idle-aware time of every event of it (the
  judging page stops its clock after a minute without input); judgements per hour are the
  documents judged per hour of that time.
- Agreement with the others: every (own grade, other judge's grade) pair on the documents
  the assessor shares with other judges, as one two-rater table (percent agreement, weighted
  kappa).
- Drift: the same per day or per session (events less than SESSION_GAP apart).
- Outliers (`outlier_reasons`): our own rules, each with its reason; see OutlierRules.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from workbench import agreement
from workbench.lazy import stats
from workbench.relevance import is_relevant

SESSION_GAP = dt.timedelta(minutes=30)
PERIODS = ("day", "session")


@dataclass(frozen=True)
class Event:
    """One judgement event: grade None is 'cannot judge'; time_ms is idle-aware."""

    assessor: str
    qid: str
    docno: str
    grade: int | None
    time_ms: int
    at: dt.datetime


@dataclass(frozen=True)
class Proportion:
    """successes / n with its Wilson score interval at `confidence`."""

    successes: int
    n: int
    value: float
    low: float
    high: float
    confidence: float


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Proportion:
    """Wilson (1927): (p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), p = k/n,
    z the (1 + confidence)/2 normal quantile; NaN for n = 0."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in 0..n; got {successes} of {n}")
    if n == 0:
        nan = math.nan
        return Proportion(0, 0, nan, nan, nan, confidence)
    z = float(stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return Proportion(
        successes, n, p, max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale),
        confidence,
    )  # fmt: skip


@dataclass(frozen=True)
class GoldAccuracy:
    """An assessor against gold: exact-grade accuracy, relevant/not agreement at the
    campaign's level, and weighted kappa (None when undefined: one category only)."""

    n: int
    accuracy: Proportion
    relevance_accuracy: Proportion
    kappa: agreement.KappaEstimate | None


def gold_accuracy(
    given: Sequence[int],
    gold: Sequence[int],
    *,
    scale: Sequence[int],
    level: int,
    weights: agreement.Weights = "linear",
    confidence: float = 0.95,
) -> GoldAccuracy:
    """Accuracy and weighted kappa of `given` grades against the `gold` grades of the same
    documents (aligned; 'cannot judge' left out by the caller). `scale`: the campaign's grade
    values, the categories of kappa."""
    if len(given) != len(gold):
        raise ValueError(f"{len(given)} grades against {len(gold)} gold grades")
    n = len(given)
    exact = sum(int(a == b) for a, b in zip(given, gold, strict=True))
    same_side = sum(
        int(is_relevant(a, level) == is_relevant(b, level))
        for a, b in zip(given, gold, strict=True)
    )
    kappa = None
    if n:
        labels = sorted(set(scale) | set(given) | set(gold))
        estimate = agreement.cohen_kappa_interval(
            given, gold, weights=weights, labels=labels, confidence=confidence
        )
        kappa = None if math.isnan(estimate.kappa) else estimate
    return GoldAccuracy(
        n,
        wilson_interval(exact, n, confidence=confidence),
        wilson_interval(same_side, n, confidence=confidence),
        kappa,
    )


def two_proportion_test(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value of the pooled two-proportion z-test of k1/n1 = k2/n2:
    z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (k1 + k2)/(n1 + n2); 1 when undefined."""
    if min(n1, n2) == 0:
        return 1.0
    pooled = (k1 + k2) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance == 0:
        return 1.0
    z = (k1 / n1 - k2 / n2) / math.sqrt(variance)
    return float(2 * stats.norm.sf(abs(z)))


# ---------------------------------------------------------------- per assessor


def current(events: Iterable[Event]) -> dict[tuple[str, str, str], Event]:
    """(assessor, qid, docno) -> the last event of the key (its current judgement)."""
    latest: dict[tuple[str, str, str], Event] = {}
    for e in events:
        latest[e.assessor, e.qid, e.docno] = e
    return latest


def document_seconds(events: Iterable[Event]) -> dict[tuple[str, str, str], float]:
    """(assessor, qid, docno) -> seconds spent on it over all its events."""
    spent: dict[tuple[str, str, str], float] = defaultdict(float)
    for e in events:
        spent[e.assessor, e.qid, e.docno] += e.time_ms / 1000
    return dict(spent)


def periods(events: Sequence[Event], by: str) -> dict[tuple[str, str, str], str]:
    """(assessor, qid, docno) -> the period of its current judgement: the UTC day
    (YYYY-MM-DD) or the assessor's session ('session 1', 2, ... : events less than
    SESSION_GAP apart are one session)."""
    if by not in PERIODS:
        raise ValueError(f"unknown period {by!r}; expected one of {', '.join(PERIODS)}")
    found: dict[tuple[str, str, str], str] = {}
    if by == "day":
        for e in events:
            found[e.assessor, e.qid, e.docno] = e.at.date().isoformat()
        return found
    by_assessor: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_assessor[e.assessor].append(e)
    for own in by_assessor.values():
        number, last = 0, None
        for e in sorted(own, key=lambda e: e.at):
            if last is None or e.at - last > SESSION_GAP:
                number += 1
            last = e.at
            found[e.assessor, e.qid, e.docno] = f"session {number}"
    return found


def pairs_with_others(
    assessor: str,
    grades: Mapping[tuple[str, str, str], int],
    keys: Iterable[tuple[str, str]] | None = None,
) -> tuple[list[int], list[int]]:
    """(own grades, other judges' grades): one pair per other judge of each document the
    assessor graded (of `keys` when given)."""
    by_document: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for (who, qid, docno), grade in grades.items():
        by_document[qid, docno][who] = grade
    wanted = None if keys is None else set(keys)
    mine: list[int] = []
    theirs: list[int] = []
    for key, judges in sorted(by_document.items()):
        if assessor not in judges or (wanted is not None and key not in wanted):
            continue
        for who, grade in sorted(judges.items()):
            if who != assessor:
                mine.append(judges[assessor])
                theirs.append(grade)
    return mine, theirs


@dataclass(frozen=True)
class Agreement:
    """Agreement of own grades with the other judges' on shared documents."""

    pairs: int
    percent: float
    kappa: float


def agreement_of(
    mine: Sequence[int], theirs: Sequence[int], *, scale: Sequence[int], weights: agreement.Weights
) -> Agreement:
    if not mine:
        return Agreement(0, math.nan, math.nan)
    labels = sorted(set(scale) | set(mine) | set(theirs))
    return Agreement(
        len(mine),
        agreement.percent_agreement(mine, theirs),
        agreement.cohen_kappa(mine, theirs, weights=weights, labels=labels),
    )


def median(values: Iterable[float]) -> float:
    found = list(values)
    return float(np.median(found)) if found else math.nan


# ---------------------------------------------------------------- outliers


@dataclass(frozen=True)
class OutlierRules:
    """When an assessor is flagged (our own defaults, docs/methods.md): at least
    `min_judgements` judged; a share of 'not relevant' that differs from the other judges'
    on the same topics by at least `share_difference` with p < `p_value` (two-proportion
    z-test); a median time per document under `fast_seconds` or under `fast_ratio` of the
    others' median, or over `slow_ratio` times it; weighted kappa with the others under
    `low_kappa` while the others' median is at least `low_kappa` + `kappa_gap`; a gold
    accuracy whose interval lies wholly under the others' pooled gold accuracy (at least
    `min_gold` gold documents); a share of relevant that moves by at least
    `share_difference` between the first and the last period (p < `p_value`)."""

    min_judgements: int = 20
    share_difference: float = 0.2
    p_value: float = 0.01
    fast_seconds: float = 3.0
    fast_ratio: float = 1 / 3
    slow_ratio: float = 3.0
    low_kappa: float = 0.2
    kappa_gap: float = 0.2
    min_gold: int = 10


@dataclass(frozen=True)
class Profile:
    """What the outlier rules look at for one assessor (None / NaN: not measured)."""

    assessor: str
    judged: int
    not_relevant: int  # of the graded, below the relevance level
    graded: int
    others_not_relevant: int  # the other judges, on the same topics
    others_graded: int
    median_seconds: float
    others_median_seconds: float
    kappa: float
    others_median_kappa: float
    gold: Proportion | None
    others_gold: Proportion | None
    first_period: tuple[str, int, int] | None = None  # (period, relevant, graded)
    last_period: tuple[str, int, int] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def _percent(value: float) -> str:
    return f"{100 * value:.0f} %"


def outlier_reasons(p: Profile, rules: OutlierRules = OutlierRules()) -> list[str]:
    """The reasons to flag an assessor, each a sentence with the figures (none: not an
    outlier, or too few judgements to tell)."""
    if p.judged < rules.min_judgements:
        return []
    reasons = []
    if p.graded and p.others_graded:
        mine, others = p.not_relevant / p.graded, p.others_not_relevant / p.others_graded
        test = two_proportion_test(p.not_relevant, p.graded, p.others_not_relevant, p.others_graded)
        if abs(mine - others) >= rules.share_difference and test < rules.p_value:
            reasons.append(
                f"{_percent(mine)} not relevant against {_percent(others)} for the others on "
                "the same topics"
            )
    if not math.isnan(p.median_seconds):
        others = p.others_median_seconds
        slow = not math.isnan(others) and p.median_seconds > rules.slow_ratio * others
        fast = p.median_seconds < rules.fast_seconds or (
            not math.isnan(others) and p.median_seconds < rules.fast_ratio * others
        )
        if fast or slow:
            against = "" if math.isnan(others) else f" against {others:.0f} s for the others"
            reasons.append(f"median {p.median_seconds:.0f} s per document{against}")
    if (
        not math.isnan(p.kappa)
        and not math.isnan(p.others_median_kappa)
        and p.kappa < rules.low_kappa
        and p.others_median_kappa >= rules.low_kappa + rules.kappa_gap
    ):
        reasons.append(
            f"kappa {p.kappa:.2f} with the other judges against a median of "
            f"{p.others_median_kappa:.2f} for the others"
        )
    if (
        p.gold is not None
        and p.others_gold is not None
        and p.gold.n >= rules.min_gold
        and p.others_gold.n >= rules.min_gold
        and p.gold.high < p.others_gold.value
    ):
        reasons.append(
            f"gold accuracy {_percent(p.gold.value)} ({_percent(p.gold.confidence)} interval "
            f"{100 * p.gold.low:.0f}-{_percent(p.gold.high)}) against "
            f"{_percent(p.others_gold.value)} for the others"
        )
    if p.first_period and p.last_period and p.first_period[0] != p.last_period[0]:
        (a, ka, na), (b, kb, nb) = p.first_period, p.last_period
        if na and nb:
            moved = abs(ka / na - kb / nb)
            if (
                moved >= rules.share_difference
                and two_proportion_test(ka, na, kb, nb) < rules.p_value
            ):
                reasons.append(
                    f"relevant {_percent(ka / na)} in {a}, {_percent(kb / nb)} in {b} (drift)"
                )
    return reasons
