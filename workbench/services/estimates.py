"""Estimates from a sampled pool: every run's MAP by statAP and xinfAP with intervals, and the
relevant documents each topic's judging missed (`workbench.estimators`).

A pool is a sample when it was built by a sampling design: `stratified` (a simple random sample
per stratum; one stratum: uniform), `prior` (Poisson sampling by the AP prior), or adaptive with
a reserved sample (the documents the strategy chose, in full, and its unchosen documents,
through the sample's part of them: `services.adaptive_pools`). Other pools judge every pooled
document, or (adaptive without a sample) leave out documents that are no sample: both are
refused with the reason. The labels are those of the qrels named (final by default): a sampled
document without a label is refused, as a sample with holes is no longer the design's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import estimators, pooling
from workbench.lazy import stats as sp_stats
from workbench.relevance import is_relevant
from workbench.services import adaptive_pools, evaluation_inputs, pools
from workbench.services.errors import ServiceError
from workbench.store.models import AdaptiveTopic, Campaign, Pool, PoolEntry

DEFAULT_REPLICATES = 200


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class RunEstimate:
    """One run's MAP over the pool's topics: each estimator with its interval, and the MAP of
    the judged documents alone (unjudged non-relevant), biased under adaptive judging."""

    tag: str
    statap: Interval
    xinfap: Interval | None  # None for Poisson designs (prior)
    judged_map: float


@dataclass(frozen=True)
class TopicEstimate:
    """One topic: its pool, what was judged, and the relevant documents left unjudged."""

    qid: str
    pool_size: int
    judged: int
    judged_relevant: int
    relevant_estimate: float  # R-hat (Horvitz-Thompson)
    left: estimators.CountInterval | None  # None for Poisson designs


@dataclass(frozen=True)
class PoolEstimates:
    campaign: str
    pool: int  # the pool's number in the campaign
    design: str
    qrels: str
    confidence: float
    replicates: int
    seed: int
    runs: tuple[RunEstimate, ...]
    topics: tuple[TopicEstimate, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _entries(session: Session, pool: Pool) -> dict[str, list[PoolEntry]]:
    rows = session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id))
    topics: dict[str, list[PoolEntry]] = {}
    for row in rows:
        topics.setdefault(row.qid, []).append(row)
    return {qid: sorted(rows, key=lambda e: e.docno) for qid, rows in topics.items()}


def _labels(
    qid: str, rows: Sequence[PoolEntry], judged: np.ndarray, qrels: Mapping, level: int
) -> np.ndarray:
    """Each judged document's relevance; a judged document the qrels lack is refused."""
    graded = qrels.get(qid, {})
    missing = [
        r.docno for r, j in zip(rows, judged, strict=True) if j and graded.get(r.docno, -1) < 0
    ]
    if missing:
        raise ServiceError(
            f"topic {qid}: {len(missing)} sampled document(s) have no label in these qrels "
            f"(e.g. {missing[0]!r}); the sample is incomplete, so no estimate is made"
        )
    return np.array([j and is_relevant(graded.get(r.docno, 0), level)
                     for r, j in zip(rows, judged, strict=True)])  # fmt: skip


def _design(
    session: Session, pool: Pool, qrels: Mapping, level: int
) -> tuple[str, dict[str, estimators.SampledTopic]]:
    """The pool's design name and each topic's sample, or a ServiceError saying why not."""
    hybrid = next((k for k in ("machine_sample", "machine_review") if k in (pool.params or {})),
                  None)  # fmt: skip
    if hybrid is not None:
        what = "human sample" if hybrid == "machine_sample" else "disagreement review"
        raise ServiceError(
            f"pool {pool.number} is a machine judge's {what}, drawn from another pool's "
            "documents: it is no sample of the runs' pool by a pooling design, so nothing here "
            "estimates MAP from it (`workbench machine report` estimates the machine's error "
            "from a human sample)"
        )
    settings = adaptive_pools.settings_of(pool)
    entries = _entries(session, pool)
    topics: dict[str, estimators.SampledTopic] = {}
    if settings is not None:
        if not settings.sample_share:
            raise ServiceError(
                f"pool {pool.number} was judged adaptively without a reserved sample: what the "
                "strategy left unjudged is no sample, so nothing estimates it (build adaptive "
                "pools with a sample share to have estimates)"
            )
        choices = {
            t.qid: set(t.choices)
            for t in session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id))
        }
        for qid, rows in entries.items():
            chosen = np.array([r.docno in choices.get(qid, ()) for r in rows])
            reserved = np.array([r.sampled and r.build == 0 for r in rows])
            judged = chosen | reserved
            labels = _labels(qid, rows, judged, qrels, level)
            topics[qid] = estimators.srs_topic([r.docno for r in rows], (~chosen).astype(int),
                                               judged, labels)  # fmt: skip
        return "adaptive + reserved sample", topics
    if pool.strategy not in ("stratified", "prior"):
        raise ServiceError(
            f"pool {pool.number} ({pool.strategy}) is not a sample: every pooled document is "
            "to be judged, so its measures need no estimate"
        )
    for qid, rows in entries.items():
        sampled = np.array([r.sampled for r in rows])
        labels = _labels(qid, rows, sampled, qrels, level)
        # an extension samples its new documents apart: (build, stratum) is the stratum
        keys = sorted({(r.build, r.stratum or 1) for r in rows})
        strata = np.array([keys.index((r.build, r.stratum or 1)) for r in rows])
        inclusion = np.array([r.inclusion_prob for r in rows])
        topics[qid] = estimators.SampledTopic(
            tuple(r.docno for r in rows), strata, inclusion, sampled, labels,
            stratified=pool.strategy == "stratified",
        )  # fmt: skip
    return pool.strategy, topics


def map_interval(values: Sequence[float], variances: Sequence[float], z: float) -> Interval:
    """MAP-hat = the mean of the T topics' estimates, and MAP-hat -/+ z sqrt(sum var_t) / T
    (topics sampled independently), each cut to MAP's range [0, 1]: a Horvitz-Thompson
    estimate may pass 1 on a small sample (our convention; docs/methods.md 10.4)."""
    value = float(np.mean(values))
    half = z * float(np.sqrt(np.sum(variances))) / len(values)
    low, estimate, high = np.clip([value - half, value, value + half], 0.0, 1.0).tolist()
    return Interval(estimate, low, high)


def pool_estimates(
    session: Session,
    campaign: Campaign,
    pool_number: int | None = None,
    *,
    qrels_spec: str = "final",
    confidence: float = 0.95,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    allow_files: bool = False,
) -> PoolEstimates:
    """Estimate every run's MAP over the pool's topics from the pool's sample."""
    if not 0 < confidence < 1:
        raise ServiceError(f"the confidence must be in (0, 1); got {confidence}")
    if replicates < 2:
        raise ServiceError(f"at least 2 bootstrap replicates are needed; got {replicates}")
    pool = pools.get_pool(session, campaign, pool_number)
    named = evaluation_inputs.resolve_qrels(
        session, campaign, qrels_spec, allow_files=allow_files, allow_incomplete=True
    )
    design, topics = _design(session, pool, named.qrels, campaign.relevance_level)
    runs = evaluation_inputs.load_runs(session, campaign)
    z = float(sp_stats.norm.ppf((1 + confidence) / 2))
    per_topic: dict[str, list[estimators.RunEstimates]] = {r.tag: [] for r in runs}
    rows = []
    for qid in sorted(topics, key=pools.qid_key):
        topic = topics[qid]
        rankings = {
            r.tag: topic.positions(r.ranked_lists[qid].docnos) if qid in r.ranked_lists
            else np.zeros(0, np.int64)
            for r in runs
        }  # fmt: skip
        rng = pooling.topic_rng(seed, "estimates", pool.id, qid)
        estimates = estimators.estimate_topic(topic, rankings, replicates=replicates, rng=rng)
        for tag, e in estimates.items():
            per_topic[tag].append(e)
        r_hat = float((topic.relevant / np.where(topic.sampled, topic.inclusion, 1)).sum())
        rows.append(
            TopicEstimate(
                qid, len(topic.docnos), int(topic.sampled.sum()), topic.judged_relevant, r_hat,
                estimators.relevant_left(topic, confidence=confidence)
                if topic.stratified else None,
            )
        )  # fmt: skip
    n = len(topics)

    def interval(tag: str, name: str) -> Interval:
        topics = per_topic[tag]
        return map_interval(
            [t.values[name] for t in topics], [t.variances[name] for t in topics], z
        )

    estimates_rows = tuple(
        RunEstimate(
            r.tag, interval(r.tag, "statAP"),
            interval(r.tag, "xinfAP") if design != "prior" else None,
            float(np.mean([t.values["judged"] for t in per_topic[r.tag]])),
        )
        for r in runs
    )  # fmt: skip
    notes = [
        *named.notes,
        f"MAP over the pool's {n} topics (a run without a topic scores 0 on it); documents "
        "outside the pool are non-relevant. Intervals: generalized bootstrap per topic, "
        f"{replicates} replicates; estimates and intervals cut to MAP's range [0, 1]; in "
        f"simulations their coverage falls short of {100 * confidence:g} % when few sampled "
        "documents are relevant (docs/methods.md 10.5).",
    ]
    return PoolEstimates(campaign.name, pool.number, design, named.label, confidence,
                         replicates, seed, estimates_rows, tuple(rows), tuple(notes))  # fmt: skip
