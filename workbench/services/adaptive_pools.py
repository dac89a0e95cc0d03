"""Adaptive pools: a judging strategy (`workbench.adaptive`) decides each topic's queue online.

An adaptive pool is a depth-k pool (its PoolEntry rows are the universe the strategy draws
from) recorded with `params["adaptive"] = {strategy, budget, batch, secondary_share, ...}` (the
stored key `strategy` holds the adaptive method's name: `AdaptiveSettings.method`). Its
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

A reserved sample (`sample_share` of the budget, `reserved_sample`): a simple random sample
of each topic's pool, revealed at build (build 0, judged first), that the strategy never sees
until it picks one of its documents itself (then free: `adaptive.choose`); the topic's
`choices` record what the strategy chose, in order, free documents included. The sample's part
among the documents the strategy did not choose is a simple random sample of them, from which
`services.estimates` estimates what the adaptive judging missed. A stopping rule
(`workbench.stopping`) gives each topic a verdict; with `auto_stop` a topic whose verdict is
"stop" reveals no more documents.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from workbench import adaptive, estimators, pooling, stopping
from workbench.services import changes, pool_statistics, pools
from workbench.services.archive import refuse_if_archived, refuse_if_pool_archived
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
    """What an adaptive pool records (pools built before a setting existed get its default)."""

    method: str  # workbench.adaptive.METHODS (stored under the key "strategy")
    budget: int
    batch: int
    secondary_share: float
    sample_share: float = 0.0  # of the budget, for the reserved random sample
    stop_rule: str | None = None  # workbench.stopping.RULES
    recall_target: float = stopping.DEFAULT_TARGET
    confidence: float = stopping.DEFAULT_CONFIDENCE
    auto_stop: bool = False  # a topic whose rule says stop reveals no more

    def sample_size(self, pool_size: int) -> int:
        """The topic's reserved sample: ceil(sample_share budget), at most the pool."""
        return min(estimators.reserved_sample_size(self.budget, self.sample_share), pool_size)


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
    sample: int = 0  # documents of the reserved sample
    recall: stopping.RecallEstimate | None = None  # None before any judgement
    verdict: stopping.Verdict | None = None  # of the pool's stopping rule
    rule_stopped: bool = False  # the rule says stop and the pool stops topics by itself

    @property
    def finished(self) -> bool:
        return self.stopped or self.revealed >= min(self.budget, self.pool_size)


STORED_METHOD_KEY = "strategy"  # the key of the method's name in a pool's recorded settings
OLD_METHOD_FIELD = (
    "the adaptive pool's 'strategy' is called 'method' now (--adaptive on the command line); "
    "the old name still works in this release and will be refused in the next"
)


def settings_of(pool: Pool) -> AdaptiveSettings | None:
    """The pool's adaptive settings, or None for an ordinary pool."""
    recorded = dict((pool.params or {}).get("adaptive") or {})
    if not recorded:
        return None
    return AdaptiveSettings(method=recorded.pop(STORED_METHOD_KEY), **recorded)


def recorded_settings(settings: AdaptiveSettings) -> dict[str, Any]:
    """The settings as a pool records them: the method's name under `strategy`, the key
    pools were always recorded with (no migration)."""
    fields = dataclasses.asdict(settings)
    return {STORED_METHOD_KEY: fields.pop("method"), **fields}


def is_adaptive(session: Session, pool_id: int) -> bool:
    pool = session.get(Pool, pool_id)
    return pool is not None and settings_of(pool) is not None


def check_method(method: str) -> None:
    """An adaptive method of a live pool (`adaptive.ADAPTIVE`); a pooling strategy's name, or
    a fixed order of the judging simulator, is refused, naming where it belongs."""
    if method in adaptive.ADAPTIVE:
        return
    methods = ", ".join(adaptive.ADAPTIVE)
    if method in pooling.STRATEGIES:
        raise ServiceError(
            f"{method!r} is a pooling strategy, not an adaptive method: build it as an "
            f"ordinary pool (the Pools form, `pool build --strategy {method}`); adaptive "
            f"methods: {methods}"
        )
    if method in adaptive.METHODS:
        raise ServiceError(
            f"{method!r} is a fixed order of the judging simulator, not an adaptive method; "
            f"adaptive methods: {methods}"
        )
    if method in adaptive.RENAMED:
        raise ServiceError(adaptive.renamed_message(method))
    raise ServiceError(f"unknown adaptive method {method!r}; expected one of {methods}")


def check_settings(method: str, budget: int | None, batch: int, share: float) -> None:
    check_method(method)
    if budget is None or budget < 1:
        raise ServiceError("an adaptive pool needs a positive --budget (judgements per topic)")
    if batch < 1:
        raise ServiceError(f"the batch must be a positive integer; got {batch}")
    if not 0.0 <= share <= 1.0:
        raise ServiceError(f"the secondary share must be in [0, 1]; got {share}")


def check_sampling(settings: AdaptiveSettings) -> None:
    """The reserved sample and the stopping rule: refused when they cannot work."""
    if not 0.0 <= settings.sample_share < 1.0:
        raise ServiceError(f"the sample share must be in [0, 1); got {settings.sample_share}")
    try:
        stopping.check_target(settings.recall_target, settings.confidence)
        rule = stopping.get_rule(settings.stop_rule) if settings.stop_rule else None
    except stopping.StoppingError as error:
        raise ServiceError(str(error)) from None
    if rule is not None and rule.needs_sample and settings.sample_share == 0:
        raise ServiceError(
            f"the {rule.name} stopping rule needs a reserved sample: give a sample share > 0"
        )
    if settings.auto_stop and rule is None:
        raise ServiceError("stopping topics by themselves needs a stopping rule")


def build_adaptive_pool(
    session: Session,
    campaign: Campaign,
    *,
    method: str,
    budget: int | None,
    depth: int = DEFAULT_DEPTH,
    batch: int = DEFAULT_BATCH,
    secondary_share: float = DEFAULT_SECONDARY_SHARE,
    runs: list[str] | None = None,
    seed: int | None = None,
    name: str = "",
    sample_share: float = 0.0,
    stop_rule: str | None = None,
    recall_target: float = stopping.DEFAULT_TARGET,
    confidence: float = stopping.DEFAULT_CONFIDENCE,
    auto_stop: bool = False,
    topics: list[str] | None = None,
) -> Pool:
    """A depth-`depth` pool (of `topics` only, when given) whose documents the adaptive
    `method` reveals, `budget` per topic; with a `sample_share`, each topic's reserved sample is
    revealed at once (build 0)."""
    refuse_if_archived(campaign)
    check_settings(method, budget, batch, secondary_share)
    assert budget is not None
    settings = AdaptiveSettings(
        method,
        budget,
        batch,
        secondary_share,
        sample_share,
        stop_rule or None,
        recall_target,
        confidence,
        auto_stop,
    )
    check_sampling(settings)
    if adaptive.get_method(method).needs_texts:
        try:
            adaptive.require_scikit_learn()
        except adaptive.MethodError as error:
            raise ServiceError(str(error)) from None
    pool = pools.new_pool(
        session,
        campaign,
        strategy="depth",
        depth=depth,
        runs=runs,
        seed=seed,
        name=name,
        topics=topics,
    ).pool
    pool.params = {**pool.params, "adaptive": recorded_settings(settings)}
    session.execute(update(PoolEntry).where(PoolEntry.pool_id == pool.id).values(sampled=False))
    changes.changed(session, campaign.id)
    sizes = _pool_sizes(session, pool)
    session.add_all(AdaptiveTopic(pool_id=pool.id, qid=qid, budget=budget) for qid in sizes)
    for qid, size in sizes.items():
        docnos = session.scalars(
            select(PoolEntry.docno).where(PoolEntry.pool_id == pool.id, PoolEntry.qid == qid)
        ).all()
        reserved = reserved_sample(pool, qid, docnos, settings.sample_size(size))
        if reserved:
            session.execute(
                update(PoolEntry)
                .where(PoolEntry.pool_id == pool.id, PoolEntry.qid == qid,
                       PoolEntry.docno.in_(reserved))
                .values(sampled=True, build=0)
            )  # fmt: skip
    session.flush()
    pool_statistics.keep(session, pool)
    return pool


def reserved_sample(pool: Pool, qid: str, docnos: Sequence[str], size: int) -> list[str]:
    """The topic's reserved sample: `size` of its pooled documents (sorted by docno) drawn
    without replacement by a generator of (seed, pool, topic) alone."""
    ordered = sorted(docnos)
    rng = pooling.topic_rng(pool.seed, "reserved", pool.id, qid)
    return sorted(ordered[i] for i in rng.choice(len(ordered), size=size, replace=False))


def _topic(session: Session, pool: Pool, qid: str) -> AdaptiveTopic:
    row = session.scalar(
        select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id, AdaptiveTopic.qid == qid)
    )
    return found(row, f"pool {pool.number} has no adaptive topic {qid!r}")


def _adaptive_pool(pool: Pool) -> AdaptiveSettings:
    settings = settings_of(pool)
    if settings is None:
        raise ServiceError(f"pool {pool.number} is not adaptive")
    return settings


def set_budget(session: Session, pool: Pool, budget: int, qid: str | None = None) -> int:
    """Set the budget of one topic (or of every topic): never below what is revealed.

    Returns the number of topics changed.
    """
    _adaptive_pool(pool)
    refuse_if_pool_archived(session, pool)
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
    refuse_if_pool_archived(session, pool)
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
    """The topic's primary judge: its earliest active assignment on the pool (by created_at,
    which a reassigned assignment hands on to its successor: `slots.move_assignment`)."""
    return session.scalar(
        select(Assignment)
        .where(Assignment.pool_id == pool_id, Assignment.qid == qid, Assignment.active.is_(True))
        .order_by(Assignment.created_at, Assignment.id)
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


@dataclass(frozen=True)
class _Topic:
    """What the next-batch decision and the status page read of one topic."""

    docnos: tuple[str, ...]  # the topic's pooled documents
    revealed: list[str]  # in reveal order: the reserved sample first
    labels: dict[str, bool]  # the primary judge's, of revealed documents judged
    sample: set[str]  # the reserved sample
    choices: list[str]  # what the strategy chose, in order (free documents included)

    def progress(self) -> stopping.Progress:
        index = {d: i for i, d in enumerate(self.docnos)}
        mask = np.zeros((4, len(self.docnos)), dtype=bool)  # relevant, judged, chosen, sample
        for d, relevant in self.labels.items():
            if d in index:
                mask[0, index[d]], mask[1, index[d]] = relevant, True
        mask[2, [index[d] for d in self.choices if d in index]] = True
        mask[3, [index[d] for d in self.sample if d in index]] = True
        return stopping.progress(
            [self.labels[d] for d in self.revealed if d in self.labels],
            relevant=mask[0], judged=mask[1], chosen=mask[2],
            sample=mask[3] if self.sample else None,
        )  # fmt: skip


def _universe(session: Session, pool: Pool, qid: str) -> adaptive.TopicPool:
    depth = int(pool.params["depth"])
    return adaptive.TopicPool.build(
        pools.topic_ranked_lists(session, pools.pool_runs(session, pool), qid, depth), depth
    )


def _read_topic(session: Session, pool: Pool, qid: str, assignment: Assignment | None) -> _Topic:
    rows = session.execute(
        select(PoolEntry.docno, PoolEntry.build, PoolEntry.sampled).where(
            PoolEntry.pool_id == pool.id, PoolEntry.qid == qid
        )
    ).all()
    revealed = _revealed(session, pool.id, qid)
    campaign = session.get(Campaign, pool.campaign_id)
    assert campaign is not None
    labels = (
        _primary_labels(session, assignment, revealed, campaign.relevance_level)
        if assignment is not None
        else {}
    )
    return _Topic(
        tuple(sorted(r.docno for r in rows)),
        revealed,
        labels,
        {r.docno for r in rows if r.sampled and r.build == 0},
        list(_topic(session, pool, qid).choices),
    )


def verdict(settings: AdaptiveSettings, progress: stopping.Progress) -> stopping.Verdict | None:
    """The pool's stopping rule on the topic (None without a rule)."""
    if settings.stop_rule is None:
        return None
    return stopping.decide(settings.stop_rule, progress, target=settings.recall_target,
                           confidence=settings.confidence)  # fmt: skip


def _next_batch(
    session: Session, pool: Pool, assignment: Assignment
) -> tuple[int, adaptive.Choices | None]:
    """(pool revision, what the strategy chooses now) for the primary judge's topic; None
    when nothing is to be chosen (stopped, budget used, documents left to judge)."""
    settings = _adaptive_pool(pool)
    topic = _topic(session, pool, assignment.qid)
    if topic.stopped:
        return pool.revision, None
    state = _read_topic(session, pool, assignment.qid, assignment)
    room = topic.budget - len(state.revealed)
    if room <= 0 or len(state.labels) < len(state.revealed):
        return pool.revision, None  # budget used, or revealed documents to judge first
    if settings.auto_stop:
        decided = verdict(settings, state.progress())
        if decided is not None and decided.stop:
            return pool.revision, None
    universe = _universe(session, pool, assignment.qid)
    texts = (
        _texts(session, pool, universe)
        if adaptive.get_method(settings.method).needs_texts
        else None
    )
    chosen = set(state.choices)
    choices = adaptive.choose(
        settings.method,
        universe,
        [(d, state.labels[d]) for d in state.choices],
        min(room, settings.batch),
        free={d: state.labels[d] for d in state.sample if d not in chosen},
        seed=pool.seed,
        qid=assignment.qid,
        texts=texts,
    )
    return pool.revision, choices


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
    is never finished before its topic is; never in an archived pool or campaign. Returns the
    revealed docnos (usually none).

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
        if pool is None or settings_of(pool) is None or _read_only(session, pool):
            return []
        primary = _primary(session, pool.id, assignment.qid)
        if primary is None or primary.id != assignment.id:
            return []
        try:
            revision, chosen = _next_batch(session, pool, assignment)
        except adaptive.MethodError as error:
            raise ServiceError(str(error)) from None
        pool_id, qid = pool.id, assignment.qid
    if chosen is None or not chosen.order:
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
        changes.changed(session, assignment.campaign_id)
        start = session.scalar(
            select(func.max(PoolEntry.build)).where(
                PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True)
            )
        )
        for k, docno in enumerate(chosen.reveal, start=(start or 0) + 1):
            session.execute(
                update(PoolEntry)
                .where(PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.docno == docno)
                .values(sampled=True, build=k)
            )
        row = session.scalar(
            select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool_id, AdaptiveTopic.qid == qid)
        )
        assert row is not None
        row.choices = [*row.choices, *chosen.order]
    return chosen.reveal


def _read_only(session: Session, pool: Pool) -> bool:
    """Whether the pool or its campaign is archived (nothing is revealed then)."""
    try:
        refuse_if_pool_archived(session, pool)
    except ServiceError:
        return True
    return False


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
        .order_by(Assignment.created_at, Assignment.id)
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
    relevant documents among the unrevealed ones, the recall of what is judged (estimate and
    interval with a reserved sample, a lower bound without), the stopping rule's verdict, and
    whether the topic is stopped."""
    settings = _adaptive_pool(pool)
    sizes = _pool_sizes(session, pool)
    statuses = []
    for topic in session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id)):
        primary = _primary(session, pool.id, topic.qid)
        state = _read_topic(session, pool, topic.qid, primary)
        in_order = [state.labels[d] for d in state.revealed if d in state.labels]
        unrevealed = sizes.get(topic.qid, 0) - len(state.revealed)
        estimate = adaptive.remaining_relevant(in_order, unrevealed)
        progress = state.progress()
        decided = verdict(settings, progress) if in_order else None
        statuses.append(
            TopicStatus(
                qid=topic.qid,
                budget=topic.budget,
                stopped=topic.stopped,
                pool_size=sizes.get(topic.qid, 0),
                revealed=len(state.revealed),
                judged=len(in_order),
                relevant=sum(in_order),
                remaining_estimate=None if estimate is None else round(estimate, 1),
                primary=_username(session, primary),
                sample=len(state.sample),
                recall=(
                    stopping.recall_estimate(progress, confidence=settings.confidence)
                    if in_order
                    else None
                ),
                verdict=decided,
                rule_stopped=settings.auto_stop and decided is not None and decided.stop,
            )
        )
    return sorted(statuses, key=lambda s: pools.qid_key(s.qid))


def _username(session: Session, assignment: Assignment | None) -> str | None:
    user = session.get(User, assignment.user_id) if assignment is not None else None
    return user.username if user is not None else None
