"""Gold documents and the campaign's quality settings.

An organiser marks documents of known grade: from imported qrels or the final (adjudicated)
labels, taken per topic in turn from each grade (highest first, each grade's documents in
a seeded random order, so that a small gold set still holds relevant documents), or one by
one with the reason the guidelines give. A share of each queue (`QualitySettings.gold_share`)
is then gold: `routing.gold_for_queue` picks, per assessor and topic, gold documents of the
topic that are not among the assessor's own, and `routing.mix_in` puts them at seeded
positions; the judging page shows them as any other document. Judgements of gold documents
stay out of agreement, adjudication and qrels unless `gold_in_qrels`
(`current_judgements.left_out_gold`); a pooled gold document is then labelled with its gold
grade (`qrels`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.orm import Session

from workbench import routing
from workbench.services import slots
from workbench.services.archive import refuse_if_archived
from workbench.services.errors import NotFound, ServiceError
from workbench.services.pools import qid_key
from workbench.services.qrels import final_labels
from workbench.services.topics import listed
from workbench.store.db import cast_result
from workbench.store.models import (
    Assignment,
    CalibrationItem,
    Campaign,
    Document,
    GoldDocument,
    Judgement,
    Pool,
    QrelsEntry,
    QrelsSet,
    QualitySettings,
    Topic,
)

MAX_GOLD_SHARE = 0.5
SOURCES = ("qrels", "final")


@dataclass(frozen=True)
class QualityConfig:
    """A campaign's quality settings (the defaults until an organiser changes them)."""

    gold_share: float = 0.0
    gold_in_qrels: bool = False
    show_gold_accuracy: bool = False


def quality_config(session: Session | Connection, campaign_id: int) -> QualityConfig:
    row = session.execute(
        select(
            QualitySettings.gold_share,
            QualitySettings.gold_in_qrels,
            QualitySettings.show_gold_accuracy,
        ).where(QualitySettings.campaign_id == campaign_id)
    ).first()
    return QualityConfig() if row is None else QualityConfig(*row)


def set_quality(
    session: Session,
    campaign: Campaign,
    *,
    gold_share: float | None = None,
    gold_in_qrels: bool | None = None,
    show_gold_accuracy: bool | None = None,
) -> QualityConfig:
    """Change the settings given (None: keep); the gold share is in [0, MAX_GOLD_SHARE]."""
    refuse_if_archived(campaign)
    if gold_share is not None and not 0.0 <= gold_share <= MAX_GOLD_SHARE:
        raise ServiceError(
            f"the gold share must be between 0 and {MAX_GOLD_SHARE}; got {gold_share}"
        )
    row = session.get(QualitySettings, campaign.id)
    if row is None:
        row = QualitySettings(
            campaign_id=campaign.id, gold_share=0.0, gold_in_qrels=False, show_gold_accuracy=False
        )
        session.add(row)
    if gold_share is not None:
        row.gold_share = float(gold_share)
    if gold_in_qrels is not None:
        row.gold_in_qrels = gold_in_qrels
    if show_gold_accuracy is not None:
        row.show_gold_accuracy = show_gold_accuracy
    session.flush()
    _touch_pools(session, campaign.id)
    return QualityConfig(row.gold_share, row.gold_in_qrels, row.show_gold_accuracy)


@dataclass(frozen=True)
class GoldRow:
    qid: str
    docno: str
    grade: int
    reason: str
    source: str


def gold_rows(session: Session, campaign: Campaign) -> list[GoldRow]:
    """The campaign's gold documents by topic then docno."""
    rows = session.scalars(select(GoldDocument).where(GoldDocument.campaign_id == campaign.id))
    found = [GoldRow(g.qid, g.docno, g.grade, g.reason, g.source) for g in rows]
    return sorted(found, key=lambda g: (qid_key(g.qid), g.docno))


def gold_grades(session: Session, campaign_id: int) -> dict[tuple[str, str], int]:
    """(qid, docno) -> gold grade."""
    rows = session.execute(
        select(GoldDocument.qid, GoldDocument.docno, GoldDocument.grade).where(
            GoldDocument.campaign_id == campaign_id
        )
    )
    return {(qid, docno): grade for qid, docno, grade in rows}


@dataclass(frozen=True)
class GoldItem:
    qid: str
    docno: str
    grade: int
    reason: str = ""


@dataclass(frozen=True)
class MarkResult:
    """What marking did: documents marked (new or changed), and the candidates left out
    because the campaign has no text for them (an assessor could not read them) or because
    they are in the practice set (whose expected grades assessors see)."""

    marked: int
    without_text: int
    topics: int
    in_practice: int = 0

    def left_out(self) -> str:
        """'2 without text, 1 in the practice set' ('' when none was left out)."""
        parts = [f"{self.without_text} without text"] if self.without_text else []
        parts += [f"{self.in_practice} in the practice set"] if self.in_practice else []
        return ", ".join(parts)


def _with_text(session: Session, campaign_id: int, docnos: Collection[str]) -> set[str]:
    found: set[str] = set()
    wanted = sorted(set(docnos))
    for start in range(0, len(wanted), 500):
        found.update(
            session.scalars(
                select(Document.docno).where(
                    Document.campaign_id == campaign_id,
                    Document.docno.in_(wanted[start : start + 500]),
                )
            )
        )
    return found


def mark(
    session: Session, campaign: Campaign, items: Sequence[GoldItem], *, source: str = "by hand"
) -> MarkResult:
    """Mark documents as gold (an existing mark is replaced). Every topic must be the
    campaign's, every grade on its scale, every document have its text."""
    refuse_if_archived(campaign)
    scale = {g.value for g in campaign.grades}
    topics = set(session.scalars(select(Topic.qid).where(Topic.campaign_id == campaign.id)))
    unknown = sorted({i.qid for i in items} - topics, key=qid_key)
    if unknown:
        raise NotFound(f"campaign {campaign.name!r} has no topic(s) {listed(unknown)}")
    off = sorted({i.grade for i in items} - scale)
    if off:
        raise ServiceError(
            f"grade(s) {', '.join(map(str, off))} are not on the scale: expected one of "
            f"{', '.join(map(str, sorted(scale)))}"
        )
    practised = sorted({(i.qid, i.docno) for i in items} & practice_keys(session, campaign.id))
    if practised:
        qid, docno = practised[0]
        raise ServiceError(
            f"{len(practised)} document(s) are in the practice set, where assessors see the "
            f"expected grade (e.g. topic {qid} document {docno}): a gold document must be "
            "unknown to them"
        )
    readable = _with_text(session, campaign.id, [i.docno for i in items])
    missing = sorted({i.docno for i in items} - readable)
    if missing:
        raise ServiceError(
            f"{len(missing)} gold document(s) have no text in the campaign (e.g. {missing[0]}): "
            "import them first, since assessors must be able to read them"
        )
    existing = {
        (g.qid, g.docno): g
        for g in session.scalars(
            select(GoldDocument).where(GoldDocument.campaign_id == campaign.id)
        )
    }
    for item in items:
        row = existing.get((item.qid, item.docno))
        if row is None:
            row = GoldDocument(campaign_id=campaign.id, qid=item.qid, docno=item.docno)
            session.add(row)
            existing[item.qid, item.docno] = row
        row.grade, row.reason, row.source = item.grade, item.reason.strip(), source[:500]
    session.flush()
    _touch_pools(session, campaign.id)
    return MarkResult(len(items), 0, len({i.qid for i in items}))


def balanced_sample(
    labels: Mapping[str, int], per_topic: int | None, seed: int, qid: str
) -> list[str]:
    """`per_topic` docnos of one topic's labels (all when None), taken in turn from each
    grade, highest first, each grade's docnos in seeded random order."""
    by_grade: dict[int, list[str]] = defaultdict(list)
    for docno in sorted(labels, key=lambda d: (routing.draw(seed, "gold-pick", qid, d), d)):
        by_grade[labels[docno]].append(docno)
    queues = [by_grade[g] for g in sorted(by_grade, reverse=True)]
    chosen: list[str] = []
    wanted = sum(map(len, queues)) if per_topic is None else per_topic
    while len(chosen) < wanted and any(queues):
        for queue in queues:
            if queue and len(chosen) < wanted:
                chosen.append(queue.pop(0))
    return chosen


def mark_from(
    session: Session,
    campaign: Campaign,
    source: str,
    *,
    qrels_name: str | None = None,
    topics: Sequence[str] | None = None,
    per_topic: int | None = None,
    seed: int = 0,
    reason: str = "",
) -> MarkResult:
    """Mark gold documents taken from imported qrels (source 'qrels', `qrels_name`) or the
    final labels ('final'): per topic (of `topics`, default every one with labels) up to
    `per_topic` documents (`balanced_sample`) among those the campaign has text for; the
    others are counted in the result, not marked."""
    labels = _source_labels(session, campaign, source, qrels_name)
    if per_topic is not None and per_topic < 1:
        raise ServiceError(f"documents per topic must be a positive integer; got {per_topic}")
    by_topic: dict[str, dict[str, int]] = defaultdict(dict)
    for (qid, docno), grade in labels.items():
        if grade >= 0:  # -1: pooled but not sampled, no known grade
            by_topic[qid][docno] = grade
    chosen = sorted(by_topic, key=qid_key) if topics is None else list(topics)
    absent = [q for q in chosen if q not in by_topic]
    if absent:
        raise NotFound(f"the {source} labels have no topic(s) {listed(absent)}")
    readable = _with_text(session, campaign.id, {d for q in chosen for d in by_topic[q]})
    practised = practice_keys(session, campaign.id)
    items, without, in_practice = [], 0, 0
    for qid in chosen:
        shown = {d for d in by_topic[qid] if (qid, d) in practised}
        in_practice += len(shown)
        usable = {d: g for d, g in by_topic[qid].items() if d in readable and d not in shown}
        without += len(by_topic[qid]) - len(usable) - len(shown)
        for docno in balanced_sample(usable, per_topic, seed, qid):
            items.append(GoldItem(qid, docno, usable[docno], reason))
    if not items:
        raise ServiceError(f"none of the {source} labels of these topics has a document with text")
    name = f"qrels {qrels_name}" if source == "qrels" else "final labels"
    done = mark(session, campaign, items, source=name)
    return MarkResult(done.marked, without, done.topics, in_practice)


def practice_keys(session: Session, campaign_id: int) -> set[tuple[str, str]]:
    """(qid, docno) of the campaign's practice items (`services.calibration`)."""
    rows = session.execute(
        select(CalibrationItem.qid, CalibrationItem.docno).where(
            CalibrationItem.campaign_id == campaign_id
        )
    )
    return {(qid, docno) for qid, docno in rows}


def _source_labels(
    session: Session, campaign: Campaign, source: str, qrels_name: str | None
) -> dict[tuple[str, str], int]:
    if source == "final":
        labels = final_labels(session, campaign)
        if not labels:
            raise ServiceError("the campaign has no final labels yet: adjudicate first")
        return labels
    if source != "qrels":
        raise ServiceError(f"unknown gold source {source!r}; expected one of {', '.join(SOURCES)}")
    qrels_set = session.scalar(
        select(QrelsSet).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == qrels_name)
    )
    if qrels_set is None:
        raise NotFound(
            f"no qrels named {qrels_name!r} in campaign {campaign.name!r} (it has: "
            f"{', '.join(qrels_set_names(session, campaign)) or 'none'})"
        )
    rows = session.execute(
        select(QrelsEntry.qid, QrelsEntry.docno, QrelsEntry.rel).where(
            QrelsEntry.qrels_set_id == qrels_set.id
        )
    )
    return {(qid, docno): rel for qid, docno, rel in rows}


def qrels_set_names(session: Session, campaign: Campaign) -> list[str]:
    """The names of the campaign's imported qrels (sources of gold documents)."""
    return sorted(session.scalars(select(QrelsSet.name).where(QrelsSet.campaign_id == campaign.id)))


def unmark(
    session: Session, campaign: Campaign, *, qid: str | None = None, docno: str | None = None
) -> int:
    """Remove gold marks: one document, one topic's, or all. Returns how many."""
    refuse_if_archived(campaign)
    query = delete(GoldDocument).where(GoldDocument.campaign_id == campaign.id)
    if qid is not None:
        query = query.where(GoldDocument.qid == qid)
    if docno is not None:
        query = query.where(GoldDocument.docno == docno)
    removed = int(cast_result(session.execute(query)).rowcount or 0)
    _touch_pools(session, campaign.id)
    return removed


def _touch_pools(session: Session, campaign_id: int) -> None:
    for pool_id in session.scalars(select(Pool.id).where(Pool.campaign_id == campaign_id)):
        slots.touch(session, pool_id)


# ---------------------------------------------------------------- gold in the queues


def mixed_queue(connection: Connection, assignment: Any, docnos: list[str], seed: int) -> list[str]:
    """An assignment's queue (`judging`'s sequence) with its gold documents mixed in."""
    campaign_id = connection.scalar(select(Pool.campaign_id).where(Pool.id == assignment.pool_id))
    share = quality_config(connection, campaign_id).gold_share if campaign_id else 0.0
    if not share or campaign_id is None:
        return docnos
    candidates = connection.scalars(
        select(GoldDocument.docno).where(
            GoldDocument.campaign_id == campaign_id, GoldDocument.qid == assignment.qid
        )
    )
    keys = (assignment.pool_id, assignment.qid, assignment.user_id)
    if slots.has_kept(connection, *keys):
        gold = _judged_gold(connection, campaign_id, assignment, candidates, docnos)
    else:
        gold = routing.gold_for_queue(docnos, candidates, share, seed, *keys)
    return routing.mix_in(docnos, gold, seed, *keys)


def _judged_gold(
    connection: Connection | Session, campaign_id: int, assignment: Any,
    candidates: Iterable[str], own: Collection[str],
) -> list[str]:  # fmt: skip
    """The gold of a queue whose remainder was reassigned: the gold documents (not its own)
    that its assessor has judged in the topic, and no other."""
    judged = set(
        connection.scalars(
            select(Judgement.docno).where(
                Judgement.campaign_id == campaign_id,
                Judgement.qid == assignment.qid,
                Judgement.user_id == assignment.user_id,
            )
        )
    )
    return sorted(d for d in set(candidates) if d in judged and d not in set(own))


def queue_gold(
    session: Session, assignments: Iterable[Assignment], own: Mapping[int, Collection[str]]
) -> dict[int, list[str]]:
    """assignment id -> the gold documents in its queue (`mixed_queue`, without the order),
    given each assignment's own documents; the assignments are of one campaign."""
    mine = list(assignments)
    if not mine:
        return {}
    share = quality_config(session, mine[0].campaign_id).gold_share
    if not share:
        return {}
    candidates: dict[str, list[str]] = defaultdict(list)
    for qid, docno in gold_grades(session, mine[0].campaign_id):
        candidates[qid].append(docno)
    seeds = dict(
        session.execute(
            select(Pool.id, Pool.seed).where(Pool.campaign_id == mine[0].campaign_id)
        ).all()
    )
    kept = slots.kept_places(session, list(seeds))
    return {
        a.id: _judged_gold(session, a.campaign_id, a, candidates.get(a.qid, []),
                           own.get(a.id, ()))
        if (a.pool_id, a.qid, a.user_id) in kept
        else routing.gold_for_queue(
            sorted(own.get(a.id, ())), candidates.get(a.qid, []), share, seeds[a.pool_id],
            a.pool_id, a.qid, a.user_id,
        )
        for a in mine
    }  # fmt: skip
