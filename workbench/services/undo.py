"""Undo on the judging pages: take back an assessor's last judgement of a topic as a revision.

The judgement log stays append-only: an undo is a new event that restores the document's state
before the judgement it takes back (`current_judgements.undo_step` finds which one, so that
repeated undos walk further back) and names that event (`undoes_id`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import limits
from workbench.services import changes
from workbench.services.assignments import own_assignment
from workbench.services.current_judgements import JudgementRow, current_judgements, undo_step
from workbench.services.errors import Conflict, ServiceError
from workbench.services.judging import MARK_COLUMNS, sequence_of
from workbench.store.models import Campaign, Judgement, Pool


@dataclass(frozen=True)
class Undone:
    """What an undo did: the document whose judgement it took back, its position in the
    assessor's sequence, and its judgement now (None: not judged any more). `created` is
    False when the client_id had already been used for this undo (a retry)."""

    docno: str
    position: int
    judgement: JudgementRow | None
    created: bool


_EVENTS = select(*MARK_COLUMNS, Judgement.undoes_id)


def refuse_if_read_only(session: Session, campaign_id: int, pool_id: int) -> None:
    """Conflict while the campaign or the pool of an assignment is archived."""
    campaign, pool = session.get_one(Campaign, campaign_id), session.get_one(Pool, pool_id)
    if campaign.archived_at is not None or pool.archived_at is not None:
        what = f"campaign {campaign.name!r}" if campaign.archived_at else f"pool {pool.number}"
        raise Conflict(f"{what} is archived: it accepts no judgements until an admin restores it")


def undo_last_judgement(
    session: Session, assignment_id: int, user_id: int, client_id: str | None = None
) -> Undone:
    """Take back the assessor's last judgement in this assignment: a new event restores the
    document's earlier grade, reason, comment and evidence, or no judgement at all.

    NotFound for an assignment that is not the user's or withdrawn; Conflict while its
    campaign or pool is archived; ServiceError when nothing is left to undo.
    """
    if client_id is not None and not 0 < len(client_id) <= limits.CLIENT_ID:
        raise ServiceError(f"client_id must be 1 to {limits.CLIENT_ID} characters")
    assignment = own_assignment(session, assignment_id, user_id)
    positions = sequence_of(session, assignment).positions

    def now(docno: str) -> JudgementRow | None:
        rows = current_judgements(
            session, assignment.campaign_id, qid=assignment.qid, user_id=user_id
        )
        return next((row for row in rows if row.docno == docno), None)

    mine = _EVENTS.where(
        Judgement.campaign_id == assignment.campaign_id, Judgement.user_id == user_id
    )
    if client_id is not None:
        stored = session.execute(mine.where(Judgement.client_id == client_id)).first()
        if stored is not None:
            if stored.undoes_id is None:
                raise ServiceError("client_id was already used for a judgement")
            return Undone(stored.docno, positions.get(stored.docno, -1), now(stored.docno), False)
    refuse_if_read_only(session, assignment.campaign_id, assignment.pool_id)
    events = session.execute(mine.where(Judgement.qid == assignment.qid).order_by(Judgement.id))
    step = undo_step((e for e in events if e.docno in positions), key=lambda e: e.docno)
    if step is None:
        raise ServiceError("nothing to undo: no judgement of this topic is left to take back")
    target, restored = step
    session.add(
        Judgement(
            campaign_id=assignment.campaign_id,
            qid=assignment.qid,
            docno=target.docno,
            user_id=user_id,
            grade=restored.grade if restored else None,
            cannot_judge=restored.cannot_judge if restored else None,
            comment=restored.comment if restored else "",
            evidence=restored.evidence if restored else None,
            time_spent_ms=0,
            position=positions[target.docno],
            client_id=client_id,
            undoes_id=target.id,
        )
    )
    changes.changed(session, assignment.campaign_id)
    session.flush()
    return Undone(target.docno, positions[target.docno], now(target.docno), True)
