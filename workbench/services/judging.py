"""Judging: the documents of an assignment in presentation order, recording and revising.

The order is the pool's per-assessor order (`pooling.presentation_order`), so the same
assessor always sees the same sequence. Every judgement is appended to the log; a retried
submission carries the same client_id and is stored once. The current value of a key is
read through `services.judgements.current_judgements`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.orm import Session

from workbench import pooling
from workbench.services.errors import NotFound, ServiceError
from workbench.services.judgements import current_judgements
from workbench.store.models import Assignment, Document, Grade, Judgement, Pool, PoolEntry

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


def _cache_for(session: Session) -> _SequenceCache:
    engine = session.get_bind().engine
    with _caches_lock:
        cache = _caches.get(engine)
        if cache is None:
            cache = _caches[engine] = _SequenceCache()
        return cache


_SAMPLED = (
    PoolEntry.pool_id == bindparam("pool_id"),
    PoolEntry.qid == bindparam("qid"),
    PoolEntry.sampled.is_(True),
)
# Built once: constructing a statement costs more than running it from the compiled cache.
_POOL_SIGNATURE = (
    select(Pool.seed, Pool.created_at, func.count(PoolEntry.id), func.max(PoolEntry.build))
    .select_from(Pool)
    .outerjoin(PoolEntry, and_(*_SAMPLED))
    .where(Pool.id == bindparam("pool_id"))
    .group_by(Pool.id, Pool.seed, Pool.created_at)
)
_POOL_ENTRIES = select(PoolEntry.docno, PoolEntry.build, PoolEntry.priority).where(*_SAMPLED)
_BY_CLIENT_ID = select(Judgement).where(
    Judgement.user_id == bindparam("user_id"), Judgement.client_id == bindparam("client_id")
)
_GRADE_VALUES = (
    select(Grade.value).where(Grade.campaign_id == bindparam("campaign_id")).order_by(Grade.value)
)


def sequence_of(session: Session, assignment: Assignment) -> DocumentSequence:
    """The assignment's documents in the pool's per-assessor presentation order.

    One aggregate query identifies the pool's entries for the topic; the order itself is
    computed (`pooling.presentation_order`) only when that identity was not seen before.
    """
    topic = {"pool_id": assignment.pool_id, "qid": assignment.qid}
    signature = session.execute(_POOL_SIGNATURE, topic).one()
    seed = signature[0]
    key = (assignment.pool_id, assignment.qid, assignment.user_id, assignment.order, *signature)
    cache = _cache_for(session)
    found = cache.get(key)
    if found is not None:
        return found
    rows = session.execute(_POOL_ENTRIES, topic).all()
    docnos = pooling.presentation_order(
        [row.docno for row in rows],
        mode=assignment.order,
        seed=seed,
        pool_id=assignment.pool_id,
        qid=assignment.qid,
        assessor_id=assignment.user_id,
        builds=[row.build for row in rows],
        priorities=[row.priority for row in rows],
    )
    sequence = DocumentSequence(tuple(docnos), {docno: i for i, docno in enumerate(docnos)})
    cache.put(key, sequence)
    return sequence


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


def grade_values(session: Session, campaign_id: int) -> list[int]:
    return list(session.scalars(_GRADE_VALUES, {"campaign_id": campaign_id}))


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


def judgement_summary(judgement: Judgement) -> dict:
    return {
        "id": judgement.id,
        "docno": judgement.docno,
        "grade": judgement.grade,
        "cannot_judge": judgement.cannot_judge,
        "comment": judgement.comment,
        "created_at": judgement.created_at.isoformat(timespec="seconds") + "Z",
    }


def record_judgement(
    session: Session, assignment: Assignment, data: JudgementInput
) -> tuple[Judgement, bool]:
    """Append a judgement for a document of `assignment`; returns (row, created).

    A client_id already stored for this assessor returns that row with created=False.
    Raises ServiceError for an inactive assignment, a document outside the assessor's
    sequence, a grade outside the campaign scale, a 'cannot judge' without a reason or text
    with a NUL character (which PostgreSQL cannot store).
    """
    if not assignment.active:
        raise ServiceError("this assignment has been withdrawn")
    texts = (data.docno, data.cannot_judge or "", data.comment, data.client_id or "")
    if any("\x00" in text for text in texts):
        raise ServiceError("the judgement contains a NUL character")
    if data.client_id is not None:
        if not data.client_id or len(data.client_id) > MAX_CLIENT_ID_LENGTH:
            raise ServiceError(f"client_id must be 1 to {MAX_CLIENT_ID_LENGTH} characters")
        stored = session.scalar(
            _BY_CLIENT_ID, {"user_id": assignment.user_id, "client_id": data.client_id}
        )
        if stored is not None:
            if (stored.qid, stored.docno) != (assignment.qid, data.docno):
                raise ServiceError("client_id was already used for another document")
            return stored, False
    position = sequence_of(session, assignment).positions.get(data.docno)
    if position is None:
        raise NotFound(f"document {data.docno!r} is not in this assignment")
    if data.grade is None:
        reason = (data.cannot_judge or "").strip()
        if not reason:
            raise ServiceError("give a grade, or a reason why the document cannot be judged")
    else:
        allowed = grade_values(session, assignment.campaign_id)
        if data.grade not in allowed:
            raise ServiceError(
                f"grade {data.grade} is not on the scale: expected one of "
                f"{', '.join(map(str, allowed))}"
            )
        reason = None
    if len(data.comment) > MAX_COMMENT_LENGTH:
        raise ServiceError(f"comment longer than {MAX_COMMENT_LENGTH} characters")
    judgement = Judgement(
        campaign_id=assignment.campaign_id,
        qid=assignment.qid,
        docno=data.docno,
        user_id=assignment.user_id,
        grade=data.grade,
        cannot_judge=reason,
        comment=data.comment.strip(),
        time_spent_ms=min(max(int(data.time_spent_ms), 0), MAX_TIME_SPENT_MS),
        position=position,
        client_id=data.client_id,
    )
    session.add(judgement)
    session.flush()
    return judgement, True
