"""Judging: the documents of an assignment in presentation order, recording and revising.

The order is the pool's per-assessor order (`pooling.presentation_order`), so the same
assessor always sees the same sequence. Every judgement is appended to the log; a retried
submission carries the same client_id and is stored once. The current value of a key is
read through `services.judgements.current_judgements`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, bindparam, exists, func, select
from sqlalchemy.orm import Session

from workbench import pooling
from workbench.services.errors import NotFound, ServiceError
from workbench.services.judgements import current_judgements
from workbench.store.models import (
    Assignment,
    Document,
    Grade,
    Judgement,
    Pool,
    PoolEntry,
    PoolRun,
    utcnow,
)

MAX_TIME_SPENT_MS = 24 * 3600 * 1000
MAX_COMMENT_LENGTH = 10_000
MAX_CLIENT_ID_LENGTH = 64


@dataclass(frozen=True)
class JudgementInput:
    """What an assessor submits for one document. grade None means 'cannot judge'."""

    docno: str
    grade: int | None
    cannot_judge: str | None = None
    comment: str = ""
    time_spent_ms: int = 0
    client_id: str | None = None


@dataclass(frozen=True)
class DocumentSequence:
    """An assignment's docnos in presentation order, with each docno's position."""

    docnos: tuple[str, ...]
    positions: dict[str, int]


class _SequenceCache:
    """Bounded, thread-safe LRU of presentation orders, one per engine (so per store).

    The order is a pure function of the pool (id, seed, creation time), the topic, the
    assessor, the order mode and the pool's sampled entries; entries are only ever added, in
    a new build, so (count, latest build) of the topic's entries identifies their set.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._orders: OrderedDict[tuple, DocumentSequence] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> DocumentSequence | None:
        with self._lock:
            found = self._orders.get(key)
            if found is not None:
                self._orders.move_to_end(key)
            return found

    def put(self, key: tuple, sequence: DocumentSequence) -> None:
        with self._lock:
            self._orders[key] = sequence
            self._orders.move_to_end(key)
            while len(self._orders) > self._size:
                self._orders.popitem(last=False)


_caches: weakref.WeakKeyDictionary[object, _SequenceCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache_for(engine: Engine) -> _SequenceCache:
    with _caches_lock:
        cache = _caches.get(engine)
        if cache is None:
            cache = _caches[engine] = _SequenceCache()
        return cache


# The statements are built once: constructing a statement costs more than running it from
# SQLAlchemy's compiled cache. Entries are only ever added to a pool with its runs, as a new
# build, so (seed, creation time, latest build) identifies the entries of each of its topics.
_SIGNATURE = (
    select(
        Pool.seed,
        Pool.created_at,
        select(func.max(PoolRun.build)).where(PoolRun.pool_id == Pool.id).scalar_subquery(),
    )
    .select_from(Assignment)
    .join(Pool, Pool.id == Assignment.pool_id)
    .where(Assignment.id == bindparam("assignment_id"))
)
_SUBMIT_CONTEXT = _SIGNATURE.add_columns(
    Assignment.campaign_id,
    Assignment.pool_id,
    Assignment.qid,
    Assignment.user_id,
    Assignment.order,
    Assignment.active,
    exists()
    .where(Grade.campaign_id == Assignment.campaign_id, Grade.value == bindparam("grade"))
    .label("grade_on_scale"),
    select(Judgement.id)
    .where(Judgement.user_id == Assignment.user_id, Judgement.client_id == bindparam("client_id"))
    .scalar_subquery()
    .label("stored_id"),
)
_POOL_ENTRIES = select(PoolEntry.docno, PoolEntry.build, PoolEntry.priority).where(
    PoolEntry.pool_id == bindparam("pool_id"),
    PoolEntry.qid == bindparam("qid"),
    PoolEntry.sampled.is_(True),
)
_STORED = select(
    Judgement.id,
    Judgement.qid,
    Judgement.docno,
    Judgement.grade,
    Judgement.cannot_judge,
    Judgement.comment,
    Judgement.position,
    Judgement.created_at,
).where(Judgement.id == bindparam("id"))
_INSERT = Judgement.__table__.insert()
_GRADE_VALUES = (
    select(Grade.value).where(Grade.campaign_id == bindparam("campaign_id")).order_by(Grade.value)
)


class AssignmentLike(Protocol):
    pool_id: int
    qid: str
    user_id: int
    order: str


def _sequence(
    connection: Connection, assignment: AssignmentLike, signature: tuple
) -> DocumentSequence:
    """The presentation order for this signature (seed, created_at, latest build), computed
    (`pooling.presentation_order`) only when the signature was not seen before."""
    key = (assignment.pool_id, assignment.qid, assignment.user_id, assignment.order, *signature)
    cache = _cache_for(connection.engine)
    found = cache.get(key)
    if found is not None:
        return found
    topic = {"pool_id": assignment.pool_id, "qid": assignment.qid}
    rows = connection.execute(_POOL_ENTRIES, topic).all()
    docnos = pooling.presentation_order(
        [row.docno for row in rows],
        mode=assignment.order,
        seed=signature[0],
        pool_id=assignment.pool_id,
        qid=assignment.qid,
        assessor_id=assignment.user_id,
        builds=[row.build for row in rows],
        priorities=[row.priority for row in rows],
    )
    sequence = DocumentSequence(tuple(docnos), {docno: i for i, docno in enumerate(docnos)})
    cache.put(key, sequence)
    return sequence


def sequence_of(session: Session, assignment: Assignment) -> DocumentSequence:
    """The assignment's documents in the pool's per-assessor presentation order.

    One query reads the signature of the pool's entries; the order itself is computed only
    when that signature was not seen before.
    """
    signature = session.execute(_SIGNATURE, {"assignment_id": assignment.id}).one()
    return _sequence(session.connection(), assignment, tuple(signature))


def document_sequence(session: Session, assignment: Assignment) -> list[str]:
    """The docnos the assessor judges, in the pool's per-assessor presentation order."""
    return list(sequence_of(session, assignment).docnos)


def my_judgements(session: Session, assignment: Assignment) -> dict[str, Judgement]:
    """The assessor's current judgement per docno of this topic (own judgements only)."""
    rows = current_judgements(
        session, assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id
    )
    return {row.docno: row for row in rows}


def resume_position(
    session: Session, assignment: Assignment, sequence: list[str] | None = None
) -> int:
    """Where the assessor left off: just after the document judged last.

    Past the end it is the first unjudged document, or the last one when all are judged.
    """
    sequence = document_sequence(session, assignment) if sequence is None else sequence
    if not sequence:
        return 0
    index = {docno: i for i, docno in enumerate(sequence)}
    latest = session.scalar(
        select(Judgement.docno)
        .where(
            Judgement.campaign_id == assignment.campaign_id,
            Judgement.qid == assignment.qid,
            Judgement.user_id == assignment.user_id,
            Judgement.docno.in_(sequence),
        )
        .order_by(Judgement.id.desc())
        .limit(1)
    )
    position = 0 if latest is None else index[latest] + 1
    if position < len(sequence):
        return position
    judged = my_judgements(session, assignment)
    unjudged = [i for i, docno in enumerate(sequence) if docno not in judged]
    return unjudged[0] if unjudged else len(sequence) - 1


def grade_values(connection: Connection | Session, campaign_id: int) -> list[int]:
    return list(connection.scalars(_GRADE_VALUES, {"campaign_id": campaign_id}))


def document_at(session: Session, assignment: Assignment, position: int) -> dict:
    """The document at `position` of the assessor's sequence, with their current judgement."""
    sequence = document_sequence(session, assignment)
    if not 0 <= position < len(sequence):
        raise NotFound(f"position {position} is outside 0..{len(sequence) - 1}")
    docno = sequence[position]
    document = session.scalar(
        select(Document).where(
            Document.campaign_id == assignment.campaign_id, Document.docno == docno
        )
    )
    current = my_judgements(session, assignment).get(docno)
    return {
        "position": position,
        "total": len(sequence),
        "docno": docno,
        "title": document.title if document else "",
        "text": document.text if document else "",
        "missing": document is None,
        "judgement": None if current is None else judgement_summary(current),
    }


@dataclass(frozen=True)
class RecordedJudgement:
    """A row of the judgement log as `record_judgement` stored or found it."""

    id: int
    qid: str
    docno: str
    grade: int | None
    cannot_judge: str | None
    comment: str
    position: int | None
    created_at: dt.datetime


_RECORDED_FIELDS = tuple(field.name for field in dataclasses.fields(RecordedJudgement))


def judgement_summary(judgement: Judgement | RecordedJudgement) -> dict:
    return {
        "id": judgement.id,
        "docno": judgement.docno,
        "grade": judgement.grade,
        "cannot_judge": judgement.cannot_judge,
        "comment": judgement.comment,
        "created_at": judgement.created_at.isoformat(timespec="seconds") + "Z",
    }


def _check_text(data: JudgementInput) -> None:
    texts = (data.docno, data.cannot_judge or "", data.comment, data.client_id or "")
    if any("\x00" in text for text in texts):
        raise ServiceError("the judgement contains a NUL character")
    if data.client_id is not None and not 0 < len(data.client_id) <= MAX_CLIENT_ID_LENGTH:
        raise ServiceError(f"client_id must be 1 to {MAX_CLIENT_ID_LENGTH} characters")
    if len(data.comment) > MAX_COMMENT_LENGTH:
        raise ServiceError(f"comment longer than {MAX_COMMENT_LENGTH} characters")


def record_judgement(
    connection: Connection, assignment_id: int, user_id: int, data: JudgementInput
) -> tuple[RecordedJudgement, bool]:
    """Append `user_id`'s judgement for a document of assignment `assignment_id`; returns
    (row, created).

    A client_id already stored for this assessor returns that row with created=False.
    Raises NotFound for an assignment that is not the user's or has been withdrawn, or a
    document outside the assessor's sequence; ServiceError for a grade outside the campaign
    scale, a 'cannot judge' without a reason, or text with a NUL character (which PostgreSQL
    cannot store). One query reads everything that is checked, one statement appends. It
    needs no transaction around the two (`Store.connection(autocommit=True)`): a concurrent
    retry of the same client_id is refused by the unique constraint (IntegrityError, which
    the caller retries), and a withdrawal committed in between is as if it came just after.
    """
    _check_text(data)
    context = connection.execute(
        _SUBMIT_CONTEXT,
        {"assignment_id": assignment_id, "grade": data.grade, "client_id": data.client_id},
    ).first()
    if context is None or context.user_id != user_id:
        raise NotFound(f"assignment {assignment_id} is not one of yours")
    if not context.active:
        raise NotFound("this assignment has been withdrawn")
    if context.stored_id is not None:
        stored = RecordedJudgement(
            **connection.execute(_STORED, {"id": context.stored_id}).one()._mapping
        )
        if (stored.qid, stored.docno) != (context.qid, data.docno):
            raise ServiceError("client_id was already used for another document")
        return stored, False
    position = _sequence(connection, context, tuple(context)[:3]).positions.get(data.docno)
    if position is None:
        raise NotFound(f"document {data.docno!r} is not in this assignment")
    if data.grade is None:
        reason = (data.cannot_judge or "").strip()
        if not reason:
            raise ServiceError("give a grade, or a reason why the document cannot be judged")
    elif not context.grade_on_scale:
        allowed = grade_values(connection, context.campaign_id)
        raise ServiceError(
            f"grade {data.grade} is not on the scale: expected one of "
            f"{', '.join(map(str, allowed))}"
        )
    else:
        reason = None
    values = {
        "campaign_id": context.campaign_id,
        "qid": context.qid,
        "docno": data.docno,
        "user_id": user_id,
        "grade": data.grade,
        "cannot_judge": reason,
        "comment": data.comment.strip(),
        "time_spent_ms": min(max(int(data.time_spent_ms), 0), MAX_TIME_SPENT_MS),
        "position": position,
        "client_id": data.client_id,
        "created_at": utcnow(),
    }
    (new_id,) = connection.execute(_INSERT, values).inserted_primary_key
    fields = {name: values[name] for name in _RECORDED_FIELDS if name != "id"}
    return RecordedJudgement(id=new_id, **fields), True
