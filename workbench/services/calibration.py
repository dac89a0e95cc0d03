"""Calibration: a campaign's optional practice set, judged before an assessor's first topic.

Each item is a document of a topic with the expected grade and the reason the guidelines give;
after each answer the assessor sees both. Answers are kept apart from judgements (they never
enter agreement or qrels); the first answer of an item counts. An assessor with an active
assignment in the campaign is sent to the practice set until they have answered every item,
unless they have judged a document of the campaign already (calibration comes before the
first real topic, not in the middle of the work).

Items are read from lines `qid<TAB>docno<TAB>grade<TAB>reason` (the reason may be empty;
`#` lines and blank lines are skipped).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import limits
from workbench.services.archive import refuse_if_archived
from workbench.services.campaigns import get_campaign, scale_of
from workbench.services.errors import NotFound, ServiceError
from workbench.services.pools import qid_key
from workbench.services.topics import listed
from workbench.store.db import cast_result
from workbench.store.models import (
    Assignment,
    CalibrationAnswer,
    CalibrationItem,
    Campaign,
    Document,
    GoldDocument,
    Judgement,
    Topic,
)


@dataclass(frozen=True)
class PracticeLine:
    qid: str
    docno: str
    grade: int
    reason: str


def parse_items(text: str, source: str = "practice set") -> list[PracticeLine]:
    """Practice items from text (see the module docstring); a bad line is a ServiceError
    naming `source`, the line and what was expected."""
    found: list[PracticeLine] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t", 3)
        where = f"{source}:{number}"
        if len(parts) < 3:
            raise ServiceError(
                f"{where}: expected qid<TAB>docno<TAB>grade<TAB>reason; got {line[:80]!r}"
            )
        qid, docno, grade_text = (p.strip() for p in parts[:3])
        reason = parts[3].strip() if len(parts) > 3 else ""
        try:
            grade = int(grade_text)
        except ValueError:
            raise ServiceError(f"{where}: expected an integer grade; got {grade_text!r}") from None
        if not qid or not docno or len(qid) > limits.QID or len(docno) > limits.DOCNO:
            raise ServiceError(f"{where}: expected a qid and a docno; got {line[:80]!r}")
        if abs(grade) > limits.INT32_MAX:
            raise ServiceError(f"{where}: grade {grade} is out of range")
        if (qid, docno) in seen:
            raise ServiceError(
                f"{where}: topic {qid} document {docno} is already on line {seen[qid, docno]}"
            )
        seen[qid, docno] = number
        found.append(PracticeLine(qid, docno, grade, reason))
    if not found:
        raise ServiceError(f"{source}: no practice item")
    return found


def set_items(session: Session, campaign: Campaign, lines: list[PracticeLine]) -> int:
    """Replace the campaign's practice set (answers to the old items are dropped). Every
    topic and document must be the campaign's, every grade on its scale."""
    refuse_if_archived(campaign)
    scale = {g.value for g in campaign.grades}
    off = sorted({line.grade for line in lines} - scale)
    if off:
        raise ServiceError(
            f"grade(s) {', '.join(map(str, off))} are not on the scale: expected one of "
            f"{', '.join(map(str, sorted(scale)))}"
        )
    topics = set(session.scalars(select(Topic.qid).where(Topic.campaign_id == campaign.id)))
    unknown = sorted({line.qid for line in lines} - topics, key=qid_key)
    if unknown:
        raise NotFound(f"campaign {campaign.name!r} has no topic(s) {listed(unknown)}")
    docnos = sorted({line.docno for line in lines})
    present = set(
        session.scalars(
            select(Document.docno).where(
                Document.campaign_id == campaign.id, Document.docno.in_(docnos)
            )
        )
    )
    absent = [d for d in docnos if d not in present]
    if absent:
        raise NotFound(f"campaign {campaign.name!r} has no text for document(s) {listed(absent)}")
    golden = {
        (qid, docno)
        for qid, docno in session.execute(
            select(GoldDocument.qid, GoldDocument.docno).where(
                GoldDocument.campaign_id == campaign.id
            )
        )
    }
    shown = [line for line in lines if (line.qid, line.docno) in golden]
    if shown:
        raise ServiceError(
            f"topic {shown[0].qid} document {shown[0].docno} is a gold document ({len(shown)} "
            "practice item(s) are): the practice set shows its expected grade, and gold must "
            "stay unknown to assessors; unmark it or choose another document"
        )
    clear(session, campaign)
    session.add_all(
        CalibrationItem(
            campaign_id=campaign.id,
            position=i,
            qid=line.qid,
            docno=line.docno,
            grade=line.grade,
            reason=line.reason,
        )
        for i, line in enumerate(lines)
    )
    session.flush()
    return len(lines)


def clear(session: Session, campaign: Campaign) -> int:
    """Remove the practice set and its answers. Returns how many items there were."""
    refuse_if_archived(campaign)
    result = session.execute(
        delete(CalibrationItem).where(CalibrationItem.campaign_id == campaign.id)
    )
    return int(cast_result(result).rowcount or 0)


@dataclass(frozen=True)
class PracticeItemRow:
    id: int
    qid: str
    docno: str
    grade: int
    reason: str


def items(session: Session, campaign_id: int) -> list[PracticeItemRow]:
    rows = session.scalars(
        select(CalibrationItem)
        .where(CalibrationItem.campaign_id == campaign_id)
        .order_by(CalibrationItem.position)
    )
    return [PracticeItemRow(i.id, i.qid, i.docno, i.grade, i.reason) for i in rows]


def _answered(session: Session, campaign_id: int, user_id: int) -> dict[int, int | None]:
    rows = session.execute(
        select(CalibrationAnswer.item_id, CalibrationAnswer.grade)
        .join(CalibrationItem, CalibrationItem.id == CalibrationAnswer.item_id)
        .where(CalibrationItem.campaign_id == campaign_id, CalibrationAnswer.user_id == user_id)
    )
    return dict(rows.all())


def _has_assignment(session: Session, campaign_id: int, user_id: int) -> bool:
    return (
        session.scalar(
            select(Assignment.id)
            .where(
                Assignment.campaign_id == campaign_id,
                Assignment.user_id == user_id,
                Assignment.active.is_(True),
            )
            .limit(1)
        )
        is not None
    )


def pending(session: Session, campaign_id: int, user_id: int) -> bool:
    """Whether the assessor must practise before judging in the campaign: it has practice
    items, they have not answered them all, and they have judged nothing in it yet."""
    total = len(items(session, campaign_id))
    if not total or len(_answered(session, campaign_id, user_id)) >= total:
        return False
    judged = session.scalar(
        select(Judgement.id)
        .where(Judgement.campaign_id == campaign_id, Judgement.user_id == user_id)
        .limit(1)
    )
    return judged is None


@dataclass(frozen=True)
class PracticePage:
    """One practice item as the assessor sees it (no expected grade until answered)."""

    campaign_id: int
    campaign: str
    item_id: int
    number: int  # 1-based
    total: int
    qid: str
    topic_title: str
    topic_description: str
    topic_narrative: str
    docno: str
    title: str
    text: str
    grades: list[dict[str, int | str]]


@dataclass(frozen=True)
class Feedback:
    """An answered practice item: the answer, the expected grade and the guideline's reason."""

    campaign_id: int
    item_id: int
    number: int
    total: int
    qid: str
    docno: str
    given: int | None
    given_label: str
    expected: int
    expected_label: str
    reason: str
    next_item: int | None  # the next unanswered item, None when all are answered

    @property
    def correct(self) -> bool:
        return self.given == self.expected


def _member(session: Session, campaign_id: int, user_id: int) -> Campaign:
    campaign = get_campaign(session, campaign_id)
    if campaign.archived_at is not None or not _has_assignment(session, campaign_id, user_id):
        raise NotFound(f"no practice set of yours in campaign {campaign_id}")
    return campaign


def practice_page(session: Session, campaign_id: int, user_id: int) -> PracticePage | None:
    """The assessor's next unanswered item (None: all answered); NotFound for a campaign in
    which they have no assignment."""
    campaign = _member(session, campaign_id, user_id)
    all_items = items(session, campaign_id)
    answered = _answered(session, campaign_id, user_id)
    for number, item in enumerate(all_items, 1):
        if item.id in answered:
            continue
        topic = session.scalar(
            select(Topic).where(Topic.campaign_id == campaign_id, Topic.qid == item.qid)
        )
        document = session.scalar(
            select(Document).where(
                Document.campaign_id == campaign_id, Document.docno == item.docno
            )
        )
        return PracticePage(
            campaign_id,
            campaign.name,
            item.id,
            number,
            len(all_items),
            item.qid,
            topic.title if topic else "",
            topic.description if topic else "",
            topic.narrative if topic else "",
            item.docno,
            document.title if document else "",
            document.text if document else "",
            scale_of(campaign),
        )
    return None


def answer(
    session: Session,
    campaign_id: int,
    item_id: int,
    user_id: int,
    grade: int | None,
    *,
    time_spent_ms: int = 0,
) -> Feedback:
    """Record the assessor's answer (the first counts; a repeat returns the first) and give
    the feedback."""
    campaign = _member(session, campaign_id, user_id)
    item = session.get(CalibrationItem, item_id)
    if item is None or item.campaign_id != campaign_id:
        raise NotFound(f"no practice item {item_id} in campaign {campaign_id}")
    if grade is not None and grade not in {g.value for g in campaign.grades}:
        raise ServiceError(f"grade {grade} is not on the scale")
    if item_id not in _answered(session, campaign_id, user_id):
        try:
            with session.begin_nested():
                session.add(
                    CalibrationAnswer(
                        item_id=item_id,
                        user_id=user_id,
                        grade=grade,
                        time_spent_ms=max(0, min(int(time_spent_ms), 24 * 3600 * 1000)),
                    )
                )
        except IntegrityError:
            pass  # answered by a concurrent request: the first answer counts
    return feedback(session, campaign_id, item_id, user_id)


def feedback(session: Session, campaign_id: int, item_id: int, user_id: int) -> Feedback:
    """The feedback of an item the assessor has answered; NotFound otherwise."""
    campaign = _member(session, campaign_id, user_id)
    answered = _answered(session, campaign_id, user_id)
    if item_id not in answered:
        raise NotFound(f"practice item {item_id} is not answered")
    all_items = items(session, campaign_id)
    labels = {g.value: g.label for g in campaign.grades}
    number = next(i for i, item in enumerate(all_items, 1) if item.id == item_id)
    item = all_items[number - 1]
    given = answered[item_id]
    upcoming = [i.id for i in all_items if i.id not in answered]
    return Feedback(
        campaign_id,
        item_id,
        number,
        len(all_items),
        item.qid,
        item.docno,
        given,
        "cannot judge" if given is None else labels.get(given, str(given)),
        item.grade,
        labels.get(item.grade, str(item.grade)),
        item.reason,
        upcoming[0] if upcoming else None,
    )


@dataclass(frozen=True)
class PracticeResult:
    """An assessor's practice: items answered and answered with the expected grade."""

    answered: int
    correct: int
    total: int


def results(session: Session, campaign_id: int) -> dict[int, PracticeResult]:
    """user id -> their practice result (assessors who answered at least one item)."""
    all_items = {i.id: i.grade for i in items(session, campaign_id)}
    by_user: dict[int, list[bool]] = defaultdict(list)
    rows = session.execute(
        select(CalibrationAnswer.user_id, CalibrationAnswer.item_id, CalibrationAnswer.grade)
        .join(CalibrationItem, CalibrationItem.id == CalibrationAnswer.item_id)
        .where(CalibrationItem.campaign_id == campaign_id)
    )
    for user_id, item_id, grade in rows:
        by_user[user_id].append(grade == all_items[item_id])
    return {
        u: PracticeResult(len(marks), sum(marks), len(all_items)) for u, marks in by_user.items()
    }
