"""Adaptive pools: a judging strategy (`workbench.adaptive`) decides each topic's queue online.

An adaptive pool is a depth-k pool (its PoolEntry rows are the universe the strategy draws
from) recorded with `params["adaptive"] = {strategy, budget, batch, secondary_share}`. Its
entries start hidden (`sampled` false); a topic's documents are revealed `batch` at a time, in
the next-document path (`advance`), when its primary judge (the topic's earliest active
assignment) has judged every revealed one, until the topic's budget is used or the organiser
stops it. A revealed entry's `build` is its reveal number, so the primary judge sees the
documents in the order the strategy chose them; every reveal changes the pool's `revision`,
part of the signature of the cached presentation orders.

Other judges of the topic see a random sample of the revealed documents: each is in it with
probability `secondary_share`, decided by (seed, pool, topic, docno) alone, in a seeded random
order, so their agreement with the primary judge is measured on documents the strategy did
not pick for them. Unrevealed documents are pooled but unjudged: exported as -1 in qrels (the
infAP convention), and they are not a random sample, which evaluation must say.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from workbench import adaptive, pooling
from workbench.services import pools
from workbench.services.current_judgements import current_judgements
from workbench.services.errors import ServiceError, found
from workbench.store.db import Store
from workbench.store.models import (
    AdaptiveTopic,
    Assignment,
    Campaign,
    Document,
    Pool,
    PoolEntry,
    User,
    utcnow,
)

DEFAULT_DEPTH = 100
DEFAULT_BATCH = 5
DEFAULT_SECONDARY_SHARE = 0.2


@dataclass(frozen=True)
class AdaptiveSettings:
    strategy: str
    budget: int
    batch: int
    secondary_share: float


@dataclass(frozen=True)
class TopicStatus:
    """One topic of an adaptive pool, as the organiser sees it."""

    qid: str
    budget: int
    stopped: bool
    pool_size: int  # the depth-k universe
    revealed: int  # documents chosen so far for the primary judge
    judged: int  # of those, judged by the primary judge
    relevant: int  # of those, relevant (grade >= the campaign's relevance level)
    remaining_estimate: float | None  # relevant expected among the unrevealed (yield curve)
    primary: str | None  # the primary judge's username

    @property
    def finished(self) -> bool:
        return self.stopped or self.revealed >= min(self.budget, self.pool_size)


def settings_of(pool: Pool) -> AdaptiveSettings | None:
    """The pool's adaptive settings, or None for an ordinary pool."""
    recorded = (pool.params or {}).get("adaptive")
    return AdaptiveSettings(**recorded) if recorded else None


def is_adaptive(session: Session, pool_id: int) -> bool:
    pool = session.get(Pool, pool_id)
    return pool is not None and settings_of(pool) is not None


def check_settings(strategy: str, budget: int | None, batch: int, share: float) -> None:
    try:
        adaptive.get_strategy(strategy)
    except adaptive.StrategyError as error:
        raise ServiceError(str(error)) from None
    if budget is None or budget < 1:
        raise ServiceError("an adaptive pool needs a positive --budget (judgements per topic)")
    if batch < 1:
        raise ServiceError(f"the batch must be a positive integer; got {batch}")
    if not 0.0 <= share <= 1.0:
        raise ServiceError(f"the secondary share must be in [0, 1]; got {share}")


def build_adaptive_pool(
    session: Session,
    campaign: Campaign,
    *,
    strategy: str,
    budget: int | None,
    depth: int = DEFAULT_DEPTH,
    batch: int = DEFAULT_BATCH,
    secondary_share: float = DEFAULT_SECONDARY_SHARE,
    runs: list[str] | None = None,
    seed: int | None = None,
    name: str = "",
) -> Pool:
    """A depth-`depth` pool whose documents the strategy reveals, `budget` per topic."""
    check_settings(strategy, budget, batch, secondary_share)
    assert budget is not None
    if adaptive.get_strategy(strategy).needs_texts:
        try:
            adaptive.require_scikit_learn()
        except adaptive.StrategyError as error:
            raise ServiceError(str(error)) from None
    pool = pools.build_pool(
        session, campaign, strategy="depth", depth=depth, runs=runs, seed=seed, name=name
    )
    settings = AdaptiveSettings(strategy, budget, batch, secondary_share)
    pool.params = {**pool.params, "adaptive": dataclasses.asdict(settings)}
    session.execute(update(PoolEntry).where(PoolEntry.pool_id == pool.id).values(sampled=False))
    qids = session.scalars(
        select(PoolEntry.qid).where(PoolEntry.pool_id == pool.id).distinct()
    ).all()
    session.add_all(AdaptiveTopic(pool_id=pool.id, qid=qid, budget=budget) for qid in qids)
    session.flush()
    return pool


def _topic(session: Session, pool: Pool, qid: str) -> AdaptiveTopic:
    row = session.scalar(
        select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id, AdaptiveTopic.qid == qid)
    )
    return found(row, f"pool {pool.id} has no adaptive topic {qid!r}")


def _adaptive_pool(pool: Pool) -> AdaptiveSettings:
    settings = settings_of(pool)
    if settings is None:
        raise ServiceError(f"pool {pool.id} is not adaptive")
    return settings


def set_budget(session: Session, pool: Pool, budget: int, qid: str | None = None) -> int:
    """Set the budget of one topic (or of every topic): never below what is revealed.

    Returns the number of topics changed.
    """
    _adaptive_pool(pool)
    if budget < 1:
        raise ServiceError(f"the budget must be a positive integer; got {budget}")
    topics = (
        [_topic(session, pool, qid)]
        if qid is not None
        else list(session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id)))
    )
    revealed = _pool_sizes(session, pool, revealed_only=True)
    below = [t.qid for t in topics if revealed.get(t.qid, 0) > budget]
    if below:
        raise ServiceError(
            f"topic(s) {', '.join(below[:5])} already have more than {budget} documents revealed"
        )
    for topic in topics:
        topic.budget = budget
        topic.updated_at = utcnow()
    return len(topics)


def stop_topic(session: Session, pool: Pool, qid: str, *, stopped: bool = True) -> None:
    """Stop (or resume) revealing documents of a topic."""
    _adaptive_pool(pool)
    topic = _topic(session, pool, qid)
    topic.stopped = stopped
    topic.updated_at = utcnow()


def topic_budgets(session: Session, pool: Pool) -> dict[str, int]:
    """qid -> documents the topic will have judged: min(budget, pool size) (0 when stopped
    with nothing revealed is still listed, so that it can be assigned)."""
    sizes = _pool_sizes(session, pool)
    rows = session.execute(
        select(AdaptiveTopic.qid, AdaptiveTopic.budget).where(AdaptiveTopic.pool_id == pool.id)
    )
    return {qid: min(budget, sizes.get(qid, 0)) for qid, budget in rows}


def _pool_sizes(session: Session, pool: Pool, *, revealed_only: bool = False) -> dict[str, int]:
    """qid -> pooled documents (or revealed ones only)."""
    query = select(PoolEntry.qid, func.count()).where(PoolEntry.pool_id == pool.id)
    if revealed_only:
        query = query.where(PoolEntry.sampled.is_(True))
    return {qid: count for qid, count in session.execute(query.group_by(PoolEntry.qid))}


def _primary(session: Session, pool_id: int, qid: str) -> Assignment | None:
    """The topic's primary judge: its earliest active assignment on the pool."""
    return session.scalar(
        select(Assignment)
        .where(Assignment.pool_id == pool_id, Assignment.qid == qid, Assignment.active.is_(True))
        .order_by(Assignment.id)
        .limit(1)
    )


def _revealed(session: Session, pool_id: int, qid: str) -> list[str]:
    """The topic's revealed documents in reveal order."""
    return list(
        session.scalars(
            select(PoolEntry.docno)
            .where(PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True))
            .order_by(PoolEntry.build, PoolEntry.docno)
        )
    )


def _primary_labels(
    session: Session, assignment: Assignment, revealed: Sequence[str], level: int
) -> dict[str, bool]:
    """The primary judge's current label per revealed document it judged ('cannot judge'
    counts as non-relevant for the strategy)."""
    judged = current_judgements(
        session, assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id
    )
    wanted = set(revealed)
    return {j.docno: j.grade is not None and j.grade >= level for j in judged if j.docno in wanted}


def _next_batch(session: Session, pool: Pool, assignment: Assignment) -> tuple[int, list[str]]:
    """(pool revision, documents to reveal now) for the primary judge's topic."""
    settings = _adaptive_pool(pool)
    topic = _topic(session, pool, assignment.qid)
    if topic.stopped:
        return pool.revision, []
    revealed = _revealed(session, pool.id, assignment.qid)
    room = topic.budget - len(revealed)
    if room <= 0:
        return pool.revision, []
    campaign = session.get(Campaign, pool.campaign_id)
    assert campaign is not None
    labels = _primary_labels(session, assignment, revealed, campaign.relevance_level)
    if len(labels) < len(revealed):
        return pool.revision, []  # the primary judge has revealed documents to judge
    depth = int(pool.params["depth"])
    models = pools.pool_runs(session, pool)
    universe = adaptive.TopicPool.build(
        pools.topic_ranked_lists(session, models, assignment.qid, depth), depth
    )
    texts = (
        _texts(session, pool, universe)
        if adaptive.get_strategy(settings.strategy).needs_texts
        else None
    )
    chosen = adaptive.next_documents(
        settings.strategy,
        universe,
        [(d, labels[d]) for d in revealed],
        min(room, settings.batch),
        seed=pool.seed,
        qid=assignment.qid,
        texts=texts,
    )
    return pool.revision, chosen


def _texts(session: Session, pool: Pool, universe: adaptive.TopicPool) -> dict[str, str]:
    rows = session.execute(
        select(Document.docno, Document.title, Document.text).where(
            Document.campaign_id == pool.campaign_id, Document.docno.in_(universe.docnos)
        )
    )
    return {docno: f"{title}\n{text}".strip() for docno, title, text in rows}


def advance(store: Store, assignment_id: int, user_id: int) -> list[str]:
    """The next-document path of an adaptive pool: reveal the primary judge's next batch when
    every revealed document is judged, and the next again while a batch holds only documents
    the judge already judged (under another pool's assignment of the topic), so that a queue
    is never finished before its topic is. Returns the revealed docnos (usually none).

    A read transaction decides; only a reveal writes, guarded by the pool's revision so that
    two concurrent requests reveal once. Ordinary pools cost one read.
    """
    revealed: list[str] = []
    while chosen := _advance_once(store, assignment_id, user_id):  # at most budget reveals
        revealed += chosen
    return revealed


def _advance_once(store: Store, assignment_id: int, user_id: int) -> list[str]:
    """One reveal of `advance` (none when the judge has revealed documents to judge)."""
    with store.read_session() as session:
        assignment = session.get(Assignment, assignment_id)
        if assignment is None or assignment.user_id != user_id or not assignment.active:
            return []
        pool = session.get(Pool, assignment.pool_id)
        if pool is None or settings_of(pool) is None:
            return []
        primary = _primary(session, pool.id, assignment.qid)
        if primary is None or primary.id != assignment.id:
            return []
        try:
            revision, chosen = _next_batch(session, pool, assignment)
        except adaptive.StrategyError as error:
            raise ServiceError(str(error)) from None
        pool_id, qid = pool.id, assignment.qid
    if not chosen:
        return []
    with store.session() as session:
        bumped = session.execute(
            update(Pool)
            .where(Pool.id == pool_id, Pool.revision == revision)
            .values(revision=revision + 1)
            .returning(Pool.id)
        ).first()
        if bumped is None:
            return []  # another request revealed first
        start = len(_revealed(session, pool_id, qid))
        for k, docno in enumerate(chosen, start=start + 1):
            session.execute(
                update(PoolEntry)
                .where(PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.docno == docno)
                .values(sampled=True, build=k)
            )
    return chosen


def visible_entries(connection: Connection, assignment: Any, rows: Sequence[Any]) -> list[Any]:
    """The revealed entries an assessor of an adaptive pool judges (`judging`'s sequence):
    all of them for the primary judge, the seeded sample for the others (builds set to 0 so
    that their order is the seeded random one). Ordinary pools: `rows` unchanged."""
    params, seed = connection.execute(
        select(Pool.params, Pool.seed).where(Pool.id == assignment.pool_id)
    ).one()
    recorded = (params or {}).get("adaptive")
    if not recorded:
        return list(rows)
    primary_user = connection.scalar(
        select(Assignment.user_id)
        .where(
            Assignment.pool_id == assignment.pool_id,
            Assignment.qid == assignment.qid,
            Assignment.active.is_(True),
        )
        .order_by(Assignment.id)
        .limit(1)
    )
    if primary_user == assignment.user_id:
        return list(rows)
    share = float(recorded["secondary_share"])
    return [
        SampledEntry(row.docno, 0, row.priority)
        for row in rows
        if in_secondary_sample(seed, assignment.pool_id, assignment.qid, row.docno, share)
    ]


class SampledEntry(NamedTuple):
    """A revealed entry as another judge sees it: build 0, so that it is shuffled."""

    docno: str
    build: int
    priority: float


def in_secondary_sample(seed: int, pool_id: int, qid: str, docno: str, share: float) -> bool:
    """Whether other judges of the topic see this revealed document (probability `share`)."""
    return bool(pooling.topic_rng(seed, "secondary", pool_id, qid, docno).random() < share)


def documents_to_judge(
    session: Session, pool: Pool, assignments: Sequence[Assignment]
) -> dict[int, tuple[frozenset[str], int]]:
    """Assignment id -> (the documents its judge sees now, how many it will have in all), for
    assignments of the adaptive `pool`, as the judging page shows them (`visible_entries`):
    the primary judge sees every revealed document and will have min(budget, pool size) unless
    the topic is stopped; another judge sees (and will have) the seeded sample of the revealed
    ones, which grows as the primary judge's reveals do."""
    settings = _adaptive_pool(pool)
    qids = {a.qid for a in assignments}
    revealed: dict[str, set[str]] = {q: set() for q in qids}
    for qid, docno in session.execute(
        select(PoolEntry.qid, PoolEntry.docno).where(
            PoolEntry.pool_id == pool.id, PoolEntry.sampled.is_(True)
        )
    ):
        if qid in revealed:
            revealed[qid].add(docno)
    sizes = _pool_sizes(session, pool)
    topics = {
        t.qid: t
        for t in session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id))
    }
    result = {}
    for a in assignments:
        shown = revealed[a.qid]
        primary = _primary(session, pool.id, a.qid)
        if primary is not None and primary.id == a.id:
            topic = topics.get(a.qid)
            planned = 0
            if topic is not None and not topic.stopped:
                planned = min(topic.budget, sizes.get(a.qid, 0))
            result[a.id] = (frozenset(shown), max(len(shown), planned))
        else:
            share = settings.secondary_share
            sample = {d for d in shown if in_secondary_sample(pool.seed, pool.id, a.qid, d, share)}
            result[a.id] = (frozenset(sample), len(sample))
    return result


def topic_statuses(session: Session, pool: Pool) -> list[TopicStatus]:
    """Per topic: budget, revealed, judged and relevant for the primary judge, the estimate of
    relevant documents among the unrevealed ones, and whether the topic is stopped."""
    _adaptive_pool(pool)
    campaign = session.get(Campaign, pool.campaign_id)
    assert campaign is not None
    sizes = _pool_sizes(session, pool)
    statuses = []
    for topic in session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id)):
        revealed = _revealed(session, pool.id, topic.qid)
        primary = _primary(session, pool.id, topic.qid)
        labels = (
            _primary_labels(session, primary, revealed, campaign.relevance_level)
            if primary is not None
            else {}
        )
        in_order = [labels[d] for d in revealed if d in labels]
        unrevealed = sizes.get(topic.qid, 0) - len(revealed)
        estimate = adaptive.remaining_relevant(in_order, unrevealed)
        statuses.append(
            TopicStatus(
                qid=topic.qid,
                budget=topic.budget,
                stopped=topic.stopped,
                pool_size=sizes.get(topic.qid, 0),
                revealed=len(revealed),
                judged=len(in_order),
                relevant=sum(in_order),
                remaining_estimate=None if estimate is None else round(estimate, 1),
                primary=_username(session, primary),
            )
        )
    return sorted(statuses, key=lambda s: pools.qid_key(s.qid))


def _username(session: Session, assignment: Assignment | None) -> str | None:
    user = session.get(User, assignment.user_id) if assignment is not None else None
    return user.username if user is not None else None


def evaluation_warning(session: Session, campaign: Campaign) -> str | None:
    """What an evaluation of the campaign must say when one of its pools is adaptive."""
    adaptive_ids = [
        p.id
        for p in session.scalars(select(Pool).where(Pool.campaign_id == campaign.id))
        if settings_of(p) is not None
    ]
    if not adaptive_ids:
        return None
    return (
        f"pool(s) {', '.join(map(str, adaptive_ids))} judged adaptively: the pooled documents "
        "left unjudged are not a random sample, so measures that count them as non-relevant "
        "favour the runs the strategy followed; compare with -m bpref -m infAP"
    )


@dataclass(frozen=True)
class Provenance:
    """How an adaptive pool chose what was judged: what exported qrels must record."""

    pool: int
    strategy: str
    budget: int  # the pool's budget per topic
    raised: dict[str, int]  # qid -> budget, for the topics whose budget differs
    stopped: tuple[str, ...]  # topics the organiser stopped

    def describe(self) -> str:
        """'pool 3 judged adaptively: strategy mm-ns, budget 200 judgements per topic ...'."""
        text = (
            f"pool {self.pool} judged adaptively: strategy {self.strategy}, budget "
            f"{self.budget} judgements per topic"
        )
        if self.raised:
            text += " (" + ", ".join(f"topic {q}: {b}" for q, b in self.raised.items()) + ")"
        if self.stopped:
            text += f"; stopped early: topic(s) {', '.join(self.stopped)}"
        return text


def provenance(session: Session, campaign: Campaign) -> list[Provenance]:
    """The strategy and budgets of each adaptive pool of the campaign, oldest pool first."""
    found = []
    for pool in session.scalars(
        select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.id)
    ):
        settings = settings_of(pool)
        if settings is None:
            continue
        topics = sorted(
            session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id)),
            key=lambda t: pools.qid_key(t.qid),
        )
        found.append(
            Provenance(
                pool=pool.id,
                strategy=settings.strategy,
                budget=settings.budget,
                raised={t.qid: t.budget for t in topics if t.budget != settings.budget},
                stopped=tuple(t.qid for t in topics if t.stopped),
            )
        )
    return found


def export_header(session: Session, campaign: Campaign) -> str:
    """The `#` comment lines that open qrels and judgement logs of a campaign judged
    adaptively ('' otherwise): the strategy and budget of each adaptive pool."""
    return "".join(
        f"# ADAPTIVE {p.describe()}; the pooled documents left unjudged are not a random sample.\n"
        for p in provenance(session, campaign)
    )


def describe_settings(pool: Pool) -> str:
    """'adaptive mm-ns, budget 200 per topic, batch 5, 20 % to other judges' (or '')."""
    settings = settings_of(pool)
    if settings is None:
        return ""
    return (
        f"adaptive {settings.strategy}, budget {settings.budget} per topic, batch "
        f"{settings.batch}, {math.floor(100 * settings.secondary_share)} % to other judges"
    )
