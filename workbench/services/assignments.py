"""Who judges what: assessors are assigned the pool of a topic, by hand or automatically.

Automatic assignment gives every topic of a pool J judges, balancing the number of documents
each assessor has to judge: topics are taken largest first and each goes to the J eligible
assessors with the smallest current load (ties by username), the classic greedy
longest-processing-time rule (`routing.spread_topics`). Reassigning deactivates an assignment
(its judgements stay in the log) and gives the topic to someone else, with the routing slots
of a routed assignment (`services.slots`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import routing
from workbench.presentation import PRESENTATION_ORDERS
from workbench.services import adaptive_pools, slots
from workbench.services.current_judgements import plain_rows
from workbench.services.errors import NotFound, ServiceError
from workbench.services.topics import listed
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry, Topic, User

ORDERS = PRESENTATION_ORDERS


def topic_sizes(session: Session, pool: Pool) -> dict[str, int]:
    """Number of documents to judge (sampled pool entries) per topic of `pool`; for an
    adaptive pool, each topic's budget (at most its pool)."""
    if adaptive_pools.settings_of(pool) is not None:
        return adaptive_pools.topic_budgets(session, pool)
    rows = session.execute(
        select(PoolEntry.qid, func.count())
        .where(PoolEntry.pool_id == pool.id, PoolEntry.sampled.is_(True))
        .group_by(PoolEntry.qid)
    )
    return {qid: count for qid, count in rows}


def has_topic(session: Session, pool: Pool, qid: str) -> bool:
    """Whether `qid` is among `topic_sizes(session, pool)`, read for that topic alone (one
    probe of the (pool, qid) index, not a count over the whole pool)."""
    if adaptive_pools.settings_of(pool) is not None:
        return qid in adaptive_pools.topic_budgets(session, pool)
    found = session.scalar(
        select(PoolEntry.id)
        .where(PoolEntry.pool_id == pool.id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True))
        .limit(1)
    )
    return found is not None


@dataclass(frozen=True)
class ToJudge:
    """The documents of an assignment: those its judge sees now (`shown`, as the judging page
    lists them) and how many it will have in all (`total`; more than shown only for the
    primary judge of an adaptive pool, whose budget is not all revealed yet)."""

    shown: frozenset[str]
    total: int


def documents_to_judge(session: Session, assignments: Sequence[Assignment]) -> dict[int, ToJudge]:
    """Assignment id -> its documents (`ToJudge`), as its judging page's sequence
    (`judging._sequence`) has them: the sampled entries of its pool's topic (for an adaptive
    pool, `adaptive_pools.documents_to_judge`: a secondary judge's sample), narrowed to its
    routing slots when it has any (`slots`), with the gold documents mixed into its queue
    (`gold.queue_gold`)."""
    # imported here: gold reads final labels (services.qrels), which reads this module
    from workbench.services import gold

    result: dict[int, ToJudge] = {}
    by_pool: dict[int, list[Assignment]] = defaultdict(list)
    for a in assignments:
        by_pool[a.pool_id].append(a)
    for pool_id, group in by_pool.items():
        pool = session.get(Pool, pool_id)
        assert pool is not None
        if adaptive_pools.settings_of(pool) is not None:
            found = adaptive_pools.documents_to_judge(session, pool, group)
            result.update({aid: ToJudge(shown, total) for aid, (shown, total) in found.items()})
            continue
        qids = {a.qid for a in group}
        sampled: dict[str, set[str]] = defaultdict(set)
        for qid, docno in plain_rows(
            session,
            select(PoolEntry.qid, PoolEntry.docno).where(
                PoolEntry.pool_id == pool_id,
                PoolEntry.qid.in_(sorted(qids)),
                PoolEntry.sampled.is_(True),
            ),
        ):
            sampled[qid].add(docno)
        for a in group:
            result[a.id] = ToJudge(frozenset(sampled[a.qid]), len(sampled[a.qid]))
    for aid, routed in slots.slot_documents(session, assignments).items():
        before = result[aid]
        shown = before.shown & routed
        result[aid] = ToJudge(shown, before.total - len(before.shown) + len(shown))
    own = {aid: found.shown for aid, found in result.items()}
    for aid, mixed in gold.queue_gold(session, assignments, own).items():
        added = set(mixed) - result[aid].shown
        result[aid] = ToJudge(result[aid].shown | added, result[aid].total + len(added))
    return result


def list_assignments(
    session: Session, campaign_id: int, *, pool_id: int | None = None, active: bool = True
) -> list[Assignment]:
    query = select(Assignment).where(Assignment.campaign_id == campaign_id)
    if pool_id is not None:
        query = query.where(Assignment.pool_id == pool_id)
    if active:
        query = query.where(Assignment.active.is_(True))
    return list(session.scalars(query.order_by(Assignment.qid, Assignment.user_id)))


def assignment_in(session: Session, campaign_id: int, assignment_id: int) -> Assignment:
    """The campaign's assignment with this id; NotFound otherwise."""
    assignment = session.get(Assignment, assignment_id)
    if assignment is None or assignment.campaign_id != campaign_id:
        raise NotFound(f"campaign {campaign_id} has no assignment {assignment_id}")
    return assignment


def own_assignment(session: Session, assignment_id: int, user_id: int) -> Assignment:
    """The user's active assignment with this id; NotFound for anyone else's (or none)."""
    assignment = session.get(Assignment, assignment_id)
    if assignment is None or assignment.user_id != user_id or not assignment.active:
        raise NotFound(f"no assignment {assignment_id} of yours")
    return assignment


def assignment_topic(session: Session, assignment: Assignment) -> Topic | None:
    """The topic an assignment is about (None if the campaign no longer has it)."""
    return session.scalar(
        select(Topic).where(
            Topic.campaign_id == assignment.campaign_id, Topic.qid == assignment.qid
        )
    )


def assignments_for_user(session: Session, user_id: int) -> list[Assignment]:
    """The active assignments of one assessor, by campaign then topic (archived campaigns and
    pools left out)."""
    query = (
        select(Assignment)
        .join(Campaign, Campaign.id == Assignment.campaign_id)
        .join(Pool, Pool.id == Assignment.pool_id)
        .where(Assignment.user_id == user_id, Assignment.active.is_(True))
        .where(Campaign.archived_at.is_(None), Pool.archived_at.is_(None))
        .order_by(Assignment.campaign_id, Assignment.qid)
    )
    return list(session.scalars(query))


def assign(
    session: Session, pool: Pool, qid: str, user: User, *, order: str = "random"
) -> Assignment:
    """Assign `user` the documents of topic `qid` in `pool` (reactivates an old assignment)."""
    if order not in ORDERS:
        raise ServiceError(f"unknown order {order!r}: expected one of {', '.join(ORDERS)}")
    if pool.archived_at is not None:
        raise ServiceError(f"pool {pool.number} is archived: restore it to assign from it")
    if not user.active:
        raise ServiceError(f"user {user.username!r} is deactivated")
    if not has_topic(session, pool, qid):
        raise NotFound(f"topic {qid!r} has no documents in pool {pool.number}")
    existing = session.scalar(
        select(Assignment).where(
            Assignment.pool_id == pool.id, Assignment.qid == qid, Assignment.user_id == user.id
        )
    )
    if existing is not None:
        existing.active = True
        existing.order = order
        return existing
    assignment = Assignment(
        campaign_id=pool.campaign_id, pool_id=pool.id, qid=qid, user_id=user.id, order=order
    )
    session.add(assignment)
    session.flush()
    return assignment


def unassign(session: Session, assignment: Assignment) -> None:
    """Withdraw an assignment; the judgements already made stay in the log."""
    assignment.active = False


def reassign(session: Session, assignment: Assignment, to_user: User) -> Assignment:
    """Move an assignment to another assessor."""
    if to_user.id == assignment.user_id:
        raise ServiceError("the topic is already assigned to this assessor")
    pool = session.get(Pool, assignment.pool_id)
    assert pool is not None
    new = assign(session, pool, assignment.qid, to_user, order=assignment.order)
    slots.move_assignment(session, assignment, new)
    unassign(session, assignment)
    return new


def auto_assign(
    session: Session,
    pool: Pool,
    *,
    judges_per_topic: int,
    assessors: list[User],
    order: str = "random",
    topics: Sequence[str] | None = None,
) -> list[Assignment]:
    """Give every topic of `pool` (of `topics`, when given: each must be in the pool)
    `judges_per_topic` judges, balancing documents per assessor.

    Existing active assignments count towards both J and the loads. Returns the new ones.
    """
    if judges_per_topic < 1:
        raise ServiceError("judges per topic must be at least 1")
    eligible = [user for user in assessors if user.active]
    if len(eligible) < judges_per_topic:
        raise ServiceError(
            f"{judges_per_topic} judges per topic need at least {judges_per_topic} active "
            f"assessors; got {len(eligible)}"
        )
    sizes = topic_sizes(session, pool)
    if not sizes:
        raise ServiceError(f"pool {pool.number} has no documents to judge")
    if topics is not None:
        outside = [qid for qid in topics if qid not in sizes]
        if outside or not topics:
            raise ServiceError(
                f"pool {pool.number} has no documents to judge for topic(s) {listed(outside)}"
                if outside
                else "no topics chosen"
            )
    judges: dict[str, set[str]] = defaultdict(set)
    load: dict[str, int] = defaultdict(int)
    names = {user.id: user.username for user in session.scalars(select(User))}
    for existing in list_assignments(session, pool.campaign_id, pool_id=pool.id):
        judges[existing.qid].add(names[existing.user_id])
        load[names[existing.user_id]] += sizes.get(existing.qid, 0)
    targets = sizes if topics is None else {qid: sizes[qid] for qid in topics}
    by_name = {user.username: user for user in eligible}
    pairs = routing.spread_topics(
        targets, list(by_name), judges_per_topic, load=load, judging=judges
    )
    return [assign(session, pool, qid, by_name[name], order=order) for qid, name in pairs]
