"""Reassigning the unjudged remainder of an assessor (who stopped, or left): the unjudged
documents of their active assignments in a campaign go to others, one new judge each, by the
routing planner (`workbench.routing`, k = 1, a topic's remainder as one chunk): the least
loaded first, a topic's remainder whole where one assessor may take all of it, never to someone
who holds or judged a document. What they judged stays theirs (their places on judged documents
are marked kept, `routing.KEPT`, and their queue then holds no gold document they have not
judged: `gold.mixed_queue`); an assignment with nothing judged is withdrawn. The plan
is shown first (`remainder_plan`), then carried out (`reassign_remainder`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import routing
from workbench.services import adaptive_pools, assignments, slots
from workbench.services.archive import refuse_if_archived
from workbench.services.current_judgements import current_judgements
from workbench.services.errors import NotFound, ServiceError
from workbench.services.pools import qid_key
from workbench.services.routing import pool_state
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry, User


@dataclass(frozen=True)
class Move:
    """Documents of one topic moving from the assessor to another (to None: nobody may
    take them)."""

    pool: int
    qid: str
    documents: int
    to: str | None


@dataclass(frozen=True)
class RemainderPlan:
    """What reassigning an assessor's unjudged remainder does: the moves, the topics they
    keep (what they judged there), and the pools left out (adaptive pools)."""

    assessor: str
    moves: tuple[Move, ...]
    kept: int  # documents judged, which stay theirs
    withdrawn: int  # assignments with nothing judged, withdrawn
    notes: tuple[str, ...]

    @property
    def documents(self) -> int:
        return sum(m.documents for m in self.moves if m.to is not None)

    @property
    def unplaced(self) -> int:
        return sum(m.documents for m in self.moves if m.to is None)

    def describe(self) -> str:
        if not self.moves:
            return f"{self.assessor} has no unjudged documents to reassign"
        given: dict[str, int] = defaultdict(int)
        for m in self.moves:
            if m.to is not None:
                given[m.to] += m.documents
        parts = ", ".join(f"{n} to {name}" for name, n in sorted(given.items()))
        text = f"{self.documents} unjudged document(s) of {self.assessor}: {parts or 'none placed'}"
        if self.unplaced:
            text += f"; {self.unplaced} cannot be placed (every other assessor judges them already)"
        return text


def _remainder(
    session: Session, campaign: Campaign, username: str, to: Sequence[str] | None
) -> tuple[User, list[tuple[Pool, Assignment, list[str], list[str]]], list[User], list[str]]:
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFound(f"no assessor {username!r}")
    mine = assignments.list_assignments(session, campaign.id)
    mine = [a for a in mine if a.user_id == user.id]
    routed = slots.slot_documents(session, mine)
    judged = {(j.qid, j.docno) for j in current_judgements(session, campaign.id, user_id=user.id)}
    work, notes = [], []
    for a in mine:
        pool = session.get(Pool, a.pool_id)
        assert pool is not None
        if adaptive_pools.settings_of(pool) is not None:
            notes.append(
                f"pool {pool.number} is an adaptive pool: reassign its topic {a.qid} whole "
                "(Reassign on the Assignments page)"
            )
            continue
        own = routed.get(a.id)
        if own is None:
            own = set(
                session.scalars(
                    select(PoolEntry.docno).where(
                        PoolEntry.pool_id == pool.id,
                        PoolEntry.qid == a.qid,
                        PoolEntry.sampled.is_(True),
                    )
                )
            )
        done = sorted(d for d in own if (a.qid, d) in judged)
        left = sorted(d for d in own if (a.qid, d) not in judged)
        if left:
            work.append((pool, a, done, left))
    names = (
        to
        if to is not None
        else [u.username for u in session.scalars(select(User).where(User.role == "assessor"))]
    )
    targets = []
    for name in names:
        target = session.scalar(select(User).where(User.username == name))
        if target is None:
            raise NotFound(f"no assessor {name!r}")
        if target.active and target.id != user.id:
            targets.append(target)
    if not targets and work:
        raise ServiceError(f"no other active assessor can take the remainder of {username}")
    return user, work, targets, notes


def _remainder_routes(
    session: Session, pool: Pool, items: list[tuple[Assignment, list[str]]], user: User,
    targets: Sequence[User],
) -> routing.Plan:  # fmt: skip
    """One new judge for each remainder document of the pool: a topic's remainder to one
    assessor where one may take all of it (least loaded first), else document by document."""
    state = pool_state(session, pool)
    barred = {
        k: frozenset(state.holders.get(k, set()) - {user.username}) | state.judged.get(k, set())
        for k in set(state.holders) | set(state.judged)
    }
    situation = routing.Situation(
        documents={a.qid: left for a, left in items},
        holders={},
        barred=barred,
        load={k: v for k, v in state.load.items() if k != user.username},
    )
    size = max(len(left) for _, left in items)
    return routing.plan(
        "overlap",
        {"judges_per_document": 1, "chunk": size},
        situation,
        [t.username for t in targets],
    )


def remainder_plan(
    session: Session, campaign: Campaign, username: str, *, to: Sequence[str] | None = None
) -> RemainderPlan:
    """What `reassign_remainder` would do (nothing is changed)."""
    return _reassign(session, campaign, username, to, apply=False)


def reassign_remainder(
    session: Session, campaign: Campaign, username: str, *, to: Sequence[str] | None = None
) -> RemainderPlan:
    """Give the unjudged documents of `username`'s active assignments in the campaign to
    others (of `to`, default every other active assessor); see the module docstring."""
    return _reassign(session, campaign, username, to, apply=True)


def _reassign(
    session: Session, campaign: Campaign, username: str, to: Sequence[str] | None, *, apply: bool
) -> RemainderPlan:
    if apply:
        refuse_if_archived(campaign)
    user, work, targets, notes = _remainder(session, campaign, username, to)
    by_pool: dict[int, list[tuple[Pool, Assignment, list[str], list[str]]]] = defaultdict(list)
    for item in work:
        by_pool[item[0].id].append(item)
    moves: list[Move] = []
    kept = withdrawn = 0
    by_name = {t.username: t for t in targets}
    for items in by_pool.values():
        pool = items[0][0]
        plan = _remainder_routes(
            session, pool, [(a, left) for _, a, _, left in items], user, targets
        )
        for route in plan.routes:
            moves.append(Move(pool.number, route.qid, len(route.docnos), route.assessor))
        short: dict[str, int] = defaultdict(int)
        for qid, _docno in plan.short:
            short[qid] += 1
        moves += [Move(pool.number, qid, n, None) for qid, n in sorted(short.items())]
        placed = {(r.qid, d) for r in plan.routes for d in r.docnos}
        for _, a, done, left in items:
            kept += len(done)
            withdrawn += not done and all((a.qid, d) in placed for d in left)
        if apply:
            _move_remainder(session, pool, items, plan, by_name)
    moves.sort(key=lambda m: (m.pool, qid_key(m.qid), m.to or ""))
    return RemainderPlan(user.username, tuple(moves), kept, withdrawn, tuple(notes))


def _move_remainder(
    session: Session,
    pool: Pool,
    items: list[tuple[Pool, Assignment, list[str], list[str]]],
    plan: routing.Plan,
    by_name: Mapping[str, User],
) -> None:
    """Carry out a pool's part of the plan: the assessor's whole-topic assignments become
    their judged documents, the routed documents move to their new judges, and assignments
    with nothing judged are withdrawn (documents no one may take stay with the assessor)."""
    routed = slots.slot_documents(session, [a for _, a, _, _ in items])
    placed = {(r.qid, d) for r in plan.routes for d in r.docnos}
    for _, a, done, left in items:
        if a.id not in routed:  # a whole-topic assignment: keep what was judged as places
            slots.add(session, a, [d for d in left if (a.qid, d) not in placed], "judge")
            slots.add(session, a, done, routing.KEPT)
        else:
            slots.keep(session, a, done)
    for route in plan.routes:
        old = next(a for _, a, _, _ in items if a.qid == route.qid)
        new = assignments.assign(session, pool, route.qid, by_name[route.assessor], order=old.order)
        if old.id in routed:
            slots.move(session, old, new, route.docnos)
        else:
            slots.add(session, new, route.docnos, "judge")
    for _, a, done, left in items:
        if not done and all((a.qid, d) in placed for d in left):
            assignments.unassign(session, a)
    slots.touch(session, pool.id)
