"""The adjudication page: the disagreements under a merge rule, a page at a time.

Which documents disagree, and in which view each is (left to decide, decided by the rule,
decided by an adjudicator), is computed out of the request as a report job
(`queue_figures`, kept until what it is read from changes: `judging_figures`); the page
takes its window of that list and reads what it shows of those documents (grades, notes,
labels, texts) now. At TREC size the whole queue took 25 s of request CPU; a window reads
25 documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.services.adjudication import (
    Key,
    Labelled,
    MergeSpec,
    QueueItem,
    anonymous_names,
    disagree,
    disagreement_queue,
    final_labels,
    judge_names,
    judged_documents,
    primary_judge_id,
)
from workbench.services.campaigns import CampaignInfo, campaign_info, get_campaign
from workbench.services.current_judgements import ungraded_keys, withdrawn_note
from workbench.services.errors import ServiceError
from workbench.services.judging_figures import Figures, judgement_mark
from workbench.store.models import Campaign, Document, Judgement, Topic

QUEUE_VIEWS = {
    "undecided": "left to decide (no final label yet)",
    "rule": "decided by the merge rule (to review)",
    "adjudicated": "decided by an adjudicator",
    "all": "every disagreement",
}
"""Which documents of the queue (disagreements, and documents no judge could grade) the
adjudication page lists (its filter)."""
QUEUE_PAGE = 25  # documents per page of the queue


@dataclass(frozen=True)
class JudgeAnswer:
    """One judge's current answer on a queued document: the grade (None: could not judge,
    with the reason), comment, evidence passages as their text, and the time spent on the
    document over all the judge's revisions."""

    judge: str
    grade: int | None
    cannot_judge: str
    comment: str
    evidence: tuple[str, ...]
    time_spent_ms: int


@dataclass(frozen=True)
class QueueEntry:
    """A queue item as the adjudication page shows it: its topic's title and narrative, the
    document's title and whole text (evidence passages marked), and each judge's answer."""

    item: QueueItem
    topic: str
    narrative: str
    title: str
    text: str
    answers: tuple[JudgeAnswer, ...] = ()
    passages: tuple[tuple[str, bool], ...] = ()  # the text cut at evidence: (piece, marked)


@dataclass(frozen=True)
class AdjudicationPage:
    """The adjudication page: the campaign, one page of the queue under the chosen rule and
    view (empty, with `error` saying why, when the rule is refused), how many documents each
    view holds, and the note on withdrawn judgements."""

    campaign: CampaignInfo
    entries: tuple[QueueEntry, ...]
    error: str | None
    withdrawn: str
    view: str = "undecided"
    counts: tuple[tuple[str, int], ...] = ()  # view -> documents
    total: int = 0  # documents in the chosen view
    offset: int = 0


@dataclass(frozen=True)
class QueueFigures(Figures):
    """The disagreements under a rule as (qid, docno, view) in key order, the view being
    "undecided", "rule" or "adjudicated" (QUEUE_VIEWS), and how many each view holds;
    `error` when the rule is refused (no keys)."""

    error: str | None
    keys: tuple[tuple[str, str, str], ...]
    counts: tuple[tuple[str, int], ...]  # view -> documents, every view of QUEUE_VIEWS
    judges: tuple[int, ...] = ()  # the campaign's judges (`judge_names`), in user-id order


def refusal(session: Session, campaign: Campaign, merge: MergeSpec) -> str | None:
    """Why the queue cannot be shown under `merge` (an unknown rule or tie, an unknown
    primary assessor), or None."""
    try:
        merge.check()
        primary_judge_id(session, campaign, merge.primary)
    except ServiceError as refused:
        return str(refused)
    return None


def _state(label: Labelled | None) -> str:
    if label is None:
        return "undecided"
    return "adjudicated" if label.adjudicated else "rule"


def queue_figures(session: Session, campaign_id: int, merge: MergeSpec) -> QueueFigures:
    """Every disagreement of the campaign under `merge`, and every document no judge could
    grade, with its view (`disagreement_queue`'s documents, include_decided, without what the
    page reads for its window alone)."""
    campaign = get_campaign(session, campaign_id)
    mark = judgement_mark(session, campaign_id)
    refused = refusal(session, campaign, merge)
    if refused is not None:
        return QueueFigures(mark, refused, (), tuple((name, 0) for name in QUEUE_VIEWS))
    existing = final_labels(session, campaign)
    documents = judged_documents(session, campaign)
    queued = {
        (d.qid, d.docno) for d in documents if disagree(d, merge.rule, campaign.relevance_level)
    }
    ungraded = ungraded_keys(session, campaign, {(d.qid, d.docno) for d in documents})
    for key in ungraded:  # a stale rule's label labels nothing (`qrels.final_labels`)
        if key in existing and not existing[key].adjudicated:
            del existing[key]
    keys = tuple(
        (qid, docno, _state(existing.get((qid, docno)))) for qid, docno in sorted(queued | ungraded)
    )
    counts = tuple((name, sum(_in_view(state, name) for *_, state in keys)) for name in QUEUE_VIEWS)
    return QueueFigures(mark, None, keys, counts, tuple(judge_names(session, campaign)))


def _in_view(state: str, view: str) -> bool:
    return view == "all" or state == view


def _cut(text: str, spans: list[list[int]]) -> tuple[tuple[str, bool], ...]:
    """`text` as pieces, each marked when an evidence span (of any judge) covers it."""
    bounds = sorted({0, len(text), *(min(max(x, 0), len(text)) for s in spans for x in s)})
    pieces = []
    for start, end in pairwise(bounds):
        covered = any(s[0] <= start and end <= s[1] for s in spans)
        if start < end:
            pieces.append((text[start:end], covered))
    return tuple(pieces)


def _times(session: Session, campaign: Campaign, keys: set[Key]) -> dict[tuple[str, str, int], int]:
    """Milliseconds each judge spent on each (qid, docno), summed over every event of theirs."""
    if not keys:
        return {}
    rows = session.execute(
        select(Judgement.qid, Judgement.docno, Judgement.user_id, func.sum(Judgement.time_spent_ms))
        .where(
            Judgement.campaign_id == campaign.id,
            Judgement.qid.in_({qid for qid, _ in keys}),
            Judgement.docno.in_({docno for _, docno in keys}),
        )
        .group_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    )
    return {(q, d, u): int(ms or 0) for q, d, u, ms in rows if (q, d) in keys}


def adjudication_page(
    session: Session,
    campaign: Campaign,
    merge: MergeSpec,
    figures: QueueFigures | None,
    *,
    view: str = "undecided",
    offset: int = 0,
    limit: int = QUEUE_PAGE,
) -> AdjudicationPage:
    """The disagreements under `merge` in `view` (QUEUE_VIEWS), `limit` from `offset` in the
    order of `figures` (None: not computed yet, an empty page; empty with `error` when the
    rule is refused, `refusal`), with what the adjudicator
    reads beside each, read now for that page alone: the topic, the whole document with the
    judges' evidence marked, and every judge's grade, comment, evidence and time spent (a
    document of the window that no longer disagrees is left out)."""
    if view not in QUEUE_VIEWS:
        raise ServiceError(f"unknown queue view {view!r}; expected one of {', '.join(QUEUE_VIEWS)}")
    error = refusal(session, campaign, merge)
    keys = figures.keys if figures is not None and error is None else ()
    chosen = [(qid, docno) for qid, docno, state in keys if _in_view(state, view)]
    window = chosen[max(offset, 0) : max(offset, 0) + limit]
    queue = []
    judges = _judges(session, campaign, figures, window)
    if window:
        queue = disagreement_queue(
            session, campaign, merge, include_decided=True, keys=window, names=judges
        )
    qids, docnos = {q.qid for q in queue}, {q.docno for q in queue}
    topics = {
        qid: (title, narrative or "")
        for qid, title, narrative in session.execute(
            select(Topic.qid, Topic.title, Topic.narrative).where(
                Topic.campaign_id == campaign.id, Topic.qid.in_(qids)
            )
        )
    }
    documents = {
        docno: (title, text)
        for docno, title, text in session.execute(
            select(Document.docno, Document.title, Document.text).where(
                Document.campaign_id == campaign.id, Document.docno.in_(docnos)
            )
        )
    }
    names = {name: uid for uid, name in judges.items()}
    times = _times(session, campaign, {(q.qid, q.docno) for q in queue})
    entries = []
    for q in queue:
        title, text = documents.get(q.docno, ("", ""))
        answers = tuple(
            JudgeAnswer(
                judge,
                q.grades.get(judge),
                q.cannot_judge.get(judge, ""),
                q.comments.get(judge, ""),
                tuple(text[a:b] for a, b in q.evidence.get(judge, [])),
                times.get((q.qid, q.docno, names[judge]), 0),
            )
            for judge in sorted({*q.grades, *q.cannot_judge}, key=_judge_number)
        )
        spans = [span for found in q.evidence.values() for span in found]
        entries.append(
            QueueEntry(q, *topics.get(q.qid, ("", "")), title, text, answers, _cut(text, spans))
        )
    return AdjudicationPage(
        campaign_info(campaign),
        tuple(entries),
        error,
        withdrawn_note(session, campaign),
        view,
        figures.counts if figures is not None and error is None else (),
        len(chosen),
        max(offset, 0),
    )


def _judges(
    session: Session, campaign: Campaign, figures: QueueFigures | None, window: list[Key]
) -> dict[int, str]:
    """`judge_names` as the figures have them (a distinct read over every judgement of the
    campaign: about 1 s of CPU at TREC size), or read now when someone who judged a document
    of the window is not among them (began judging after the figures were computed)."""
    if not window:
        return {}  # no document shown: no name needed
    known = figures.judges if figures is not None else ()
    if known:
        judged = select(Judgement.user_id).where(
            Judgement.campaign_id == campaign.id,
            Judgement.qid.in_({qid for qid, _ in window}),
            Judgement.docno.in_({docno for _, docno in window}),
        )
        if set(session.scalars(judged.distinct())) <= set(known):
            return anonymous_names(known)
    return judge_names(session, campaign)


def _judge_number(name: str) -> int:
    return int(name.rpartition(" ")[2])
