"""The current judgements: the latest row of each (campaign, topic, docno, assessor) key
(`services.judging` is the act of recording one).

The judgement table is an append-only log; this is the one place that derives current values.
A latest row with neither a grade nor a 'cannot judge' reason is a first judgement taken back
(an undo): its key has no current judgement.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, Protocol, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    and_,
    case,
    func,
    or_,
    select,
    tuple_,
)
from sqlalchemy.orm import Session, aliased

from workbench.lru import LRU, PerEngine
from workbench.store.models import Assignment, Campaign, GoldDocument, Judgement, QualitySettings


@dataclass(frozen=True, slots=True)
class JudgementRow:
    """A row of the judgement log as read: plain values, not a tracked ORM object (the
    adjudication page of 5,000 current judgements took 502 ms of CPU with ORM objects, 245 ms
    with rows)."""

    id: int
    qid: str
    docno: str
    user_id: int
    grade: int | None
    cannot_judge: str | None
    comment: str
    time_spent_ms: int
    position: int | None
    created_at: dt.datetime
    evidence: list[Any] | None = None  # [[start, end], ...] offsets of marked passages


HAS_JUDGEMENT = or_(Judgement.grade.is_not(None), Judgement.cannot_judge.is_not(None))
"""A log row that is a current judgement when latest: a grade or a 'cannot judge' reason (a
latest row with neither is a first judgement taken back)."""

JUDGEMENT_ROW = select(*(getattr(Judgement, field.name) for field in fields(JudgementRow)))
"""Select the JudgementRow columns of the judgement log (add the where clause)."""


def plain_rows(session: Session, query: Any) -> Any:
    """`query`'s rows as the database driver gives them, through the session's connection
    (pending changes flushed first, as the session's own execute would): no ORM row
    processing, about 3 µs less per row (0.6 s for 200,000 rows)."""
    session.flush()
    return session.connection().execute(query)


_LATER = aliased(Judgement)
"""The later row of `is_current`, made once: an alias made per call took 11 ms of each
document request's CPU (its column collection is built on first use)."""


def is_current(
    campaign_id: int,
    *,
    qid: str | None = None,
    user_id: int | None = None,
    docnos: Collection[str] | None = None,
    qids: Collection[str] | None = None,
) -> ColumnElement[bool]:
    """Where clause on `Judgement`: the row is the latest of its (qid, docno, user) key in a
    campaign (no later row of the key exists), optionally of one topic (or some), one user or
    some documents. An anti-join: PostgreSQL planned the equivalent `id IN (SELECT max(id)
    ... GROUP BY key)` as 2 million index probes at TREC size (10.3 s against 1.5 s for one
    user list of the campaign; SQLite 1.8 s against 1.5 s)."""
    later = _LATER
    conditions = [Judgement.campaign_id == campaign_id]
    if qid is not None:
        conditions.append(Judgement.qid == qid)
    if qids is not None:
        conditions.append(Judgement.qid.in_(sorted(qids)))
    if user_id is not None:
        conditions.append(Judgement.user_id == user_id)
    if docnos is not None:
        conditions.append(Judgement.docno.in_(docnos))
    newer = (
        select(later.id)
        .where(
            later.campaign_id == Judgement.campaign_id,
            later.qid == Judgement.qid,
            later.docno == Judgement.docno,
            later.user_id == Judgement.user_id,
            later.id > Judgement.id,
        )
        .exists()
    )
    return and_(*conditions, ~newer)


def current_judgements(
    session: Session | Connection,
    campaign_id: int,
    *,
    qid: str | None = None,
    user_id: int | None = None,
    docnos: Collection[str] | None = None,
) -> list[JudgementRow]:
    """The current judgement of every (qid, docno, user) key of a campaign, the latest row of
    each, optionally of one topic, one user or some documents, ordered by key (including
    'cannot judge' rows, whose grade is None; a key whose latest row took its first judgement
    back has none)."""
    current = is_current(campaign_id, qid=qid, user_id=user_id, docnos=docnos)
    query = JUDGEMENT_ROW.where(
        current,
        HAS_JUDGEMENT,
    ).order_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    # a session's rows as plain rows: the ORM's row processing was a third of the state's
    # CPU (2,650 judgements of a topic at TREC size)
    if isinstance(session, Connection):
        return [JudgementRow(*row) for row in session.execute(query)]
    return [JudgementRow(*row) for row in plain_rows(session, query)]


def judged_keys(session: Session, campaign_id: int) -> list[tuple[str, str, int]]:
    """(qid, docno, user id) of every key with a current judgement (`current_judgements`'
    keys, read as three columns: what progress counts; read through the session's connection,
    plain rows, no ORM row processing: 0.6 s less CPU for 200,000 keys). One assessor's own
    keys: `judged_documents`."""
    query = select(Judgement.qid, Judgement.docno, Judgement.user_id).where(
        is_current(campaign_id), HAS_JUDGEMENT
    )
    return [(qid, docno, user_id) for qid, docno, user_id in plain_rows(session, query)]


_LATEST_HAS_JUDGEMENT = func.max(Judgement.id) == func.max(case((HAS_JUDGEMENT, Judgement.id)))
"""Of a group of rows of one key: its latest row (the highest id) is one with a judgement."""

KEPT_DOCUMENTS = 500_000
"""How many judged documents (over every kept (assessor, topic) set) a process keeps per
store: about 60 MiB (a set of 2,650 docnos takes 312 KiB). By count of sets, 4,096 of TREC
size would have been 1.25 GiB per process; this holds about 190: the topic judged and the
next one of each of a TREC-size campaign's 75 judges."""

_kept_for = PerEngine(lambda: LRU(KEPT_DOCUMENTS, weigh=lambda kept: len(kept[1]) + 1))


def judged_documents(
    session: Session, campaign_id: int, user_id: int, qids: Collection[str]
) -> dict[str, frozenset[str]]:
    """qid -> the docnos of the user's keys with a current judgement in that topic (the keys
    of `current_judgements` of that user and topic), for each of `qids`.

    What an assessor's own progress counts on every judging page: at TREC size ten topics
    of 2,650 judged documents each, 27,000 rows to read (the anti-join per row took 180 ms
    on PostgreSQL). The log is append-only (rows are added, never changed or deleted but
    with their campaign), so the user's rows of a topic are the same set while their count
    and highest id are: each topic's set is kept in this process with that count and id
    (and the campaign's creation time, should a deleted campaign's id come again) and used
    while one grouped count of the user's rows finds them unchanged; a changed topic is
    read again, grouped by document (the documents whose latest row has a judgement, two
    columns: 40 % less CPU in SQLite than five columns per document). The count is read
    first: should the two reads see different rows (a store without one snapshot per read
    session), the kept count is the older, and the next count reads the topic again.
    """
    wanted = sorted(set(qids))
    if not wanted:
        return {}
    created = session.get_one(Campaign, campaign_id).created_at
    kept = _kept_for(session.get_bind())  # type: ignore[arg-type]
    counted = select(Judgement.qid, func.count(), func.max(Judgement.id)).where(
        Judgement.campaign_id == campaign_id,
        Judgement.user_id == user_id,
        Judgement.qid.in_(wanted),
    )
    now = {qid: (n, top) for qid, n, top in plain_rows(session, counted.group_by(Judgement.qid))}
    found: dict[str, frozenset[str]] = {}
    stale = []
    for qid in wanted:
        known = kept.get((campaign_id, created, user_id, qid))
        if known is not None and known[0] == now.get(qid, (0, 0)):
            found[qid] = known[1]
        else:
            stale.append(qid)
    if stale:
        query = (
            select(Judgement.qid, Judgement.docno)
            .where(
                Judgement.campaign_id == campaign_id,
                Judgement.user_id == user_id,
                Judgement.qid.in_(stale),
            )
            .group_by(Judgement.qid, Judgement.docno)
            .having(_LATEST_HAS_JUDGEMENT)
        )
        judged: dict[str, set[str]] = {qid: set() for qid in stale}
        for qid, docno in plain_rows(session, query):
            judged[qid].add(docno)
        for qid in stale:  # (0, 0): no row yet
            found[qid] = frozenset(judged[qid])
            kept.put((campaign_id, created, user_id, qid), (now.get(qid, (0, 0)), found[qid]))
    return found


def graders(
    session: Session,
    campaign_id: int,
    *,
    user_id: int | None = None,
    grades: CurrentGrades | None = None,
) -> set[int]:
    """The ids of the users with at least one current grade in the campaign (counted or not;
    of user `user_id` only, when given): one aggregate query, no judgement read into Python;
    or the users of `grades` (the campaign's `CurrentGrades`, when the caller has them)."""
    if grades is not None:
        found = set(grades.by_user)
        return found if user_id is None else found & {user_id}
    current = is_current(campaign_id, user_id=user_id)
    query = select(Judgement.user_id).where(current, Judgement.grade.is_not(None)).distinct()
    return set(session.scalars(query))


class CurrentGrades:
    """Every current grade of a campaign, read on first use in one pass over the latest row
    of each key: `by_user`, user id -> (qid, docno) -> grade ('cannot judge' rows and keys
    taken back have none; nothing left out: gold and withdrawn assignments are the readers'
    business). What `graders`, `graded_keys` and every assessor's qrels
    (`qrels.assessors_qrels`) otherwise read with a scan of their own, for a caller that
    needs several of them: the evaluation report (three scans of the 2 million judgements
    of a TREC-size campaign, one with these). A (qid, docno) key is one tuple shared by its
    judges. Read through `session`, which must stay open while it is first used."""

    def __init__(self, session: Session, campaign_id: int) -> None:
        self._session = session
        self.campaign_id = campaign_id

    @cached_property
    def by_user(self) -> dict[int, dict[tuple[str, str], int]]:
        query = select(Judgement.user_id, Judgement.qid, Judgement.docno, Judgement.grade).where(
            is_current(self.campaign_id), Judgement.grade.is_not(None)
        )
        keys: dict[tuple[str, str], tuple[str, str]] = {}
        graded: dict[int, dict[tuple[str, str], int]] = {}
        for user_id, qid, docno, grade in plain_rows(self._session, query):
            key = (qid, docno)
            graded.setdefault(user_id, {})[keys.setdefault(key, key)] = grade
        return graded


def counted_grades(
    session: Session,
    campaign: Campaign,
    *,
    qid: str | None = None,
    docnos: Collection[str] | None = None,
    qids: Collection[str] | None = None,
) -> list[Row[tuple[str, str, int, int]]]:
    """The current grades that count (`counted_judgements` less the 'cannot judge' rows), in
    key order, read as rows of the four columns that qrels and completeness need (not as
    whole `JudgementRow`s); optionally of one topic (or some) or some documents."""
    current = is_current(campaign.id, qid=qid, docnos=docnos, qids=qids)
    query = (
        select(Judgement.qid, Judgement.docno, Judgement.user_id, Judgement.grade)
        .where(current, Judgement.grade.is_not(None))
        .order_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    )
    return _counted(session, campaign, list(plain_rows(session, query)))


def cannot_judge_keys(session: Session, campaign: Campaign) -> set[tuple[str, str]]:
    """(qid, docno) with a current 'cannot judge' answer that counts (as `counted_grades`
    counts grades), read as plain columns: only those rows reach Python."""
    query = select(Judgement.qid, Judgement.docno, Judgement.user_id).where(
        is_current(campaign.id), Judgement.cannot_judge.is_not(None)
    )
    return {
        (row.qid, row.docno)
        for row in _counted(session, campaign, list(plain_rows(session, query)))
    }


def ungraded_keys(
    session: Session, campaign: Campaign, graded: set[tuple[str, str]] | None = None
) -> set[tuple[str, str]]:
    """(qid, docno) whose every answer that counts is 'cannot judge' (`cannot_judge_keys`
    less `graded`: `graded_keys`, read only when the caller lacks them and some such answer
    exists). No rule can label them; an adjudicator can (the adjudication queue)."""
    cannot = cannot_judge_keys(session, campaign)
    if not cannot:
        return cannot
    return cannot - (graded_keys(session, campaign) if graded is None else graded)


def graded_keys(
    session: Session, campaign: Campaign, grades: CurrentGrades | None = None
) -> set[tuple[str, str]]:
    """(qid, docno) with a current grade that counts (`counted_grades`), by any assessor: the
    database leaves out the withdrawn assignments' keys and returns each (qid, docno) once
    (not a row per judge), the left-out gold documents are taken off here; or the same keys
    from `grades` (the campaign's `CurrentGrades`, when the caller has them)."""
    withdrawn = set() if campaign.count_withdrawn else withdrawn_topics(session, campaign.id)
    gold = left_out_gold(session, campaign.id)
    if grades is not None:
        keys: set[tuple[str, str]] = set()
        for user_id, graded in grades.by_user.items():
            if any(user == user_id for _, user in withdrawn):
                keys.update(key for key in graded if (key[0], user_id) not in withdrawn)
            else:
                keys.update(graded)
        return keys - gold
    query = select(Judgement.qid, Judgement.docno).where(
        is_current(campaign.id), Judgement.grade.is_not(None)
    )
    if withdrawn:
        query = query.where(tuple_(Judgement.qid, Judgement.user_id).not_in(sorted(withdrawn)))
    rows = plain_rows(session, query.distinct())
    return {(qid, docno) for qid, docno in rows if (qid, docno) not in gold}


def withdrawn_topics(session: Session, campaign_id: int) -> set[tuple[str, int]]:
    """(qid, user id) pairs whose every assignment in the campaign is withdrawn: the
    judgements of such a pair are those of a withdrawn assignment."""
    rows = session.execute(
        select(Assignment.qid, Assignment.user_id, Assignment.active).where(
            Assignment.campaign_id == campaign_id
        )
    )
    withdrawn: set[tuple[str, int]] = set()
    active: set[tuple[str, int]] = set()
    for qid, user_id, is_active in rows:
        (active if is_active else withdrawn).add((qid, user_id))
    return withdrawn - active


def counted_judges(session: Session, campaign: Campaign) -> set[int]:
    """The ids of the users with a current judgement that counts (the users of
    `counted_judgements`), read as the distinct (topic, user) pairs of the log: no judgement
    row reaches Python."""
    query = select(Judgement.qid, Judgement.user_id).where(is_current(campaign.id), HAS_JUDGEMENT)
    if left_out_gold(session, campaign.id):  # in SQL: no bound parameter per gold document
        query = query.where(
            ~select(GoldDocument.id)
            .where(
                GoldDocument.campaign_id == campaign.id,
                GoldDocument.qid == Judgement.qid,
                GoldDocument.docno == Judgement.docno,
            )
            .exists()
        )
    pairs = set(plain_rows(session, query.distinct()))
    if not campaign.count_withdrawn:
        pairs -= withdrawn_topics(session, campaign.id)
    return {user_id for _, user_id in pairs}


def counted_notes(
    session: Session,
    campaign: Campaign,
    *,
    docnos: Collection[str] | None = None,
    qids: Collection[str] | None = None,
) -> list[JudgementRow]:
    """The `counted_judgements` with a comment, a 'cannot judge' reason or evidence (what the
    adjudicator reads beside the grades), optionally of some documents and topics only; the
    database returns only rows that may have one."""
    current = is_current(campaign.id, docnos=docnos, qids=qids)
    query = JUDGEMENT_ROW.where(
        current,
        or_(
            Judgement.comment != "",
            Judgement.cannot_judge.is_not(None),
            Judgement.evidence.is_not(None),
        ),
    ).order_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    rows = [JudgementRow(*row) for row in session.execute(query)]
    noted = [j for j in rows if j.comment or j.cannot_judge or j.evidence]
    return _counted(session, campaign, noted)


def counted_judgements(session: Session, campaign: Campaign) -> list[JudgementRow]:
    """The current judgements that count in agreement, adjudication and qrels: all of them,
    or (campaign.count_withdrawn False) all but those of withdrawn assignments; judgements of
    gold documents only when the campaign's quality settings let them (`left_out_gold`)."""
    return _counted(session, campaign, current_judgements(session, campaign.id))


class _Keyed(Protocol):
    @property
    def qid(self) -> str: ...

    @property
    def docno(self) -> str: ...

    @property
    def user_id(self) -> int: ...


Keyed = TypeVar("Keyed", bound=_Keyed)


def _counted(session: Session, campaign: Campaign, rows: list[Keyed]) -> list[Keyed]:
    """`rows` less those that do not count (see `counted_judgements`)."""
    gold = left_out_gold(session, campaign.id)
    if gold:
        rows = [j for j in rows if (j.qid, j.docno) not in gold]
    if campaign.count_withdrawn:
        return rows
    withdrawn = withdrawn_topics(session, campaign.id)
    return [j for j in rows if (j.qid, j.user_id) not in withdrawn]


def left_out_gold(session: Session, campaign_id: int) -> set[tuple[str, str]]:
    """(qid, docno) of the campaign's gold documents, whose judgements stay out of agreement,
    adjudication and qrels (none when its quality settings let gold judgements in)."""
    counted = session.scalar(
        select(QualitySettings.gold_in_qrels).where(QualitySettings.campaign_id == campaign_id)
    )
    if counted:
        return set()
    rows = session.execute(
        select(GoldDocument.qid, GoldDocument.docno).where(GoldDocument.campaign_id == campaign_id)
    )
    return {(qid, docno) for qid, docno in rows}


def withdrawn_note(session: Session, campaign: Campaign) -> str:
    """What the agreement and adjudication pages say of judgements made under withdrawn
    assignments ('' when there are none): how many, and whether they count here."""
    withdrawn = withdrawn_topics(session, campaign.id)
    if not withdrawn:
        return ""  # no judgement to read (the common case)
    made = [
        j
        for qid in sorted({qid for qid, _ in withdrawn})
        for j in current_judgements(session, campaign.id, qid=qid)
        if (j.qid, j.user_id) in withdrawn
    ]
    if not made:
        return ""
    topics = sorted({j.qid for j in made})
    counted = "count here" if campaign.count_withdrawn else "do not count here"
    noun = "judgement was" if len(made) == 1 else "judgements were"
    return (
        f"{len(made)} {noun} made under withdrawn assignments (topic(s) {', '.join(topics)}); "
        f"as the campaign is set, they {counted}."
    )


class LoggedEvent(Protocol):
    """An event of an append-only judging log (a judgement or a preference)."""

    @property
    def id(self) -> int: ...

    @property
    def undoes_id(self) -> int | None: ...


Event = TypeVar("Event", bound=LoggedEvent)


def undo_step(
    events: Iterable[Event], key: Callable[[Event], Hashable]
) -> tuple[Event, Event | None] | None:
    """What an undo does among one assessor's events of one topic (any order): the event it
    takes back, the latest one that is neither an undo nor taken back by one (so a second
    undo takes back the answer before the first one's, never the undo), and the event whose
    state it restores, the latest of the same `key` before it (None: the key had none, the
    undo leaves no answer). None when nothing is left to undo."""
    ordered = sorted(events, key=lambda e: e.id)
    undone: set[int] = set()
    for event in reversed(ordered):
        if event.undoes_id is not None:
            undone.add(event.undoes_id)
        elif event.id not in undone:
            before = [e for e in ordered if key(e) == key(event) and e.id < event.id]
            return event, (before[-1] if before else None)
    return None
