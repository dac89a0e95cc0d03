"""Archive and delete campaigns, runs, topics, pools and users.

Archiving hides an object (lists leave it out, pools skip it, assessors no longer see an
archived campaign's topics) and makes it read-only; restoring brings it back unchanged.
Deleting is for mistakes: it is refused while anything a judgement depends on exists (the
judgement log is never deleted), and `dependents` gives the counts the admin sees first:
every row that goes with the object is counted there, those of the machine judges, routing,
gold documents and practice sets included. Most go by their foreign keys' cascades; the rows
keyed by a topic's qid (gold documents, practice items, machine labels) and the machine jobs
scoped to a pool (a JSON scope) are deleted here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from workbench.services import campaigns, changes, pools
from workbench.services import users as user_service
from workbench.services.errors import ServiceError, found
from workbench.store.models import (
    Assignment,
    CalibrationAnswer,
    CalibrationItem,
    Campaign,
    Document,
    FinalLabel,
    GoldDocument,
    Judgement,
    MachineJob,
    MachineJudge,
    MachineJudgement,
    Pool,
    PoolEntry,
    PoolRun,
    QrelsSet,
    RoutingSlot,
    Run,
    Topic,
    User,
    utcnow,
)

KINDS: dict[str, Any] = {
    "campaign": Campaign,
    "run": Run,
    "topic": Topic,
    "pool": Pool,
    "user": User,
}


@dataclass(frozen=True)
class Dependents:
    """What depends on an object: counts by what they are; `blocking` names the counts that
    forbid deleting it (judgements, adjudications, pools built from a run or topic)."""

    counts: dict[str, int]
    blocking: tuple[str, ...]

    @property
    def deletable(self) -> bool:
        return not any(self.counts[name] for name in self.blocking)

    def summary(self, names: tuple[str, ...] | None = None) -> str:
        """'1 judgement, 2 topics' for the non-zero counts (of `names`, default all)."""
        chosen = self.counts if names is None else {n: self.counts[n] for n in names}
        shown = [_counted(n, name) for name, n in chosen.items() if n]
        return ", ".join(shown) or "nothing"


def _counted(n: int, plural: str) -> str:
    """'1 judgement', '2 judgements' (every name here is a plural in -s)."""
    return f"{n} {plural[:-1] if n == 1 else plural}"


def _count(session: Session, model: Any, *conditions: Any) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*conditions)) or 0


def dependents(session: Session, obj: Any) -> Dependents:
    """Counts of what depends on `obj` (a Campaign, Run, Topic, Pool or User)."""
    if isinstance(obj, Campaign):
        counts = {
            "judgements": _count(session, Judgement, Judgement.campaign_id == obj.id),
            "topics": _count(session, Topic, Topic.campaign_id == obj.id),
            "documents": _count(session, Document, Document.campaign_id == obj.id),
            "runs": _count(session, Run, Run.campaign_id == obj.id),
            "pools": _count(session, Pool, Pool.campaign_id == obj.id),
            "assignments": _count(session, Assignment, Assignment.campaign_id == obj.id),
            "qrels sets": _count(session, QrelsSet, QrelsSet.campaign_id == obj.id),
            "machine judges": _count(session, MachineJudge, MachineJudge.campaign_id == obj.id),
            "machine labels": _count(
                session, MachineJudgement, MachineJudgement.campaign_id == obj.id
            ),
            "machine jobs": _count(session, MachineJob, MachineJob.campaign_id == obj.id),
            "gold documents": _count(session, GoldDocument, GoldDocument.campaign_id == obj.id),
            "practice items": _count(
                session, CalibrationItem, CalibrationItem.campaign_id == obj.id
            ),
            "practice answers": _count(
                session, CalibrationAnswer, CalibrationAnswer.item_id.in_(
                    select(CalibrationItem.id).where(CalibrationItem.campaign_id == obj.id)
                ),
            ),
            "routing slots": _count(
                session, RoutingSlot,
                RoutingSlot.pool_id.in_(select(Pool.id).where(Pool.campaign_id == obj.id)),
            ),
        }  # fmt: skip
        return Dependents(counts, ("judgements",))
    if isinstance(obj, Run):
        counts = {"pools": _count(session, PoolRun, PoolRun.run_id == obj.id)}
        return Dependents(counts, ("pools",))
    if isinstance(obj, Topic):
        same = (Judgement.campaign_id == obj.campaign_id, Judgement.qid == obj.qid)
        pooled = select(Pool.id).where(Pool.campaign_id == obj.campaign_id)
        counts = {
            "judgements": _count(session, Judgement, *same),
            "pooled documents": _count(
                session, PoolEntry, PoolEntry.pool_id.in_(pooled), PoolEntry.qid == obj.qid
            ),
            **{
                name: _count(session, model, *_of_topic(model, obj))
                for name, model in _TOPIC_ROWS.items()
            },
            "practice answers": _count(
                session, CalibrationAnswer, CalibrationAnswer.item_id.in_(
                    select(CalibrationItem.id).where(*_of_topic(CalibrationItem, obj))
                ),
            ),
        }  # fmt: skip
        return Dependents(counts, ("judgements", "pooled documents"))
    if isinstance(obj, Pool):
        assigned = select(Assignment.id).where(
            Assignment.pool_id == obj.id,
            Assignment.qid == Judgement.qid,
            Assignment.user_id == Judgement.user_id,
        )
        judged = _count(
            session, Judgement, Judgement.campaign_id == obj.campaign_id, assigned.exists()
        )
        counts = {
            "judgements": judged,
            "assignments": _count(session, Assignment, Assignment.pool_id == obj.id),
            "pooled documents": _count(session, PoolEntry, PoolEntry.pool_id == obj.id),
            "routing slots": _count(session, RoutingSlot, RoutingSlot.pool_id == obj.id),
            "machine jobs": len(_pool_jobs(session, obj)),
        }
        return Dependents(counts, ("judgements",))
    if isinstance(obj, User):
        counts = {
            "judgements": _count(session, Judgement, Judgement.user_id == obj.id),
            "adjudications": _count(session, FinalLabel, FinalLabel.adjudicator_id == obj.id),
            "assignments": _count(session, Assignment, Assignment.user_id == obj.id),
            "routing slots": _count(session, RoutingSlot, RoutingSlot.user_id == obj.id),
            "practice answers": _count(
                session, CalibrationAnswer, CalibrationAnswer.user_id == obj.id
            ),
        }
        return Dependents(counts, ("judgements", "adjudications"))
    raise TypeError(f"cannot archive {type(obj).__name__}")


_TOPIC_ROWS: dict[str, Any] = {
    "gold documents": GoldDocument,
    "practice items": CalibrationItem,
    "machine labels": MachineJudgement,
}
"""Rows keyed by a topic's (campaign, qid) without a foreign key to it: deleted with it."""


def _of_topic(model: Any, topic: Topic) -> tuple[Any, Any]:
    return (model.campaign_id == topic.campaign_id, model.qid == topic.qid)


def _pool_jobs(session: Session, pool: Pool) -> list[int]:
    """The ids of the machine jobs scoped to the pool (`MachineJob.scope['pool']`)."""
    rows = session.execute(
        select(MachineJob.id, MachineJob.scope).where(MachineJob.campaign_id == pool.campaign_id)
    )
    return [job_id for job_id, scope in rows if (scope or {}).get("pool") == pool.id]


@dataclass(frozen=True)
class Archivable:
    """What the pages show of an archivable object: its kind ('campaign', 'run', 'topic',
    'pool', 'user'), id, name in messages (`name_of`), and its campaign (None for a campaign
    or a user)."""

    kind: str
    id: int
    name: str
    archived_at: dt.datetime | None
    campaign_id: int | None


def archivable(obj: Any) -> Archivable:
    kind = next(kind for kind, model in KINDS.items() if isinstance(obj, model))
    campaign_id = None if isinstance(obj, Campaign | User) else obj.campaign_id
    return Archivable(kind, obj.id, name_of(obj), obj.archived_at, campaign_id)


def name_of(obj: Any) -> str:
    """How the object is named in messages."""
    if isinstance(obj, Campaign):
        return f"campaign {obj.name!r}"
    if isinstance(obj, Run):
        return f"run {obj.tag!r}"
    if isinstance(obj, Topic):
        return f"topic {obj.qid!r}"
    if isinstance(obj, Pool):
        return f"pool {obj.number}"
    return f"user {obj.username!r}"


def set_archived(session: Session, obj: Any, archived: bool) -> None:
    """Archive (hide, read-only) or restore. An archived user cannot log in (deactivated; the
    last active admin cannot be archived); a restored one is active again."""
    if isinstance(obj, User):
        user_service.set_active(session, obj, not archived)
    obj.archived_at = utcnow() if archived else None
    session.flush()


def delete_object(session: Session, obj: Any) -> None:
    """Delete an object nothing a judgement depends on refers to; ServiceError otherwise."""
    found = dependents(session, obj)
    if not found.deletable:
        blocking = found.summary(found.blocking)
        raise ServiceError(
            f"{name_of(obj)} cannot be deleted while it has {blocking} (judgements are never "
            "deleted): archive it instead"
        )
    if isinstance(obj, User):
        user_service.set_active(session, obj, False)  # refuses the last active admin
    if isinstance(obj, Topic):
        for rows in _TOPIC_ROWS.values():
            session.execute(delete(rows).where(*_of_topic(rows, obj)))
    if isinstance(obj, Pool):
        jobs = _pool_jobs(session, obj)
        if jobs:
            session.execute(delete(MachineJob).where(MachineJob.id.in_(jobs)))
    for campaign_id in _tracked_campaigns(session, obj):
        changes.changed(session, campaign_id)
    model = type(obj)
    session.execute(delete(model).where(model.id == obj.id))
    session.expunge(obj)


def _tracked_campaigns(session: Session, obj: Any) -> list[int]:
    """The campaigns whose `changes.TRACKED` rows deleting `obj` may delete (by cascade): a
    run's, topic's or pool's own; a user's routing places' (a deleted campaign has no count)."""
    if isinstance(obj, Campaign):
        return []
    if isinstance(obj, User):
        query = (
            select(Pool.campaign_id)
            .join(RoutingSlot, RoutingSlot.pool_id == Pool.id)
            .where(RoutingSlot.user_id == obj.id)
            .distinct()
        )
        return list(session.scalars(query))
    return [obj.campaign_id]


def get_object(session: Session, kind: str, object_id: int) -> Any:
    """The archivable object of that kind and id; NotFound otherwise."""
    model = KINDS.get(kind)
    obj = session.get(model, object_id) if model is not None else None
    return found(obj, f"no {kind} {object_id}")


def find_object(session: Session, kind: str, name: str, campaign: str | None = None) -> Any:
    """The object as people name it: a campaign by name (or id), a user by username, and
    within `campaign` a run by tag, a topic by qid, a pool by number. NotFound otherwise."""
    if kind == "campaign":
        return campaigns.get_campaign(session, name)
    if kind == "user":
        return user_service.get_user(session, name)
    if kind not in KINDS:
        raise ServiceError(f"cannot archive a {kind}: expected one of {', '.join(KINDS)}")
    if campaign is None:
        raise ServiceError(f"name the campaign of the {kind}")
    owner = campaigns.get_campaign(session, campaign)
    if kind == "pool":
        if not (name.isascii() and name.isdecimal() and len(name) <= 9):
            raise ServiceError(f"a pool is named by its number in the campaign; got {name!r}")
        return pools.get_pool(session, owner, int(name))
    model, column = (Run, Run.tag) if kind == "run" else (Topic, Topic.qid)
    row = session.scalar(select(model).where(model.campaign_id == owner.id, column == name))
    return found(row, f"campaign {owner.name!r} has no {kind} {name!r}")


def refuse_if_archived(campaign: Campaign) -> None:
    """An archived campaign is read-only."""
    if campaign.archived_at is not None:
        raise ServiceError(f"campaign {campaign.name!r} is archived: restore it to change it")


def writable_campaign(session: Session, name_or_id: str | int) -> Campaign:
    """The campaign to change (NotFound if there is none), refused if it is archived."""
    campaign = campaigns.get_campaign(session, name_or_id)
    refuse_if_archived(campaign)
    return campaign


def refuse_if_pool_archived(session: Session, pool: Pool) -> None:
    """A pool of an archived campaign, or an archived pool, is read-only."""
    campaign = session.get(Campaign, pool.campaign_id)
    if campaign is not None:
        refuse_if_archived(campaign)
    if pool.archived_at is not None:
        raise ServiceError(f"pool {pool.number} is archived: restore it to change it")
