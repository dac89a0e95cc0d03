"""Inter-assessor agreement of a campaign, from the current judgements.

Every statistic is computed by `workbench.agreement` (the one home of the formulas); this
module only builds the rating data from the store: one item = one (topic, document) judged by
at least one assessor; one judge = one assessor. Labels are the grades (graded) or the grades
binarised at the campaign's relevance level (grade >= level counts as relevant). "Cannot
judge" rows carry no grade and are left out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import agreement as coefficients
from workbench.services.current_judgements import counted_judgements
from workbench.services.pools import qid_key
from workbench.store.models import Campaign, User

Key = tuple[str, str]  # (qid, docno)
MIN_BOOTSTRAP_TOPICS = 5


@dataclass(frozen=True)
class Ratings:
    """The current grades of a campaign: items x assessors, NaN where an assessor did not judge."""

    assessors: list[str]  # usernames, in user-id order
    assessor_ids: list[int]
    items: list[Key]  # (qid, docno), sorted
    grades: np.ndarray  # float, shape (len(items), len(assessors))
    relevance_level: int

    def labels(self, graded: bool) -> np.ndarray:
        """Grades as they are (graded) or binarised at the relevance level, NaN kept."""
        if graded:
            return self.grades
        return coefficients.binarise(self.grades, self.relevance_level)

    def topics(self) -> list[str]:
        """The topics with ratings, numeric ids numerically (`pools.qid_key`)."""
        return sorted({qid for qid, _ in self.items}, key=qid_key)

    def rows_of_topic(self, qid: str) -> np.ndarray:
        return np.array([i for i, (q, _) in enumerate(self.items) if q == qid], dtype=int)


def load_ratings(session: Session, campaign: Campaign) -> Ratings:
    """The items x assessors grade matrix of a campaign's current judgements."""
    by_key: dict[Key, dict[int, int]] = defaultdict(dict)
    for judgement in counted_judgements(session, campaign):
        if judgement.grade is not None:
            by_key[(judgement.qid, judgement.docno)][judgement.user_id] = judgement.grade
    user_ids = sorted({uid for grades in by_key.values() for uid in grades})
    names = dict(session.execute(select(User.id, User.username).where(User.id.in_(user_ids))).all())
    items = sorted(by_key)
    grades = np.full((len(items), len(user_ids)), np.nan)
    column = {uid: j for j, uid in enumerate(user_ids)}
    for i, key in enumerate(items):
        for uid, grade in by_key[key].items():
            grades[i, column[uid]] = grade
    return Ratings(
        assessors=[names[uid] for uid in user_ids],
        assessor_ids=user_ids,
        items=items,
        grades=grades,
        relevance_level=campaign.relevance_level,
    )


@dataclass
class PairAgreement:
    """Two label vectors over the items both judged, and the statistics of their agreement."""

    first: str
    second: str
    n_items: int
    percent_agreement: float
    kappa: float
    kappa_low: float  # analytic (large-sample) 95 % interval
    kappa_high: float
    bootstrap_low: float  # topic-clustered bootstrap 95 % interval
    bootstrap_high: float
    reading: str  # the course notes' reading of the kappa
    landis_koch: str  # Landis & Koch's (1977) reading of the kappa
    scotts_pi: float
    linear_kappa: float | None = None  # graded only
    quadratic_kappa: float | None = None
    positive_agreement: float | None = None  # binary only
    negative_agreement: float | None = None
    labels: list[int] = field(default_factory=list)
    confusion: list[list[int]] = field(default_factory=list)  # rows: first, columns: second


@dataclass
class GroupAgreement:
    """Agreement of all assessors over a set of items (a topic, or the whole campaign)."""

    name: str
    n_items: int
    n_judges: int
    n_multiply_judged: int
    percent_agreement: float  # over the pairs of judges of each multiply judged item
    fleiss_kappa: float
    krippendorff_alpha: float
    reading: str  # the course notes' reading of Fleiss' kappa
    landis_koch: str  # Landis & Koch's (1977) reading of Fleiss' kappa
    bootstrap_low: float = math.nan  # topic-bootstrap 95 % interval of Fleiss' kappa
    bootstrap_high: float = math.nan  # (overall only: a topic cannot resample topics)
    judges: list[str] = field(default_factory=list)  # per topic: who judged it
    cohen_kappa: float | None = None  # per topic with exactly two judges: their Cohen's kappa


@dataclass
class AgreementReport:
    """Agreement of a campaign: overall, per topic, per pair, per assessor against the others."""

    campaign: str
    graded: bool
    relevance_level: int
    assessors: list[str]
    overall: GroupAgreement
    per_topic: list[GroupAgreement]
    per_pair: list[PairAgreement]
    per_assessor: list[PairAgreement]  # second = "others"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def _repr_html_(self) -> str:
        """Jupyter's display: the report's agreement tables (`agreement_tables`) as HTML."""
        from workbench.services.agreement_tables import agreement_tables
        from workbench.tabular import to_html

        return "".join(to_html(table) for table in agreement_tables(self))


def group_agreement(name: str, labels: np.ndarray, *, level: coefficients.Level) -> GroupAgreement:
    """Fleiss' kappa over items with two or more judges, Krippendorff's alpha over all."""
    judged = (~np.isnan(labels)).sum(axis=1)
    multiple = labels[judged >= 2]
    kappa = alpha = math.nan
    if len(multiple):
        with np.errstate(all="ignore"):
            kappa = _safe(lambda: coefficients.fleiss_kappa(multiple))
            alpha = _safe(lambda: coefficients.krippendorff_alpha(multiple, level=level))
    return GroupAgreement(
        name=name,
        n_items=len(labels),
        n_judges=int((~np.isnan(labels)).any(axis=0).sum()),
        n_multiply_judged=len(multiple),
        percent_agreement=(
            coefficients.pairwise_percent_agreement(multiple) if len(multiple) else math.nan
        ),
        fleiss_kappa=kappa,
        krippendorff_alpha=alpha,
        reading=coefficients.kappa_reading(kappa),
        landis_koch=coefficients.landis_koch_reading(kappa),
    )


def topic_agreement(
    qid: str,
    ratings: Ratings,
    labels: np.ndarray,
    *,
    level: coefficients.Level,
    categories: Sequence[int],
) -> GroupAgreement:
    """`group_agreement` of one topic, and where exactly two assessors judged it their
    (unweighted) Cohen's kappa over the documents both judged."""
    rows = labels[ratings.rows_of_topic(qid)]
    result = group_agreement(qid, rows, level=level)
    judged = np.flatnonzero((~np.isnan(rows)).any(axis=0))
    result.judges = [ratings.assessors[j] for j in judged]
    if len(judged) == 2:
        a, b = rows[:, judged[0]], rows[:, judged[1]]
        both = ~np.isnan(a) & ~np.isnan(b)
        if both.any():
            first, second = a[both].astype(int), b[both].astype(int)
            with np.errstate(all="ignore"):
                result.cohen_kappa = _safe(
                    lambda: coefficients.cohen_kappa(first, second, labels=list(categories))
                )
    return result


def _safe(compute: Callable[[], float]) -> float:
    """A statistic that is undefined on this data (one category only, ...) is NaN."""
    try:
        return float(compute())
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return math.nan


def pair_agreement(
    first: str,
    second: str,
    a: np.ndarray,
    b: np.ndarray,
    topics: Sequence[str],
    *,
    graded: bool,
    categories: Sequence[int],
    n_bootstrap: int = 1000,
    seed: int = 0,
    min_topics: int = MIN_BOOTSTRAP_TOPICS,
) -> PairAgreement:
    """Agreement of two aligned label vectors; `topics[i]` is the topic of item i.

    The bootstrap interval resamples topics (clusters) with all their items; with fewer than
    `min_topics` topics it is NaN (a percentile bootstrap over so few clusters is degenerate).
    """
    a_int, b_int = a.astype(int), b.astype(int)
    labels = list(categories)
    kappa = _safe(lambda: coefficients.cohen_kappa(a_int, b_int, labels=labels))
    interval = _kappa_interval(a_int, b_int, labels)
    boot_low, boot_high = math.nan, math.nan
    if not math.isnan(kappa):
        boot_low, boot_high = cohen_topic_bootstrap(
            a_int, b_int, topics, labels, n_resamples=n_bootstrap, seed=seed, min_topics=min_topics
        )
    matrix = coefficients.confusion_matrix(a_int, b_int, labels=labels)
    result = PairAgreement(
        first=first,
        second=second,
        n_items=len(a_int),
        percent_agreement=_safe(lambda: coefficients.percent_agreement(a_int, b_int)),
        kappa=kappa,
        kappa_low=interval[0],
        kappa_high=interval[1],
        bootstrap_low=boot_low,
        bootstrap_high=boot_high,
        reading=coefficients.kappa_reading(kappa),
        landis_koch=coefficients.landis_koch_reading(kappa),
        scotts_pi=_safe(lambda: coefficients.scotts_pi(a_int, b_int)),
        labels=labels,
        confusion=np.asarray(matrix, dtype=int).tolist(),
    )
    if graded:
        result.linear_kappa = _safe(
            lambda: coefficients.cohen_kappa(a_int, b_int, weights="linear", labels=labels)
        )
        result.quadratic_kappa = _safe(
            lambda: coefficients.cohen_kappa(a_int, b_int, weights="quadratic", labels=labels)
        )
    else:
        positive, negative = coefficients.specific_agreement(a_int, b_int)
        result.positive_agreement, result.negative_agreement = float(positive), float(negative)
    return result


def _kappa_interval(a: np.ndarray, b: np.ndarray, labels: list[int]) -> tuple[float, float]:
    try:
        interval = coefficients.cohen_kappa_interval(a, b, labels=labels)
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return math.nan, math.nan
    return float(interval.low), float(interval.high)


def cohen_topic_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    topics: Sequence[str],
    labels: Sequence[int],
    *,
    n_resamples: int,
    seed: int,
    min_topics: int = MIN_BOOTSTRAP_TOPICS,
) -> tuple[float, float]:
    """95 % percentile interval of Cohen's kappa of a and b resampling topics with all their
    items (`agreement.bootstrap_interval`'s draws); `topics[i]` is the topic of item i. Each
    resample's kappa from the topics' confusion matrices (`agreement.cohen_kappa_of_draws`).
    NaN with fewer than `min_topics` topics (a bootstrap over so few clusters is
    degenerate)."""
    clusters = _topic_clusters(topics)
    if len(clusters) < max(min_topics, 2) or n_resamples < 1:
        return math.nan, math.nan
    draws = coefficients.cluster_draws(len(clusters), n_resamples, seed)
    return coefficients.percentile_interval(
        coefficients.cohen_kappa_of_draws(a, b, clusters, draws, labels=list(labels))
    )


def fleiss_topic_bootstrap(
    labels: np.ndarray,
    topics: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    min_topics: int = MIN_BOOTSTRAP_TOPICS,
) -> tuple[float, float]:
    """`cohen_topic_bootstrap`'s interval for Fleiss' kappa over `labels` (items x judges),
    with every resample's kappa from the topics' sums (`agreement.fleiss_kappa_of_draws`)."""
    clusters = _topic_clusters(topics)
    if len(clusters) < max(min_topics, 2) or n_resamples < 1:
        return math.nan, math.nan
    draws = coefficients.cluster_draws(len(clusters), n_resamples, seed)
    return coefficients.percentile_interval(
        coefficients.fleiss_kappa_of_draws(labels, clusters, draws)
    )


def _topic_clusters(topics: Sequence[str]) -> list[np.ndarray]:
    """The item rows of each topic, in the order the topics first appear."""
    by_topic: dict[str, list[int]] = defaultdict(list)
    for i, qid in enumerate(topics):
        by_topic[qid].append(i)
    return [np.array(rows) for rows in by_topic.values()]


def agreement_report(
    session: Session,
    campaign: Campaign,
    *,
    graded: bool = False,
    n_bootstrap: int = 1000,
    seed: int = 0,
    min_topics: int = MIN_BOOTSTRAP_TOPICS,
) -> AgreementReport:
    """Agreement on binary labels (default) or grades: overall, per topic, pair, assessor."""
    ratings = load_ratings(session, campaign)
    labels = ratings.labels(graded)
    level: coefficients.Level = "ordinal" if graded else "nominal"
    scale = [g.value for g in campaign.grades]
    if graded:
        observed = {int(v) for v in labels[~np.isnan(labels)]}
        categories = sorted(set(scale) | observed)
    else:
        categories = [0, 1]
    item_topics = [qid for qid, _ in ratings.items]

    per_topic = [
        topic_agreement(qid, ratings, labels, level=level, categories=categories)
        for qid in ratings.topics()
    ]
    present = ~np.isnan(labels)
    graded_by = [np.flatnonzero(present[:, j]) for j in range(len(ratings.assessors))]

    def shared(j: int, k: int) -> np.ndarray:
        """The items (ascending) graded by both judges j and k."""
        return graded_by[j][present[graded_by[j], k]]

    per_pair = []
    for j, k in combinations(range(len(ratings.assessors)), 2):
        both = shared(j, k)
        if not both.size:
            continue
        per_pair.append(
            pair_agreement(
                ratings.assessors[j],
                ratings.assessors[k],
                labels[both, j],
                labels[both, k],
                [item_topics[i] for i in both],
                graded=graded,
                categories=categories,
                n_bootstrap=n_bootstrap,
                seed=seed,
                min_topics=min_topics,
            )
        )
    per_assessor = []
    for j, name in enumerate(ratings.assessors):
        mine: list[np.ndarray] = []
        others: list[np.ndarray] = []
        topics: list[str] = []
        for k in range(len(ratings.assessors)):
            if k == j:
                continue
            both = shared(j, k)
            mine.append(labels[both, j])
            others.append(labels[both, k])
            topics.extend(item_topics[i] for i in both)
        if not topics:
            continue
        per_assessor.append(
            pair_agreement(
                name,
                "others",
                np.concatenate(mine),
                np.concatenate(others),
                topics,
                graded=graded,
                categories=categories,
                n_bootstrap=n_bootstrap,
                seed=seed,
                min_topics=min_topics,
            )
        )
    overall = group_agreement("all", labels, level=level)
    if not math.isnan(overall.fleiss_kappa):
        overall.bootstrap_low, overall.bootstrap_high = fleiss_topic_bootstrap(
            labels, item_topics, n_resamples=n_bootstrap, seed=seed, min_topics=min_topics
        )
    return AgreementReport(
        campaign=campaign.name,
        graded=graded,
        relevance_level=ratings.relevance_level,
        assessors=ratings.assessors,
        overall=overall,
        per_topic=per_topic,
        per_pair=per_pair,
        per_assessor=per_assessor,
    )
