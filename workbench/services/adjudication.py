"""Adjudication: merge the judges' current grades into final labels, with provenance.

A merge rule (`workbench.agreement.merge_grades`: majority, mean, any, all, primary) is applied
to every judged document. Where the rule decides, a FinalLabel row records the grade, the rule
and the judges' grades keyed by judge id (the user id, never the name). Where it cannot (a
majority tie sent to adjudication), or where no judge could grade the document (only 'cannot
judge' answers), the document waits in the queue, which shows the judges
only as "Judge 1", "Judge 2", ... (the campaign's judges in user-id order); an adjudicator's
decision records the chosen grade, the adjudicator and a reason. A decision by an
adjudicator is never overwritten by re-applying a rule.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import Connection, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from workbench import limits
from workbench.agreement import MERGE_RULES, TIE_RULES, MergeRule, TieRule, binarise, merge_grades
from workbench.services import changes
from workbench.services.current_judgements import (
    counted_grades,
    counted_judges,
    counted_notes,
    ungraded_keys,
)
from workbench.services.errors import ServiceError
from workbench.services.qrels import qrels_completeness
from workbench.store.models import (
    Campaign,
    FinalLabel,
    User,
    utcnow,
)

ADJUDICATED = "adjudicated"
Key = tuple[str, str]


@dataclass(frozen=True)
class MergeSpec:
    """A merge rule as an organiser chooses it: `rule` (one of agreement.MERGE_RULES), the
    `tie` rule of a majority (agreement.TIE_RULES) and, for the rule "primary", the primary
    assessor's username."""

    rule: str
    tie: str = "adjudicate"
    primary: str | None = None

    def check(self) -> None:
        """Refuse (ServiceError) an unknown rule or tie, or "primary" without a username."""
        if self.rule not in MERGE_RULES:
            raise ServiceError(
                f"unknown merge rule {self.rule!r}; expected one of {', '.join(MERGE_RULES)}"
            )
        if self.tie not in TIE_RULES:
            raise ServiceError(
                f"unknown tie rule {self.tie!r}; expected one of {', '.join(TIE_RULES)}"
            )
        if self.rule == "primary" and self.primary is None:
            raise ServiceError("the primary rule needs the primary assessor's username")


@dataclass(frozen=True)
class JudgedDocument:
    """A document of a topic with the current grades of its judges."""

    qid: str
    docno: str
    grades: dict[int, int]  # judge (user) id -> grade, in id order

    def provenance(self) -> dict[str, int]:
        """The judges' grades as stored on a FinalLabel (JSON keys: judge ids)."""
        return {str(uid): grade for uid, grade in self.grades.items()}


@dataclass(frozen=True)
class QueueItem:
    """A document on which the judges disagree under a rule, or that no judge could grade
    (`grades` empty); proposal is None where the rule cannot decide (a tie, no grade)."""

    qid: str
    docno: str
    grades: dict[str, int]  # "Judge n" -> grade
    proposal: int | None
    final: int | None  # the current final label, if any
    comments: dict[str, str] = field(default_factory=dict)  # "Judge n" -> their comment
    cannot_judge: dict[str, str] = field(default_factory=dict)  # "Judge n" -> their reason
    evidence: dict[str, list] = field(default_factory=dict)  # "Judge n" -> [[start, end], ...]
    adjudicated: bool = False  # the final label is an adjudicator's decision


@dataclass(frozen=True)
class AdjudicationSummary:
    rule: str
    labelled: int  # documents whose final label the rule set
    kept: int  # documents kept as an adjudicator decided them
    queued: int  # documents the rule could not decide
    unlabelled: str = ""  # what the final qrels lack now (`qrels.Completeness`), "" if none
    transactions: int = 1  # write transactions it took (each counted by `changes`)
    redecided: int = 0  # topics decided again as their judgements changed while it ran
    dropped: int = 0  # rule-made labels removed: their documents no longer have a grade

    def message(self) -> str:
        """What the CLI and the web say after applying a rule."""
        text = (
            f"{self.rule}: {self.labelled} final labels set, {self.kept} kept as adjudicated, "
            f"{self.queued} left to adjudicate"
        )
        if self.dropped:
            text += (
                f"; {self.dropped} earlier rule-made label(s) removed, as their documents no "
                "longer have a grade that counts (revised to 'cannot judge' or withdrawn)"
            )
        if self.redecided:
            text += (
                f"; {self.redecided} topic(s) decided again as their judgements changed "
                "while the rule ran"
            )
        if self.unlabelled:
            text += (
                f"; the final qrels are incomplete: {self.unlabelled} (exports and evaluation "
                "refuse them unless asked for incomplete qrels)"
            )
        return text + "."


def judge_names(session: Session, campaign: Campaign) -> dict[int, str]:
    """Anonymous display names: the campaign's judging users in user-id order -> "Judge n"."""
    return anonymous_names(counted_judges(session, campaign))


def anonymous_names(users: Iterable[int]) -> dict[int, str]:
    """The users in id order -> "Judge 1", "Judge 2", ..."""
    return {uid: f"Judge {n}" for n, uid in enumerate(sorted(users), start=1)}


def judged_documents(
    session: Session,
    campaign: Campaign,
    *,
    qid: str | None = None,
    docnos: Collection[str] | None = None,
    qids: Collection[str] | None = None,
) -> list[JudgedDocument]:
    """Every (topic, document) with at least one current grade that counts; optionally of
    one topic (or some) or some documents (read for them alone)."""
    by_key: dict[Key, dict[int, int]] = defaultdict(dict)
    for row in counted_grades(session, campaign, qid=qid, docnos=docnos, qids=qids):
        by_key[(row.qid, row.docno)][row.user_id] = row.grade
    return [
        JudgedDocument(qid, docno, {uid: grades[uid] for uid in sorted(grades)})
        for (qid, docno), grades in sorted(by_key.items())
    ]


def primary_judge_id(session: Session, campaign: Campaign, primary: str | None) -> int | None:
    """The primary assessor's user id."""
    if primary is None:
        return None
    user_id = session.scalar(select(User.id).where(User.username == primary))
    if user_id not in judge_names(session, campaign):
        raise ServiceError(f"primary assessor {primary!r} has no judgements in {campaign.name!r}")
    return user_id


def _propose(document: JudgedDocument, merge: MergeSpec, primary: int | None):
    judges = list(document.grades)
    grades = [document.grades[j] for j in judges]
    primary_index = judges.index(primary) if primary in judges else None
    if merge.rule == "primary" and primary_index is None:
        return None  # the primary did not judge it: an adjudicator must
    # rule and tie were checked against MERGE_RULES and TIE_RULES by MergeSpec.check
    rule, tie = cast(MergeRule, merge.rule), cast(TieRule, merge.tie)
    return merge_grades(grades, rule=rule, tie=tie, primary_index=primary_index)


def disagree(document: JudgedDocument, rule: str, level: int) -> bool:
    """Judges disagree: on the grade, or for any/all (binary rules) on relevance."""
    grades = list(document.grades.values())
    if rule in ("any", "all"):
        grades = [int(x) for x in binarise(grades, level)]
    return len(set(grades)) > 1


@dataclass(frozen=True)
class Labelled:
    """What a rule and the queue need to know of a stored final label."""

    id: int
    grade: int
    adjudicated: bool


def final_labels(
    session: Session,
    campaign: Campaign,
    *,
    qids: Collection[str] | None = None,
    docnos: Collection[str] | None = None,
) -> dict[Key, Labelled]:
    """The campaign's final labels by (qid, docno), optionally of some topics or documents
    only, read as plain columns (not as objects of the ORM: a TREC-size campaign has
    670,000)."""
    columns = (FinalLabel.qid, FinalLabel.docno, FinalLabel.id, FinalLabel.grade)
    query = select(*columns, FinalLabel.adjudicator_id).where(FinalLabel.campaign_id == campaign.id)
    if qids is not None:
        query = query.where(FinalLabel.qid.in_(sorted(qids)))
    if docnos is not None:
        query = query.where(FinalLabel.docno.in_(sorted(docnos)))
    return {
        (row.qid, row.docno): Labelled(row.id, row.grade, row.adjudicator_id is not None)
        for row in session.execute(query)
    }


def rule_labelled_topics(session: Session, campaign: Campaign) -> set[str]:
    """The topics with a final label that a rule made (not an adjudicator)."""
    query = select(FinalLabel.qid).where(
        FinalLabel.campaign_id == campaign.id, FinalLabel.adjudicator_id.is_(None)
    )
    return set(session.scalars(query.distinct()))


def _final_label(session: Session, campaign: Campaign, qid: str, docno: str) -> FinalLabel | None:
    return session.scalar(
        select(FinalLabel).where(
            FinalLabel.campaign_id == campaign.id,
            FinalLabel.qid == qid,
            FinalLabel.docno == docno,
        )
    )


DELETED_PER_STATEMENT = 10_000
"""Ids per DELETE ... IN (...): within SQLite's 32,766 bound parameters and PostgreSQL's 65,535."""


_LABELS = FinalLabel.__table__
_RULE_VALUES = ("grade", "rule", "judges", "reason", "created_at")
_UPDATE_RULE_MADE = (
    update(_LABELS)
    .where(_LABELS.c.id == bindparam("label_id"), _LABELS.c.adjudicator_id.is_(None))
    .values({name: bindparam(name) for name in _RULE_VALUES})
)
"""Update a label by id unless an adjudicator decided it (a Core statement: an executemany
through a Connection or a Session alike)."""
_INSERTS = {
    name: dialect.insert(_LABELS).on_conflict_do_nothing(
        index_elements=["campaign_id", "qid", "docno"]
    )
    for name, dialect in (("sqlite", sqlite), ("postgresql", postgresql))
}
"""Insert a label unless the document got one meanwhile (on PostgreSQL a decision committed
while a rule's batch ran)."""


def write_labels(db: Session | Connection, campaign_id: int, writes: LabelWrites) -> None:
    """Insert, update (by id) and delete final labels of campaign `campaign_id` as bulk
    statements (executemany), without an ORM object per label, counted as a change of the
    campaign (`changes.changed`: a Session's at its commit, a Connection's now, the
    transaction's last write). A label an adjudicator decided is never updated or deleted,
    and a label is inserted only where none is (a decision made meanwhile wins). Final labels
    are never held as objects by a caller of a rule: a stored one is read again after it."""
    if isinstance(db, Session):
        db.flush()
    dialect = (db.get_bind() if isinstance(db, Session) else db).dialect.name
    if writes.added:
        db.execute(_INSERTS[dialect], writes.added)
    if writes.changed:
        db.execute(_UPDATE_RULE_MADE, writes.changed)
    for start in range(0, len(writes.removed), DELETED_PER_STATEMENT):
        chunk = writes.removed[start : start + DELETED_PER_STATEMENT]
        db.execute(
            delete(FinalLabel).where(FinalLabel.id.in_(chunk), FinalLabel.adjudicator_id.is_(None))
        )
    if isinstance(db, Session):  # labels the session holds are read again when next used
        for held in list(db.identity_map.values()):
            if isinstance(held, FinalLabel):
                db.expire(held)
    changes.changed(db, campaign_id)  # every rule applied counts, even one writing nothing


@dataclass(frozen=True, slots=True)
class Proposal:
    """A rule's decision on one judged document: its grade (None: the rule cannot decide, the
    document goes to the queue) and the judges' grades it was made from (provenance)."""

    qid: str
    docno: str
    grade: int | None
    judges: dict[str, int]


def proposals(
    documents: Iterable[JudgedDocument], merge: MergeSpec, primary_judge: int | None
) -> list[Proposal]:
    """The rule's decision on each document (the CPU of a rule: 669,409 documents at full
    size)."""
    found = []
    for document in documents:
        grade = _propose(document, merge, primary_judge)
        found.append(
            Proposal(
                document.qid,
                document.docno,
                None if grade is None else int(grade),
                document.provenance(),
            )
        )
    return found


@dataclass
class LabelWrites:
    """What a rule writes: rows to insert, updates by id, ids to delete (rule-made labels of
    documents the rule no longer decides); how many labels it keeps as adjudicated and how
    many documents it leaves in the queue."""

    added: list[dict[str, object]] = field(default_factory=list)
    changed: list[dict[str, object]] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    kept: int = 0
    queued: int = 0
    dropped: int = 0  # rule-made labels of documents no longer graded (in `removed`)

    def counts(self) -> RuleCounts:
        """What the writes do, as a summary counts it."""
        return RuleCounts(len(self.added) + len(self.changed), self.kept, self.queued, self.dropped)


@dataclass(frozen=True)
class RuleCounts:
    """Labels a rule set, labels it kept as adjudicated, documents it left in the queue, and
    rule-made labels it removed as their documents no longer have a grade that counts."""

    labelled: int = 0
    kept: int = 0
    queued: int = 0
    dropped: int = 0

    def __add__(self, other: RuleCounts) -> RuleCounts:
        return RuleCounts(
            self.labelled + other.labelled,
            self.kept + other.kept,
            self.queued + other.queued,
            self.dropped + other.dropped,
        )


def label_writes(
    campaign_id: int,
    decided: Iterable[Proposal],
    existing: Mapping[Key, Labelled],
    *,
    rule: str,
    reason: str,
    now: dt.datetime,
) -> LabelWrites:
    """The writes that make the labels of the `decided` documents the rule's, given the
    `existing` labels: an adjudicator's label is kept; a document the rule cannot decide loses
    an earlier rule-made label, and so does a document of `existing` that no longer has a
    grade that counts (revised to 'cannot judge', its assignment withdrawn): `existing` holds
    the labels of the topics the rule decides, and only those."""
    writes = LabelWrites()
    proposed: set[Key] = set()
    for proposal in decided:
        proposed.add((proposal.qid, proposal.docno))
        label = existing.get((proposal.qid, proposal.docno))
        if label is not None and label.adjudicated:
            writes.kept += 1
            continue
        if proposal.grade is None:
            writes.queued += 1
            if label is not None:
                writes.removed.append(label.id)
            continue
        values = {
            "grade": proposal.grade,
            "rule": rule,
            "judges": proposal.judges,
            "reason": reason,
            "created_at": now,
        }
        if label is None:
            key = {"campaign_id": campaign_id, "qid": proposal.qid, "docno": proposal.docno}
            writes.added.append(key | values)
        else:
            writes.changed.append({"label_id": label.id} | values)
    for labelled, label in existing.items():
        if labelled not in proposed and not label.adjudicated:
            writes.removed.append(label.id)  # its grades were revised away or withdrawn
            writes.dropped += 1
    return writes


@dataclass(frozen=True)
class RuleRequest:
    """A checked request to apply a rule: the rule's name as stored on the labels, the
    primary judge's id (rule "primary"), the chosen topics (None: all), the reason."""

    merge: MergeSpec
    rule: str
    primary_judge: int | None
    chosen: frozenset[str] | None
    reason: str

    def scope(self) -> str:
        """The rule's name as a summary says it."""
        if self.chosen is None:
            return self.rule
        return f"{self.rule} on topic(s) {', '.join(sorted(self.chosen))}"


def rule_request(
    session: Session,
    campaign: Campaign,
    merge: MergeSpec,
    documents: Iterable[JudgedDocument],
    *,
    topics: Collection[str] | None,
    reason: str,
) -> RuleRequest:
    """Check a rule's request against the campaign's judged `documents` (ServiceError: an
    unknown rule, too long a reason, a chosen topic with no judged document (graded or
    answered 'cannot judge') nor rule-made label, an unknown primary assessor)."""
    merge.check()
    reason = reason.strip()
    if len(reason) > limits.COMMENT:
        raise ServiceError(f"the reason is limited to {limits.COMMENT} characters")
    chosen = frozenset(topics) if topics is not None else None
    if chosen is not None:
        unknown = sorted(chosen - {d.qid for d in documents})
        if unknown:  # a topic with only 'cannot judge' answers or a rule's (stale) labels
            unknown = sorted(
                set(unknown)
                - rule_labelled_topics(session, campaign)
                - {qid for qid, _ in ungraded_keys(session, campaign)}
            )
        if unknown:
            raise ServiceError(f"no judged document in topic(s) {', '.join(unknown[:20])}")
    primary_judge = primary_judge_id(session, campaign, merge.primary)
    rule = f"primary:{primary_judge}" if merge.rule == "primary" else merge.rule
    if merge.rule == "majority":
        rule = f"majority/tie={merge.tie}"
    return RuleRequest(merge, rule, primary_judge, chosen, reason)


def apply_rule(
    session: Session,
    campaign: Campaign,
    merge: MergeSpec,
    *,
    topics: Collection[str] | None = None,
    reason: str = "",
) -> AdjudicationSummary:
    """Set the final label of every judged document the rule decides: of every topic, or
    of `topics` only (a batch), with one `reason` recorded for the batch; in the caller's
    transaction (`adjudication_steps.apply_rule_in_steps` decides outside any write
    transaction and writes in short ones: what the web and the CLI use).

    Labels an adjudicator decided are kept; a document the rule cannot decide loses any
    earlier rule-made label (it is back in the queue).
    """
    documents = judged_documents(session, campaign)
    request = rule_request(session, campaign, merge, documents, topics=topics, reason=reason)
    if request.chosen is not None:
        documents = [d for d in documents if d.qid in request.chosen]
    writes = label_writes(
        campaign.id,
        proposals(documents, merge, request.primary_judge),
        final_labels(session, campaign, qids=request.chosen),
        rule=request.rule,
        reason=request.reason,
        now=utcnow(),
    )
    write_labels(session, campaign.id, writes)
    return summarise(session, campaign, request, writes.counts())


def summarise(
    session: Session,
    campaign: Campaign,
    request: RuleRequest,
    counts: RuleCounts,
    *,
    transactions: int = 1,
    redecided: int = 0,
) -> AdjudicationSummary:
    """What a rule did (`LabelWrites.counts`), the documents no judge could grade in its
    topics counted as the queue counts them (kept when an adjudicator decided them, else left
    to adjudicate), with what the final qrels lack now."""
    completeness = qrels_completeness(session, campaign, final=True)
    ungraded = [
        key
        for key in ungraded_keys(session, campaign)
        if request.chosen is None or key[0] in request.chosen
    ]
    labels = final_labels(session, campaign, qids={qid for qid, _ in ungraded}) if ungraded else {}
    decided = sum(key in labels and labels[key].adjudicated for key in ungraded)
    return AdjudicationSummary(
        rule=request.scope(),
        labelled=counts.labelled,
        kept=counts.kept + decided,
        queued=counts.queued + len(ungraded) - decided,
        unlabelled="" if completeness.complete else completeness.describe(),
        transactions=transactions,
        redecided=redecided,
        dropped=counts.dropped,
    )


def disagreement_queue(
    session: Session,
    campaign: Campaign,
    merge: MergeSpec,
    *,
    include_decided: bool = False,
    keys: Collection[Key] | None = None,
    names: dict[int, str] | None = None,
) -> list[QueueItem]:
    """Documents on which the judges disagree under `merge`, and those no judge could grade
    (only 'cannot judge' answers: no grades, no proposal), not yet decided by an adjudicator;
    optionally of some (qid, docno) `keys` only (read for them alone: a page of the queue),
    with the judges' `names` (`judge_names`) when the caller has them.

    proposal is the rule's grade (None when it cannot decide); with include_decided the
    documents an adjudicator already settled are listed too.
    """
    merge.check()
    primary_judge = primary_judge_id(session, campaign, merge.primary)
    docnos = None if keys is None else sorted({docno for _, docno in keys})
    qids = None if keys is None else sorted({qid for qid, _ in keys})
    existing = final_labels(session, campaign, qids=qids, docnos=docnos)
    names = judge_names(session, campaign) if names is None else names
    notes: dict[Key, list] = defaultdict(list)  # comments, cannot-judge reasons, evidence
    for judgement in counted_notes(session, campaign, docnos=docnos, qids=qids):
        notes[(judgement.qid, judgement.docno)].append(judgement)
    wanted = None if keys is None else set(keys)
    documents = judged_documents(session, campaign, docnos=docnos, qids=qids)
    graded = {(d.qid, d.docno) for d in documents}
    ungraded = [
        JudgedDocument(qid, docno, {})
        for qid, docno in sorted(notes)
        if (qid, docno) not in graded and any(j.cannot_judge for j in notes[(qid, docno)])
    ]
    queue = []
    for document in sorted(documents + ungraded, key=lambda d: (d.qid, d.docno)):
        key = (document.qid, document.docno)
        if wanted is not None and key not in wanted:
            continue
        if document.grades and not disagree(document, merge.rule, campaign.relevance_level):
            continue
        label = existing.get(key)
        if label is not None and not label.adjudicated and not document.grades:
            label = None  # a stale rule's label (`qrels.final_labels`): it labels nothing
        decided = label is not None and label.adjudicated
        if decided and not include_decided:
            continue
        proposal = _propose(document, merge, primary_judge) if document.grades else None
        judges = [j for j in notes[key] if j.user_id in names]
        queue.append(
            QueueItem(
                qid=document.qid,
                docno=document.docno,
                grades={names[uid]: grade for uid, grade in document.grades.items()},
                proposal=None if proposal is None else int(proposal),
                final=None if label is None else label.grade,
                comments={names[j.user_id]: j.comment for j in judges if j.comment},
                cannot_judge={names[j.user_id]: j.cannot_judge for j in judges if j.cannot_judge},
                evidence={names[j.user_id]: j.evidence for j in judges if j.evidence},
                adjudicated=decided,
            )
        )
    return queue


def record_decision(
    session: Session,
    campaign: Campaign,
    *,
    qid: str,
    docno: str,
    grade: int,
    reason: str,
    adjudicator: User,
) -> FinalLabel:
    """An adjudicator's final grade for a judged document (graded, or answered only 'cannot
    judge': its label then records no judges' grades), with the reason (required)."""
    reason = reason.strip()
    if not reason:
        raise ServiceError("an adjudication needs a reason")
    if len(reason) > limits.REASON or "\x00" in reason:
        raise ServiceError(f"a reason has at most {limits.REASON} characters and no NUL")
    scale = [g.value for g in campaign.grades]
    if scale and grade not in scale:
        raise ServiceError(f"grade {grade} is not on the scale of {campaign.name!r}: {scale}")
    document = next(iter(judged_documents(session, campaign, qid=qid, docnos=[docno])), None)
    if document is None:
        answers = counted_notes(session, campaign, docnos=[docno], qids=[qid])
        if not any(j.cannot_judge for j in answers):
            raise ServiceError(f"no judgement of document {docno!r} for topic {qid!r}")
        document = JudgedDocument(qid, docno, {})
    label = _final_label(session, campaign, qid, docno)
    if label is None:
        label = FinalLabel(campaign_id=campaign.id, qid=qid, docno=docno)
        session.add(label)
    label.grade = grade
    label.rule = ADJUDICATED
    label.judges = document.provenance()
    label.adjudicator_id = adjudicator.id
    label.reason = reason
    label.created_at = utcnow()
    changes.changed(session, campaign.id)
    session.flush()
    return label
