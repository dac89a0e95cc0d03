"""Browsing a campaign's data: its topics, documents, runs, one assessor's labels and the
judgement log, a page at a time.

Every listing is bounded (`MAX_PAGE` rows, search text at most `MAX_QUERY` characters) and
returns frozen dataclasses with the total count, so that a page can say "41-60 of 3,204".
Text search is a case-insensitive substring match (SQL LIKE, with the user's % and _ taken
literally).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from workbench.services import run_metadata
from workbench.services.current_judgements import is_current
from workbench.services.errors import NotFound, ServiceError
from workbench.services.pools import qid_key
from workbench.store.models import (
    Assignment,
    Campaign,
    Document,
    Judgement,
    Pool,
    PoolEntry,
    Run,
    RunTopic,
    Topic,
    User,
)

T = TypeVar("T")
MAX_PAGE = 200
MAX_QUERY = 200
COUNTED = 10_000
"""A search's matches are counted up to this many (then the page says "more than"): counting
every match of a common word re-reads the whole collection (2 s at 1 million documents)."""
SNIPPET = 300


@dataclass(frozen=True)
class Page(Generic[T]):
    """Rows `offset`+1 .. `offset`+len(rows) of `total` (of more than `total` when `more`:
    the matches were counted up to a bound)."""

    rows: tuple[T, ...]
    total: int
    offset: int
    limit: int
    more: bool = False

    @property
    def first(self) -> int:
        return self.offset + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.offset + len(self.rows)

    @property
    def next_offset(self) -> int | None:
        return self.last if self.last < self.total or self.more else None

    @property
    def previous_offset(self) -> int | None:
        return max(0, self.offset - self.limit) if self.offset else None


@dataclass(frozen=True)
class BrowseTopic:
    qid: str
    title: str
    description: str
    narrative: str
    pooled: int  # documents sampled into the campaign's pools for the topic
    judged: int  # documents with a current grade
    assessors: tuple[str, ...]  # with an active assignment


@dataclass(frozen=True)
class BrowseDocument:
    docno: str
    title: str
    snippet: str
    length: int  # characters of text


@dataclass(frozen=True)
class BrowseRun:
    tag: str
    group: str
    contributes: bool
    file_name: str
    lines: int
    per_topic: dict[str, int]  # qid -> lines of the run for it, in topic order
    missing_topics: tuple[str, ...]  # campaign topics the run has no line for
    metadata: dict[str, Any] | None = None  # its ir_metadata (PRIMAD), services.run_metadata
    metadata_text: str | None = None  # the same as the run file gave it (YAML)

    @property
    def primad(self) -> str:
        """The metadata's PRIMAD components on one line (empty without metadata)."""
        return run_metadata.primad_summary(self.metadata)


@dataclass(frozen=True)
class BrowseJudgement:
    id: int
    assessor: str
    qid: str
    docno: str
    grade: int | None
    cannot_judge: str | None
    comment: str
    created_at: dt.datetime
    time_spent_ms: int


@dataclass(frozen=True)
class LogFilter:
    """Judgement-log filters; empty strings mean 'any'."""

    assessor: str = ""
    qid: str = ""
    docno: str = ""
    grade: int | None = None
    cannot_judge_only: bool = False
    with_comment_only: bool = False
    current_only: bool = False  # only each assessor's latest judgement of a document


def _window(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ServiceError(f"offset must be 0 or more; got {offset}")
    if not 1 <= limit <= MAX_PAGE:
        raise ServiceError(f"limit must be between 1 and {MAX_PAGE}; got {limit}")
    return offset, limit


def _pattern(query: str) -> str:
    """A LIKE pattern matching `query` anywhere, its % _ and \\ taken literally."""
    if len(query) > MAX_QUERY:
        raise ServiceError(f"search text is limited to {MAX_QUERY} characters")
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _count(session: Session, query: Select) -> int:
    return session.scalar(select(func.count()).select_from(query.subquery())) or 0


def topics(
    session: Session, campaign: Campaign, *, query: str = "", offset: int = 0, limit: int = 50
) -> Page[BrowseTopic]:
    """The campaign's topics in topic order, those whose qid, title, description or narrative
    contain `query`, with their pooled and judged counts and assessors."""
    offset, limit = _window(offset, limit)
    chosen = select(Topic).where(Topic.campaign_id == campaign.id)
    if query:
        like = _pattern(query)
        chosen = chosen.where(
            or_(
                *(
                    column.ilike(like, escape="\\")
                    for column in (Topic.qid, Topic.title, Topic.description, Topic.narrative)
                )
            )
        )
    found = sorted(session.scalars(chosen), key=lambda topic: qid_key(topic.qid))
    shown = found[offset : offset + limit]
    qids = [topic.qid for topic in shown]
    pooled = dict(
        session.execute(
            select(PoolEntry.qid, func.count(func.distinct(PoolEntry.docno)))
            .join(Pool, Pool.id == PoolEntry.pool_id)
            .where(Pool.campaign_id == campaign.id)
            .where(PoolEntry.qid.in_(qids), PoolEntry.sampled.is_(True))
            .group_by(PoolEntry.qid)
        ).all()
    )
    judged = dict(
        session.execute(
            select(Judgement.qid, func.count(func.distinct(Judgement.docno)))
            .where(Judgement.campaign_id == campaign.id, Judgement.qid.in_(qids))
            .where(Judgement.grade.is_not(None))
            .group_by(Judgement.qid)
        ).all()
    )
    assessors: dict[str, set[str]] = defaultdict(set)
    for qid, username in session.execute(
        select(Assignment.qid, User.username)
        .join(User, User.id == Assignment.user_id)
        .where(Assignment.campaign_id == campaign.id, Assignment.qid.in_(qids))
        .where(Assignment.active.is_(True))
    ):
        assessors[qid].add(username)
    rows = tuple(
        BrowseTopic(
            t.qid,
            t.title,
            t.description,
            t.narrative,
            pooled.get(t.qid, 0),
            judged.get(t.qid, 0),
            tuple(sorted(assessors[t.qid])),
        )
        for t in shown
    )
    return Page(rows, len(found), offset, limit)


def documents(
    session: Session, campaign: Campaign, *, query: str = "", offset: int = 0, limit: int = 50
) -> Page[BrowseDocument]:
    """The campaign's documents by docno, those whose docno, title or text contain `query`;
    a search's matches counted up to COUNTED (the page says "more than" beyond). The window
    is read in the (campaign, docno) index's order, so it stops at its last row."""
    offset, limit = _window(offset, limit)
    matching = [Document.campaign_id == campaign.id]
    if query:
        like = _pattern(query)
        matching.append(
            or_(
                Document.docno.ilike(like, escape="\\"),
                Document.title.ilike(like, escape="\\"),
                Document.text.ilike(like, escape="\\"),
            )
        )
    chosen = select(Document.id).where(*matching)
    total = _count(session, chosen.limit(COUNTED + 1) if query else chosen)
    found = session.execute(
        select(Document.docno, Document.title, Document.text)
        .where(*matching)
        .order_by(Document.docno)
        .offset(offset)
        .limit(limit)
    )
    rows = tuple(
        BrowseDocument(docno, title, _snippet(text, query), len(text))
        for docno, title, text in found
    )
    more = bool(query) and total > COUNTED
    return Page(rows, COUNTED if more else total, offset, limit, more)


def _snippet(text: str, query: str) -> str:
    """SNIPPET characters of text around the first match of query (or from the start)."""
    at = text.lower().find(query.lower()) if query else -1
    start = max(0, at - SNIPPET // 3) if at >= 0 else 0
    piece = text[start : start + SNIPPET]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET < len(text) else "")


@dataclass(frozen=True)
class DocumentView:
    docno: str
    title: str
    text: str
    judgements: tuple[BrowseJudgement, ...]  # its judgement events, oldest first (MAX_PAGE at most)
    judgements_total: int  # how many there are in all


def document(session: Session, campaign: Campaign, docno: str) -> DocumentView:
    """One document with the judgements made of it (any topic, any assessor): the first
    MAX_PAGE events and their total, which the page states when it shows fewer."""
    found = session.scalar(
        select(Document).where(Document.campaign_id == campaign.id, Document.docno == docno)
    )
    if found is None:
        raise NotFound(f"no document {docno!r} in campaign {campaign.name!r}")
    log = judgement_log(session, campaign, LogFilter(docno=docno), limit=MAX_PAGE)
    return DocumentView(found.docno, found.title, found.text, log.rows, log.total)


def runs(session: Session, campaign: Campaign) -> list[BrowseRun]:
    """Every run of the campaign with its lines per topic and the topics it lacks."""
    campaign_qids = sorted(
        session.scalars(select(Topic.qid).where(Topic.campaign_id == campaign.id)), key=qid_key
    )
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for run_id, qid, n_lines in session.execute(
        select(RunTopic.run_id, RunTopic.qid, RunTopic.n_lines)
        .join(Run, Run.id == RunTopic.run_id)
        .where(Run.campaign_id == campaign.id)
    ):
        counts[run_id][qid] = n_lines
    rows = []
    for run in session.scalars(select(Run).where(Run.campaign_id == campaign.id).order_by(Run.tag)):
        per_topic = {q: counts[run.id][q] for q in sorted(counts[run.id], key=qid_key)}
        rows.append(
            BrowseRun(
                run.tag,
                run.group,
                run.contributes,
                run.file_name,
                run.line_count,
                per_topic,
                tuple(q for q in campaign_qids if q not in per_topic),
                run_metadata.parsed(run.ir_metadata),
                run.ir_metadata,
            )
        )
    return rows


def run(session: Session, campaign: Campaign, tag: str) -> BrowseRun:
    """One run of the campaign (as in :func:`runs`), with its metadata."""
    found = next((row for row in runs(session, campaign) if row.tag == tag), None)
    if found is None:
        raise NotFound(f"no run {tag!r} in campaign {campaign.name!r}")
    return found


def judgement_log(
    session: Session,
    campaign: Campaign,
    chosen: LogFilter = LogFilter(),
    *,
    offset: int = 0,
    limit: int = 50,
) -> Page[BrowseJudgement]:
    """Judgement events of the campaign matching the filter, oldest first."""
    offset, limit = _window(offset, limit)
    query = (
        select(Judgement, User.username)
        .join(User, User.id == Judgement.user_id)
        .where(Judgement.campaign_id == campaign.id)
    )
    if chosen.assessor:
        query = query.where(User.username == chosen.assessor)
    if chosen.qid:
        query = query.where(Judgement.qid == chosen.qid)
    if chosen.docno:
        query = query.where(Judgement.docno == chosen.docno)
    if chosen.grade is not None:
        query = query.where(Judgement.grade == chosen.grade)
    if chosen.cannot_judge_only:
        query = query.where(Judgement.cannot_judge.is_not(None))
    if chosen.with_comment_only:
        query = query.where(Judgement.comment != "")
    if chosen.current_only:
        query = query.where(is_current(campaign.id))
    total = _count(session, query)
    found = session.execute(query.order_by(Judgement.id).offset(offset).limit(limit))
    rows = tuple(
        BrowseJudgement(
            j.id,
            username,
            j.qid,
            j.docno,
            j.grade,
            j.cannot_judge,
            j.comment,
            j.created_at,
            j.time_spent_ms,
        )
        for j, username in found
    )
    return Page(rows, total, offset, limit)


def assessor_names(session: Session, campaign: Campaign) -> list[str]:
    """Usernames with at least one judgement in the campaign."""
    judged = (
        select(Judgement.id)
        .where(Judgement.campaign_id == campaign.id, Judgement.user_id == User.id)
        .exists()
    )  # one index probe per user, on (campaign_id, user_id, client_id)
    return list(session.scalars(select(User.username).where(judged).order_by(User.username)))
