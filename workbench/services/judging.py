"""Judging: the documents of an assignment in presentation order, recording and revising.

The order is the pool's per-assessor order (`presentation.presentation_order`), so the same
assessor always sees the same sequence. Every judgement is appended to the log; a retried
submission carries the same client_id and is stored once. The current value of a key is
read through `services.current_judgements.current_judgements`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import (
    JSON,
    Connection,
    DateTime,
    Integer,
    String,
    Text,
    bindparam,
    exists,
    func,
    insert,
    or_,
    select,
)
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from workbench import highlight, limits, presentation
from workbench.lru import LRU, PerEngine
from workbench.services import adaptive_pools, changes, gold, slots
from workbench.services.current_judgements import (
    HAS_JUDGEMENT,
    JUDGEMENT_ROW,
    JudgementRow,
    current_judgements,
    is_current,
    plain_rows,
)
from workbench.services.errors import Conflict, NotFound, ServiceError
from workbench.store.db import Store
from workbench.store.models import (
    Assignment,
    Campaign,
    Document,
    Grade,
    Judgement,
    Pool,
    PoolEntry,
    PoolRun,
    utcnow,
)

MAX_TIME_SPENT_MS = 24 * 3600 * 1000
MAX_COMMENT_LENGTH = limits.COMMENT
MAX_CLIENT_ID_LENGTH = limits.CLIENT_ID


@dataclass(frozen=True)
class JudgementInput:
    """What an assessor submits for one document. grade None means 'cannot judge'."""

    docno: str
    grade: int | None
    cannot_judge: str | None = None
    comment: str = ""
    time_spent_ms: int = 0
    client_id: str | None = None
    evidence: tuple[tuple[int, int], ...] = ()  # marked passages: (start, end) offsets


@dataclass(frozen=True)
class DocumentSequence:
    """An assignment's docnos in presentation order, with each docno's position."""

    docnos: tuple[str, ...]
    positions: dict[str, int]


KEPT_SEQUENCE_DOCUMENTS = 500_000
"""How many documents (over every kept judging sequence) a process keeps per store: about
60 MiB (a sequence of 2,650 documents, its order and positions, takes 322 KiB, measured
with tracemalloc at TREC size), about 190 sequences of that size: two topics of each of a
TREC-size campaign's 75 judges. Bounded by count, 4,096 such sequences were 1.3 GiB."""


@dataclass
class _EngineCaches:
    """Per engine (so per store): presentation orders by (pool, topic, assessor, order mode,
    signature), a pure function of those, bounded by the documents they hold; and what the
    last submit of each assignment learnt (`_Known`), which a submit only ever uses as a
    guess that its statement checks."""

    sequences: LRU = dataclasses.field(
        default_factory=lambda: LRU(
            KEPT_SEQUENCE_DOCUMENTS, weigh=lambda sequence: len(sequence.docnos) + 1
        )
    )
    assignments: LRU = dataclasses.field(default_factory=lambda: LRU(16384))


_caches_for = PerEngine(_EngineCaches)


# The statements are built once: constructing a statement costs more than running it from
# SQLAlchemy's compiled cache. Entries are only ever added to a pool with its runs, as a new
# build, so (seed, creation time, latest build) identifies the entries of each of its topics.
_LATEST_BUILD = select(func.max(PoolRun.build)).where(PoolRun.pool_id == Pool.id).scalar_subquery()
_GRADE_ON_SCALE = exists().where(
    Grade.campaign_id == Assignment.campaign_id,
    Grade.value == bindparam("grade", type_=Integer),
)
_STORED_ID = (
    select(Judgement.id)
    .where(
        Judgement.campaign_id == Assignment.campaign_id,
        Judgement.user_id == Assignment.user_id,
        Judgement.client_id == bindparam("client_id", type_=String),
    )
    .scalar_subquery()
)
_SIGNATURE = (
    select(Pool.seed, Pool.created_at, _LATEST_BUILD.label("latest_build"), Pool.revision)
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
    _GRADE_ON_SCALE.label("grade_on_scale"),
    _STORED_ID.label("stored_id"),
    Campaign.name.label("campaign_name"),
    Campaign.archived_at.label("campaign_archived_at"),
    Pool.number.label("pool_number"),
    Pool.archived_at.label("pool_archived_at"),
).join(Campaign, Campaign.id == Assignment.campaign_id)
_INSERTED = (  # the columns a submit writes, in this order
    "campaign_id",
    "qid",
    "docno",
    "user_id",
    "grade",
    "cannot_judge",
    "comment",
    "time_spent_ms",
    "position",
    "client_id",
    "created_at",
    "evidence",
)
# One statement that appends a judgement if the guess (`_Known`) still holds: the assignment
# is the user's, active, in the same order mode and pool signature; neither its campaign nor
# its pool is archived (read in the statement itself, so no cache can miss an archiving by
# another process); the grade is on the scale (or it is 'cannot judge'); the client_id is new.
# No row: the caller checks one by one.
_APPEND_IF_KNOWN = (
    insert(Judgement)
    .from_select(
        list(_INSERTED),
        select(
            Assignment.campaign_id,
            Assignment.qid,
            bindparam("docno", type_=String),
            Assignment.user_id,
            bindparam("grade", type_=Integer),
            bindparam("cannot_judge", type_=Text),
            bindparam("comment", type_=Text),
            bindparam("time_spent_ms", type_=Integer),
            bindparam("position", type_=Integer),
            bindparam("client_id", type_=String),
            bindparam("created_at", type_=DateTime),
            bindparam("evidence", type_=JSON),
        )
        .join(Pool, Pool.id == Assignment.pool_id)
        .join(Campaign, Campaign.id == Assignment.campaign_id)
        .where(
            Assignment.id == bindparam("assignment_id"),
            Assignment.user_id == bindparam("user_id"),
            Assignment.active.is_(True),
            Campaign.archived_at.is_(None),
            Pool.archived_at.is_(None),
            Assignment.order == bindparam("order"),
            Pool.seed == bindparam("seed"),
            Pool.created_at == bindparam("pool_created_at", type_=DateTime),
            func.coalesce(_LATEST_BUILD, -1) == bindparam("latest_build"),
            Pool.revision == bindparam("revision"),
            or_(bindparam("grade", type_=Integer).is_(None), _GRADE_ON_SCALE),
            _STORED_ID.is_(None),
        ),
    )
    .returning(Judgement.id, Judgement.campaign_id)
)
_POOL_ENTRIES = select(PoolEntry.docno, PoolEntry.build, PoolEntry.priority).where(
    PoolEntry.pool_id == bindparam("pool_id"),
    PoolEntry.qid == bindparam("qid"),
    PoolEntry.sampled.is_(True),
)
_STORED = JUDGEMENT_ROW.where(Judgement.id == bindparam("id"))
_INSERT = (
    insert(Judgement)
    .values(
        {
            column: bindparam(column.name, type_=column.type)
            for column in Judgement.__table__.c
            if column.name in _INSERTED
        }
    )
    .returning(Judgement.id, Judgement.campaign_id)
)
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
    (`presentation.presentation_order`) only when the signature was not seen before."""
    key = (assignment.pool_id, assignment.qid, assignment.user_id, assignment.order, *signature)
    cache = _caches_for(connection.engine).sequences
    found = cache.get(key)
    if found is not None:
        return found
    topic = {"pool_id": assignment.pool_id, "qid": assignment.qid}
    rows = connection.execute(_POOL_ENTRIES, topic).all()
    rows = adaptive_pools.visible_entries(connection, assignment, rows)  # adaptive pools
    rows = slots.routed_entries(connection, assignment, rows)  # routed pools
    # (docno, build, priority) rows as three columns at once: by the rows' attribute names
    # it took 7 ms of CPU for a topic of 2,650 entries, 0.3 ms so
    columns = zip(*rows, strict=True) if rows else ((), (), ())
    entries, builds, priorities = (list(column) for column in columns)
    docnos = presentation.presentation_order(
        entries,
        mode=assignment.order,
        seed=signature[0],
        pool_id=assignment.pool_id,
        qid=assignment.qid,
        assessor_id=assignment.user_id,
        builds=builds,
        priorities=priorities,
    )
    docnos = gold.mixed_queue(connection, assignment, docnos, signature[0])  # gold documents
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


def my_judgements(
    session: Session, assignment: Assignment, docnos: Collection[str] | None = None
) -> dict[str, JudgementRow]:
    """The assessor's current judgement per docno of this topic (own judgements only; of
    `docnos` only, when given)."""
    rows = current_judgements(
        session,
        assignment.campaign_id,
        qid=assignment.qid,
        user_id=assignment.user_id,
        docnos=docnos,
    )
    return {row.docno: row for row in rows}


def my_marks(session: Session, assignment: Assignment) -> dict[str, dict[str, Any]]:
    """docno -> the assessor's current judgement of each document of this topic they have
    judged, as the judging page keeps it (`judgement_mark`: `judgement_summary` without the
    time). Six columns as the driver gives them: at TREC size (2,650 judgements of a topic)
    the state request's judgements took 53 ms of CPU on SQLite and 30 ms on PostgreSQL this
    way, against 79 and 57 ms read as whole rows and summarised."""
    current = is_current(assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id)
    query = select(*MARK_COLUMNS).where(current, HAS_JUDGEMENT)
    return {row[1]: judgement_mark(*row) for row in plain_rows(session, query)}


MARK_COLUMNS = (
    Judgement.id,
    Judgement.docno,
    Judgement.grade,
    Judgement.cannot_judge,
    Judgement.comment,
    Judgement.evidence,
)
"""The columns of a `judgement_mark`, in its arguments' order."""


def my_judged_ids(session: Session, assignment: Assignment) -> dict[str, int]:
    """docno -> id of the assessor's current judgement, of each document of this topic they
    have judged (`my_judgements`' keys, read as two columns: what resuming needs)."""
    current = is_current(assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id)
    query = select(Judgement.docno, Judgement.id).where(current, HAS_JUDGEMENT)
    return {docno: id_ for docno, id_ in session.execute(query)}


def resume_position(
    session: Session,
    assignment: Assignment,
    sequence: list[str] | None = None,
    judged: Mapping[str, int] | None = None,
) -> int:
    """Where the assessor resumes: the first unjudged document of the sequence (one skipped
    earlier comes before the ones after the last save); when every document is judged, the
    one of the sequence judged last (the assessor may have judged the topic's other documents
    under another pool's assignment). `judged`: `my_judged_ids`, when the caller has read it
    (the state request reads the judgements once, not twice: 2,650 of them per topic at
    TREC size)."""
    sequence = document_sequence(session, assignment) if sequence is None else sequence
    if not sequence:
        return 0
    judged = my_judged_ids(session, assignment) if judged is None else judged
    for position, docno in enumerate(sequence):
        if docno not in judged:
            return position
    return sequence.index(max(sequence, key=judged.__getitem__))


def grade_values(connection: Connection | Session, campaign_id: int) -> list[int]:
    return list(connection.scalars(_GRADE_VALUES, {"campaign_id": campaign_id}))


def document_at(session: Session, assignment: Assignment, position: int) -> dict:
    """The document at `position` of the assessor's sequence, with their current judgement."""
    sequence = document_sequence(session, assignment)
    if not 0 <= position < len(sequence):
        raise NotFound(f"position {position} is outside 0..{len(sequence) - 1}")
    return documents_at(session, assignment, position, 1, sequence)[0]


def documents_at(
    session: Session,
    assignment: Assignment,
    start: int,
    count: int,
    sequence: list[str] | None = None,
) -> list[dict]:
    """The documents at positions start .. start + count - 1 of the assessor's sequence (those
    that exist; `sequence` when the caller has it), each with their current judgement (a list
    page of passages): only these documents' judgements are read, not the topic's."""
    sequence = document_sequence(session, assignment) if sequence is None else sequence
    chosen = sequence[max(start, 0) : max(start, 0) + max(count, 0)]
    found = {
        d.docno: d
        for d in session.scalars(
            select(Document).where(
                Document.campaign_id == assignment.campaign_id, Document.docno.in_(chosen)
            )
        )
    }
    mine = my_judgements(session, assignment, chosen)
    views = []
    for offset, docno in enumerate(chosen):
        document, current = found.get(docno), mine.get(docno)
        views.append(
            {
                "position": max(start, 0) + offset,
                "total": len(sequence),
                "docno": docno,
                "title": document.title if document else "",
                "text": document.text if document else "",
                "missing": document is None,
                "judgement": None if current is None else judgement_summary(current),
                # word -> stem, for highlighting the topic's terms in any of their forms
                "stems": highlight.stems(f"{document.title}\n{document.text}") if document else {},
            }
        )
    return views


def judgement_mark(
    id_: int,
    docno: str,
    grade: int | None,
    cannot_judge: str | None,
    comment: str,
    evidence: list[Any] | None,
) -> dict[str, Any]:
    """A current judgement as the judging page keeps it per position (the state request's
    `judgements`): id, docno, grade, cannot_judge, comment and evidence ([] for none)."""
    return {
        "id": id_,
        "docno": docno,
        "grade": grade,
        "cannot_judge": cannot_judge,
        "comment": comment,
        "evidence": evidence or [],
    }


def judgement_summary(judgement: JudgementRow) -> dict[str, Any]:
    """A judgement as the API answers it: its `judgement_mark` and when it was made."""
    j = judgement
    return {
        **judgement_mark(j.id, j.docno, j.grade, j.cannot_judge, j.comment, j.evidence),
        "created_at": j.created_at.isoformat(timespec="seconds") + "Z",
    }


def _checked_evidence(data: JudgementInput) -> list[list[int]] | None:
    """The marked passages to store (None: none), sorted, overlapping ones merged, after the
    checks that need no query: spans (start, end) of integers 0 <= start < end, at most
    limits.EVIDENCE_SPANS, and only with a grade. (Annotator rationales for relevance: McDonnell
    et al., HCOMP 2016; docs/methods.md.)"""
    if not data.evidence:
        return None
    if data.grade is None:
        raise ServiceError("evidence passages go with a grade, not with 'cannot judge'")
    if len(data.evidence) > limits.EVIDENCE_SPANS:
        raise ServiceError(f"at most {limits.EVIDENCE_SPANS} evidence passages per judgement")
    merged: list[list[int]] = []
    for start, end in sorted(data.evidence):
        if not 0 <= start < end <= limits.INT32_MAX:
            raise ServiceError(
                f"an evidence passage runs from a start to a later end; got {start}-{end}"
            )
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


_EVIDENCE_CONTEXT = (
    select(Campaign.evidence, Campaign.name, func.length(Document.text).label("length"))
    .select_from(Assignment)
    .join(Campaign, Campaign.id == Assignment.campaign_id)
    .outerjoin(
        Document,
        (Document.campaign_id == Assignment.campaign_id)
        & (Document.docno == bindparam("docno", type_=String)),
    )
    .where(Assignment.id == bindparam("assignment_id"))
)


def _check_evidence_fits(
    connection: Connection, assignment_id: int, docno: str, spans: list[list[int]]
) -> None:
    """Refuse evidence where the campaign does not ask for it, or past the document's text.
    (An assignment that is not the user's is refused by the submit itself.)"""
    context = connection.execute(
        _EVIDENCE_CONTEXT, {"assignment_id": assignment_id, "docno": docno}
    ).first()
    if context is None:
        return
    if not context.evidence:
        raise ServiceError(f"campaign {context.name!r} does not collect evidence passages")
    length = context.length or 0
    if spans[-1][1] > length:
        raise ServiceError(
            f"an evidence passage ends at {spans[-1][1]}, past the end of the document's text "
            f"({length} characters)"
        )


def _checked_reason(data: JudgementInput) -> str | None:
    """The 'cannot judge' reason to store (None for a grade), after the checks that need no
    query: NUL characters, lengths, a reason when there is no grade."""
    texts = (data.docno, data.cannot_judge or "", data.comment, data.client_id or "")
    if any("\x00" in text for text in texts):
        raise ServiceError("the judgement contains a NUL character")
    if data.client_id is not None and not 0 < len(data.client_id) <= MAX_CLIENT_ID_LENGTH:
        raise ServiceError(f"client_id must be 1 to {MAX_CLIENT_ID_LENGTH} characters")
    if len(data.comment) > MAX_COMMENT_LENGTH:
        raise ServiceError(f"comment longer than {MAX_COMMENT_LENGTH} characters")
    if data.grade is not None:
        return None
    reason = (data.cannot_judge or "").strip()
    if not reason:
        raise ServiceError("give a grade, or a reason why the document cannot be judged")
    if len(reason) > limits.CANNOT_JUDGE:
        raise ServiceError(f"cannot_judge reason longer than {limits.CANNOT_JUDGE} characters")
    return reason


@dataclass(frozen=True)
class _Known:
    """What a submit learnt of an assignment: a guess for the next submit's one statement."""

    user_id: int
    qid: str
    order: str
    seed: int
    pool_created_at: dt.datetime
    latest_build: int
    revision: int
    positions: dict[str, int]


def record_judgement(
    connection: Connection, assignment_id: int, user_id: int, data: JudgementInput
) -> tuple[JudgementRow, bool]:
    """Append `user_id`'s judgement for a document of assignment `assignment_id`; returns
    (row, created).

    A client_id already stored for this assessor in this campaign returns that row with
    created=False.
    Raises NotFound for an assignment that is not the user's or has been withdrawn, or a
    document outside the assessor's sequence; Conflict while its campaign or pool is archived
    (read-only until restored); ServiceError for a grade outside the campaign
    scale, a 'cannot judge' without a reason, or text with a NUL character (which PostgreSQL
    cannot store).

    Usually one statement: it appends if what the previous submit of the assignment learnt
    still holds, and checks all of it. Otherwise one query reads everything that is checked
    and one statement appends. Neither needs a transaction (`Store.connection(autocommit=
    True)`): a concurrent retry of the same client_id is refused by the unique constraint
    (IntegrityError, which the caller retries), and a withdrawal committed in between is as
    if it came just after.
    """
    evidence = _checked_evidence(data)
    if evidence:
        _check_evidence_fits(connection, assignment_id, data.docno, evidence)
    values = {
        "docno": data.docno,
        "user_id": user_id,
        "grade": data.grade,
        "cannot_judge": _checked_reason(data),
        "comment": data.comment.strip(),
        "time_spent_ms": min(max(int(data.time_spent_ms), 0), MAX_TIME_SPENT_MS),
        "client_id": data.client_id,
        "created_at": utcnow(),
        "evidence": evidence,
    }
    known: _Known | None = _caches_for(connection.engine).assignments.get(assignment_id)
    if known is not None and known.user_id == user_id and data.docno in known.positions:
        position = known.positions[data.docno]
        appended = changes.insert_counted(
            connection,
            _APPEND_IF_KNOWN,
            {
                **values,
                "position": position,
                "assignment_id": assignment_id,
                "order": known.order,
                "seed": known.seed,
                "pool_created_at": known.pool_created_at,
                "latest_build": known.latest_build,
                "revision": known.revision,
            },
        )
        if appended is not None:
            return _recorded(appended.id, values, known.qid, position), True
    return _record_checking(connection, assignment_id, values)


def submit_judgement(
    store: Store, assignment_id: int, user_id: int, data: JudgementInput
) -> tuple[JudgementRow, bool]:
    """`record_judgement` in its own autocommit connection of `store`, retried once where
    the client_id makes that safe: a concurrent retry with the same client_id won the race
    (IntegrityError), or the pooled connection had broken (the database server restarted)
    and the pool has been refreshed. Without a client_id nothing is retried."""
    for attempt in range(2):
        try:
            with store.connection(autocommit=True) as connection:
                return record_judgement(connection, assignment_id, user_id, data)
        except DBAPIError as error:
            retry = isinstance(error, IntegrityError) or error.connection_invalidated
            if attempt or not retry or data.client_id is None:
                raise
    raise AssertionError("unreachable: the second attempt returns or raises")


def _recorded(new_id: int, values: dict, qid: str, position: int) -> JudgementRow:
    return JudgementRow(
        id=new_id,
        qid=qid,
        docno=values["docno"],
        user_id=values["user_id"],
        grade=values["grade"],
        cannot_judge=values["cannot_judge"],
        comment=values["comment"],
        time_spent_ms=values["time_spent_ms"],
        position=position,
        created_at=values["created_at"],
        evidence=values.get("evidence"),
    )


def _refuse_if_archived(context: Any) -> None:
    """Conflict when the submit's campaign or pool is archived."""
    if context.campaign_archived_at is not None:
        raise Conflict(
            f"campaign {context.campaign_name!r} is archived: it accepts no judgements until "
            "an admin restores it"
        )
    if context.pool_archived_at is not None:
        raise Conflict(
            f"pool {context.pool_number} of campaign {context.campaign_name!r} is archived: it "
            "accepts no judgements until an admin restores it"
        )


def _record_checking(
    connection: Connection, assignment_id: int, values: dict
) -> tuple[JudgementRow, bool]:
    """`record_judgement` checked one by one: one query reads the assignment, the pool
    signature, the grade and any stored client_id; one INSERT appends. Remembers what it
    learnt of the assignment for the next submit."""
    context = connection.execute(
        _SUBMIT_CONTEXT,
        {
            "assignment_id": assignment_id,
            "grade": values["grade"],
            "client_id": values["client_id"],
        },
    ).first()
    if context is None or context.user_id != values["user_id"]:
        raise NotFound(f"assignment {assignment_id} is not one of yours")
    if not context.active:
        raise NotFound("this assignment has been withdrawn")
    if context.stored_id is not None:
        stored = JudgementRow(
            **connection.execute(_STORED, {"id": context.stored_id}).one()._mapping
        )
        if (stored.qid, stored.docno) != (context.qid, values["docno"]):
            raise ServiceError("client_id was already used for another document")
        return stored, False  # stored before any archiving: the retry gets its answer
    _refuse_if_archived(context)
    signature = (context.seed, context.created_at, context.latest_build, context.revision)
    positions = _sequence(connection, context, signature).positions
    position = positions.get(values["docno"])
    if position is None:
        raise NotFound(f"document {values['docno']!r} is not in this assignment")
    if values["grade"] is not None and not context.grade_on_scale:
        allowed = grade_values(connection, context.campaign_id)
        raise ServiceError(
            f"grade {values['grade']} is not on the scale: expected one of "
            f"{', '.join(map(str, allowed))}"
        )
    row = {**values, "campaign_id": context.campaign_id, "qid": context.qid, "position": position}
    inserted = changes.insert_counted(connection, _INSERT, row)
    assert inserted is not None  # a single-row INSERT always inserts
    new_id = inserted.id
    _caches_for(connection.engine).assignments.put(
        assignment_id,
        _Known(
            values["user_id"],
            context.qid,
            context.order,
            context.seed,
            context.created_at,
            -1 if context.latest_build is None else context.latest_build,
            context.revision,
            positions,
        ),
    )
    return _recorded(new_id, values, context.qid, position), True
