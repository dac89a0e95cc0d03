"""Routing slots: which documents of its topic an assignment covers (`store.models.RoutingSlot`).

An assignment with slots covers those documents; one without covers its whole topic (as
before routing existed). `services.routing` decides who gets which slot; this module only
reads them for the judging queue and progress, and moves them between assignments. Every
change of slots bumps the pool's revision, part of the signature of the cached queues
(`services.judging`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.orm import Session

from workbench import routing
from workbench.services import changes
from workbench.services.current_judgements import current_judgements
from workbench.services.errors import ServiceError
from workbench.store.db import cast_result
from workbench.store.models import Assignment, Pool, RoutingSlot, User


def routed_entries(connection: Connection, assignment: Any, rows: Sequence[Any]) -> list[Any]:
    """The pool entries of an assignment's queue (`judging`'s sequence): those of its slots,
    or all of `rows` when it has none (a whole-topic assignment)."""
    mine = set(
        connection.scalars(
            select(RoutingSlot.docno).where(
                RoutingSlot.pool_id == assignment.pool_id,
                RoutingSlot.qid == assignment.qid,
                RoutingSlot.user_id == assignment.user_id,
            )
        )
    )
    return list(rows) if not mine else [row for row in rows if row.docno in mine]


def slot_documents(session: Session, assignments: Iterable[Assignment]) -> dict[int, set[str]]:
    """assignment id -> the docnos of its slots, for the assignments that have any."""
    ids = [a.id for a in assignments]
    found: dict[int, set[str]] = defaultdict(set)
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(RoutingSlot.assignment_id, RoutingSlot.docno).where(
                RoutingSlot.assignment_id.in_(ids[start : start + 500])
            )
        )
        for assignment_id, docno in rows:
            found[assignment_id].add(docno)
    return dict(found)


def next_slot(session: Session | Connection, pool_id: int, qid: str, docno: str) -> int:
    """The number of the next place on a document: one more than the highest so far."""
    highest = session.scalar(
        select(func.max(RoutingSlot.slot)).where(
            RoutingSlot.pool_id == pool_id, RoutingSlot.qid == qid, RoutingSlot.docno == docno
        )
    )
    return 0 if highest is None else highest + 1


def add(session: Session, assignment: Assignment, docnos: Iterable[str], role: str) -> int:
    """Give `assignment` a place on each of `docnos` (an earlier place of the same assessor on
    a document, left by a withdrawn assignment, is reused). Returns how many were added."""
    wanted = sorted(set(docnos))
    stale = {
        slot.docno: slot
        for slot in session.scalars(
            select(RoutingSlot).where(
                RoutingSlot.pool_id == assignment.pool_id,
                RoutingSlot.qid == assignment.qid,
                RoutingSlot.user_id == assignment.user_id,
                RoutingSlot.docno.in_(wanted),
            )
        )
    }
    for docno in wanted:
        slot = stale.get(docno)
        if slot is not None:
            slot.assignment_id, slot.role = assignment.id, role
            continue
        number = next_slot(session, assignment.pool_id, assignment.qid, docno)
        session.add(
            RoutingSlot(
                pool_id=assignment.pool_id,
                qid=assignment.qid,
                docno=docno,
                slot=number,
                assignment_id=assignment.id,
                user_id=assignment.user_id,
                role=role,
            )
        )
        session.flush()
    changes.changed(session, assignment.campaign_id)
    return len(wanted)


def move(session: Session, old: Assignment, new: Assignment, docnos: Iterable[str]) -> int:
    """Move the places of `old` on `docnos` to `new` (same pool and topic). Refused when the
    new assessor already holds one of them. Returns how many moved."""
    if (old.pool_id, old.qid) != (new.pool_id, new.qid):
        raise ServiceError("slots move only between assignments of the same pool and topic")
    wanted = sorted(set(docnos))
    held = set(
        session.scalars(
            select(RoutingSlot.docno).where(
                RoutingSlot.pool_id == new.pool_id,
                RoutingSlot.qid == new.qid,
                RoutingSlot.user_id == new.user_id,
                RoutingSlot.docno.in_(wanted),
            )
        )
    )
    if held:
        user = session.get(User, new.user_id)
        raise ServiceError(
            f"{user.username if user else new.user_id} already judges {len(held)} of these "
            f"documents of topic {new.qid} (e.g. {sorted(held)[0]})"
        )
    moved = cast_result(
        session.execute(
            update(RoutingSlot)
            .where(RoutingSlot.assignment_id == old.id, RoutingSlot.docno.in_(wanted))
            .values(assignment_id=new.id, user_id=new.user_id)
            .execution_options(synchronize_session=False)
        )
    ).rowcount
    changes.changed(session, new.campaign_id)
    return int(moved or 0)


def move_assignment(session: Session, old: Assignment, new: Assignment) -> None:
    """When a topic moves to another assessor (`assignments.reassign`): the new assignment
    takes every place of the old one, so that a routed assignment stays routed, and its place
    in the topic's order (`created_at`), so that an adaptive pool's primary judge (the
    earliest active assignment) stays primary."""
    if old.created_at is not None and (new.created_at is None or old.created_at < new.created_at):
        new.created_at = old.created_at
    docnos = slot_documents(session, [old]).get(old.id)
    if docnos:
        move(session, old, new, docnos)
    touch(session, old.pool_id)


def keep(session: Session, assignment: Assignment, docnos: Iterable[str]) -> None:
    """Mark the assignment's places on `docnos` as kept (`routing.KEPT`): judged documents it
    holds after its unjudged remainder moved to others."""
    session.execute(
        update(RoutingSlot)
        .where(RoutingSlot.assignment_id == assignment.id, RoutingSlot.docno.in_(sorted(docnos)))
        .values(role=routing.KEPT)
        .execution_options(synchronize_session=False)
    )
    changes.changed(session, assignment.campaign_id)


def has_kept(connection: Session | Connection, pool_id: int, qid: str, user_id: int) -> bool:
    """Whether the assessor's remainder of the pool's topic was reassigned (a kept place)."""
    found = connection.scalar(
        select(RoutingSlot.id)
        .where(
            RoutingSlot.pool_id == pool_id,
            RoutingSlot.qid == qid,
            RoutingSlot.user_id == user_id,
            RoutingSlot.role == routing.KEPT,
        )
        .limit(1)
    )
    return found is not None


def kept_places(session: Session, pool_ids: Sequence[int]) -> set[tuple[int, str, int]]:
    """(pool id, qid, user id) of the pools' assessors whose remainder was reassigned."""
    rows = session.execute(
        select(RoutingSlot.pool_id, RoutingSlot.qid, RoutingSlot.user_id)
        .where(RoutingSlot.pool_id.in_(pool_ids), RoutingSlot.role == routing.KEPT)
        .distinct()
    )
    return {(pool_id, qid, user_id) for pool_id, qid, user_id in rows}


def touch(session: Session | Connection, pool_id: int) -> None:
    """Bump the pool's revision: every cached queue of the pool is read again."""
    session.execute(update(Pool).where(Pool.id == pool_id).values(revision=Pool.revision + 1))


def unjudged(session: Session, assignment: Assignment, docnos: Iterable[str]) -> list[str]:
    """Of `docnos`, those the assignment's assessor has no current judgement of."""
    judged = {
        row.docno
        for row in current_judgements(
            session, assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id
        )
    }
    return sorted(d for d in docnos if d not in judged)
