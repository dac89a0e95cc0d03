"""Final labels and qrels: the one home of which label each judged document carries.

Labels come from one assessor's current grades, the adjudicated FinalLabel rows, or, where no
final label exists yet, the grades of documents that have exactly one judge. Documents pooled
but not sampled by a stratified pool (or not revealed by an adaptive one) and not labelled get
-1 (`UNSAMPLED`, infAP's convention); unjudged pooled documents are absent. `campaign_qrels`
is what both the qrels export and the evaluation reports use, so a report scores exactly the
exported file.

Which documents should carry a label is defined by a scope of pools (`services.scope`: by
default the pools with assignments, never archived ones): a pool nobody was asked to judge
does not make the qrels incomplete, and its unsampled documents are not written as -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from workbench.relevance import is_relevant
from workbench.services import adaptive_provenance
from workbench.services.assignments import documents_to_judge
from workbench.services.current_judgements import (
    CurrentGrades,
    counted_grades,
    graded_keys,
    is_current,
    left_out_gold,
    plain_rows,
    ungraded_keys,
)
from workbench.services.errors import NotFound, ServiceError
from workbench.services.pools import qid_key
from workbench.services.scope import PoolScope, pool_scope
from workbench.store.models import (
    Assignment,
    Campaign,
    FinalLabel,
    GoldDocument,
    Judgement,
    PoolEntry,
    User,
)

Key = tuple[str, str]  # (qid, docno)
QrelsDict = dict[str, dict[str, int]]
UNSAMPLED = -1  # pooled but not sampled (infAP/xinfAP qrels convention)


@dataclass(frozen=True)
class Completeness:
    """Which documents a set of qrels should label, and those that lack a label.

    Final (or default) qrels should label every document sampled into a pool in scope for a
    topic someone was assigned there (every topic of a pool nobody was assigned) and every
    graded document; one assessor's qrels every document of that assessor's active
    assignments in scope (as their judging page shows them) and every document they graded.
    """

    labels: str  # what the qrels hold: "final labels", "labels", "alice's grades"
    expected: int  # documents that should carry a label
    missing: tuple[tuple[str, str], ...]  # (qid, docno) without one, in topic order
    unjudgeable: tuple[tuple[str, str], ...] = ()
    """Of the `missing`, those whose every counted judgement is 'cannot judge' (final or
    default labels): no rule can label them; an adjudicator can (the adjudication queue)."""

    @property
    def complete(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        """'21 of the 35 pooled or judged documents lack a final label (e.g. topic 1 ...)',
        and of them the ones only 'cannot judge' answers, with what resolves them."""
        qid, docno = self.missing[0]
        text = (
            f"{len(self.missing)} of the {self.expected} pooled or judged documents lack "
            f"{self.labels} (e.g. topic {qid} document {docno})"
        )
        if not self.unjudgeable:
            return text
        qid, docno = self.unjudgeable[0]
        return (
            f"{text}; {len(self.unjudgeable)} of them "
            f"{'has' if len(self.unjudgeable) == 1 else 'have'} only 'cannot judge' answers (e.g. "
            f"topic {qid} document {docno}): grade them on the adjudication page, assign "
            "another judge to the topic, or have its judge revise the answer"
        )


class IncompleteQrels(ServiceError):
    """Qrels asked for without allow_incomplete while documents lack a label."""

    def __init__(self, completeness: Completeness) -> None:
        super().__init__(
            f"{completeness.describe()}: refusing to export them as if complete. Finish "
            "judging and adjudication, or ask for incomplete qrels explicitly (on the web: "
            "'export even if documents lack a label' in the qrels download, 'incomplete qrels: "
            "evaluate anyway' on the evaluation page; --allow-incomplete on the command line)"
        )
        self.completeness = completeness


@dataclass(frozen=True)
class CampaignQrels:
    """Qrels of a campaign (topics in order, docnos sorted), how complete they are within the
    `scope` of pools, and how adaptive pools chose what was judged (`provenance`, one
    sentence per adaptive pool): what an export says beside the file, never inside it."""

    qrels: QrelsDict
    completeness: Completeness
    scope: PoolScope
    provenance: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return sum(len(docs) for docs in self.qrels.values())

    def warnings(self) -> tuple[str, ...]:
        """What the user must be told about the file: that it is incomplete, and how
        adaptive pools chose the judged documents."""
        incomplete = () if self.completeness.complete else (
            f"INCOMPLETE qrels: {self.completeness.describe()}; those documents are absent "
            f"(unjudged); scope: {self.scope.describe()}",
        )  # fmt: skip
        return incomplete + self.provenance

    def notes(self) -> tuple[str, ...]:
        """What a report over these qrels must say (nothing when complete)."""
        if self.completeness.complete:
            return ()
        return (
            f"INCOMPLETE qrels, evaluated as asked: {self.completeness.describe()}; they "
            "count as unjudged (not relevant).",
        )


def campaign_qrels(
    session: Session,
    campaign: Campaign,
    *,
    assessor: str | None = None,
    final: bool = False,
    binary_level: int | None = None,
    allow_incomplete: bool = False,
    pools: Sequence[int] | None = None,
    grades: CurrentGrades | None = None,
) -> CampaignQrels:
    """The campaign's qrels: one assessor's current grades (assessor=), the adjudicated final
    labels (final=True), or by default the final labels if any exist, else the grades when
    every judged document has exactly one judge (otherwise a ServiceError asks to adjudicate
    or pick an assessor). 'Cannot judge' rows are not labels. binary_level L gives 1 for
    grades >= L and 0 below. Where documents of the pools numbered `pools` (default: the
    scope's, `scope.pool_scope`) lack a label it raises IncompleteQrels unless
    allow_incomplete. `grades`: the campaign's `CurrentGrades`, when the caller has them
    (read in SQL when None; the same qrels).
    """
    scope = pool_scope(session, campaign, pools)
    labels, completeness = qrels_labels(
        session, campaign, assessor=assessor, final=final, scope=scope, grades=grades
    )
    if not completeness.complete and not allow_incomplete:
        raise IncompleteQrels(completeness)
    return _as_qrels(session, campaign, scope, labels, completeness, binary_level)


def assessors_qrels(
    session: Session,
    campaign: Campaign,
    assessors: Sequence[str],
    *,
    pools: Sequence[int] | None,
    grades: CurrentGrades | None = None,
) -> dict[str, CampaignQrels]:
    """`campaign_qrels(assessor=name, allow_incomplete=True, pools=pools)` of every name, in
    one pass (the report's ranking stability needs every assessor's): the judgements,
    assignments, unsampled entries and adaptive provenance are read once for all of them.
    The caller decides what an incomplete one means (`CampaignQrels.completeness`).
    `grades`: the campaign's `CurrentGrades`, when the caller has them (read when None)."""
    scope = pool_scope(session, campaign, pools)
    each = _assessors_labels(session, campaign, assessors, scope, grades)
    unsampled = _unsampled(session, scope)
    provenance = adaptive_provenance.unjudged_notes(session, campaign, scope.ids)
    return {
        name: _as_qrels(session, campaign, scope, labels, completeness, None, unsampled,
                        provenance)
        for name, (labels, completeness) in each.items()
    }  # fmt: skip


def _as_qrels(
    session: Session,
    campaign: Campaign,
    scope: PoolScope,
    labels: dict[Key, int],
    completeness: Completeness,
    binary_level: int | None,
    unsampled: set[Key] | None = None,
    provenance: tuple[str, ...] | None = None,
) -> CampaignQrels:
    """The qrels of `labels`: binarised at `binary_level` (None: graded), the `unsampled`
    entries of the scope's pools as -1 (read when None), topics in order and docnos sorted,
    with the scope's adaptive `provenance` (read when None)."""
    if binary_level is not None:
        labels = {key: int(is_relevant(grade, binary_level)) for key, grade in labels.items()}
    for key in _unsampled(session, scope) if unsampled is None else unsampled:
        labels.setdefault(key, UNSAMPLED)
    ordered: QrelsDict = {}
    for qid, docno in sorted(labels, key=lambda key: (qid_key(key[0]), key[1])):
        ordered.setdefault(qid, {})[docno] = labels[(qid, docno)]
    if provenance is None:
        provenance = adaptive_provenance.unjudged_notes(session, campaign, scope.ids)
    return CampaignQrels(ordered, completeness, scope, provenance)


def qrels_labels(
    session: Session,
    campaign: Campaign,
    *,
    assessor: str | None = None,
    final: bool = False,
    scope: PoolScope | None = None,
    grades: CurrentGrades | None = None,
) -> tuple[dict[tuple[str, str], int], Completeness]:
    """The labels `export_qrels` writes (before -1 and binarising) and their completeness
    within `scope` (default: `scope.pool_scope`'s); `grades` as `campaign_qrels`."""
    scope = scope if scope is not None else pool_scope(session, campaign)
    if assessor is not None and final:
        raise ServiceError("choose either an assessor or the final labels, not both")
    if assessor is not None:
        return _assessors_labels(session, campaign, [assessor], scope, grades)[assessor]
    graded = graded_keys(session, campaign, grades)
    if final or has_final_labels(session, campaign):
        labels, what = final_labels(session, campaign, graded), "a final label"
    else:
        labels, what = _single_judge_labels(session, campaign), "a label"
    sampled = _sampled(session, scope)
    labels.update(_pooled_gold(session, campaign, sampled))
    expected = sampled | graded | set(labels)
    completeness = _completeness(what, expected, labels)
    if completeness.complete:
        return labels, completeness
    unjudgeable = ungraded_keys(session, campaign, graded)
    ordered = tuple(key for key in completeness.missing if key in unjudgeable)
    return labels, replace(completeness, unjudgeable=ordered)


def _completeness(what: str, expected: set[Key], labels: dict[Key, int]) -> Completeness:
    missing = sorted(expected - set(labels), key=lambda key: (qid_key(key[0]), key[1]))
    return Completeness(what, len(expected), tuple(missing))


def _assessors_labels(
    session: Session,
    campaign: Campaign,
    assessors: Sequence[str],
    scope: PoolScope,
    grades: CurrentGrades | None = None,
) -> dict[str, tuple[dict[Key, int], Completeness]]:
    """`qrels_labels(assessor=name)` of every name, read in one pass: each assessor's current
    grades (gold documents left out unless counted), and as expected the documents of their
    active assignments in scope and every document they graded. NotFound for an unknown
    name."""
    users = {
        u.username: u.id
        for u in session.scalars(select(User).where(User.username.in_(set(assessors))))
    }
    for name in assessors:
        if name not in users:
            raise NotFound(f"no assessor {name!r}")
    gold = left_out_gold(session, campaign.id)
    graded = _graded_by(session, campaign, list(users.values()), grades)
    assigned = _assigned(session, scope, list(users.values()))
    result = {}
    for name in assessors:
        labels = {key: g for key, g in graded.get(users[name], {}).items() if key not in gold}
        expected = (assigned.get(users[name], set()) - gold) | set(labels)
        result[name] = (labels, _completeness(f"a grade by {name}", expected, labels))
    return result


def qrels_completeness(
    session: Session, campaign: Campaign, *, assessor: str | None = None, final: bool = False
) -> Completeness:
    """Whether the qrels `export_qrels` would write label every document they should (within
    the default scope of pools)."""
    return qrels_labels(session, campaign, assessor=assessor, final=final)[1]


def _graded_by(
    session: Session,
    campaign: Campaign,
    user_ids: Sequence[int],
    grades: CurrentGrades | None = None,
) -> dict[int, dict[Key, int]]:
    """User id -> (qid, docno) -> current grade, for these users ('cannot judge' is none);
    one user's keys alone are grouped when there is one (one assessor's export); from
    `grades` when given (the campaign's `CurrentGrades`)."""
    if grades is not None:
        return {u: grades.by_user[u] for u in user_ids if u in grades.by_user}
    one = user_ids[0] if len(user_ids) == 1 else None
    rows = plain_rows(
        session,
        select(Judgement.user_id, Judgement.qid, Judgement.docno, Judgement.grade).where(
            is_current(campaign.id, user_id=one),
            Judgement.user_id.in_(user_ids),
            Judgement.grade.is_not(None),
        ),
    )
    graded: dict[int, dict[Key, int]] = {}
    for user_id, qid, docno, grade in rows:
        graded.setdefault(user_id, {})[(qid, docno)] = grade
    return graded


def has_final_labels(session: Session, campaign: Campaign) -> bool:
    """Whether the campaign has any final (adjudicated or rule-made) label."""
    query = select(FinalLabel.id).where(FinalLabel.campaign_id == campaign.id).limit(1)
    return session.scalar(query) is not None


def final_labels(
    session: Session, campaign: Campaign, graded: set[Key] | None = None
) -> dict[Key, int]:
    """(qid, docno) -> final grade: every adjudicator's label, and a rule's label while its
    document has a grade that counts (`graded`: `graded_keys`, read when None). A rule labels
    only graded documents; once their grades are revised to 'cannot judge' or withdrawn, its
    label is stale (the rule applied again removes it) and labels nothing."""
    rows = plain_rows(
        session,
        select(FinalLabel.qid, FinalLabel.docno, FinalLabel.grade, FinalLabel.adjudicator_id).where(
            FinalLabel.campaign_id == campaign.id
        ),
    )
    graded = graded_keys(session, campaign) if graded is None else graded
    return {
        (qid, docno): grade
        for qid, docno, grade, adjudicator in rows
        if adjudicator is not None or (qid, docno) in graded
    }


def _single_judge_labels(session: Session, campaign: Campaign) -> dict:
    labels: dict[tuple[str, str], int] = {}
    judges: dict[tuple[str, str], int] = {}
    for judgement in counted_grades(session, campaign):
        key = (judgement.qid, judgement.docno)
        judges[key] = judges.get(key, 0) + 1
        labels[key] = judgement.grade
    shared = [key for key, count in judges.items() if count > 1]
    if shared:
        qid, docno = shared[0]
        raise ServiceError(
            f"{len(shared)} document(s) have more than one judge (e.g. topic {qid} document "
            f"{docno}) and there are no final labels: adjudicate first, or export one "
            "assessor's judgements"
        )
    return labels


def _pooled_gold(
    session: Session, campaign: Campaign, sampled: set[tuple[str, str]]
) -> dict[Key, int]:
    """The gold grade of each pooled gold document whose judgements do not count (its
    assessors' judgements stay out of the qrels, unless the campaign lets them in)."""
    left_out = left_out_gold(session, campaign.id) & sampled
    if not left_out:
        return {}
    rows = session.execute(
        select(GoldDocument.qid, GoldDocument.docno, GoldDocument.grade).where(
            GoldDocument.campaign_id == campaign.id
        )
    )
    return {(q, d): grade for q, d, grade in rows if (q, d) in left_out}


def _sampled(session: Session, scope: PoolScope) -> set[tuple[str, str]]:
    """(qid, docno) sampled into some pool in scope (every entry of a non-stratified pool,
    the revealed ones of an adaptive pool) for a topic someone was asked to judge in that
    pool, or any topic of a pool nobody was assigned: the documents to judge."""
    assigned = {
        (pool_id, qid)
        for pool_id, qid in session.execute(
            select(Assignment.pool_id, Assignment.qid).where(
                Assignment.pool_id.in_(scope.ids), Assignment.active.is_(True)
            )
        )
    }
    with_assignments = {pool_id for pool_id, _ in assigned}
    rows = plain_rows(
        session,
        select(PoolEntry.pool_id, PoolEntry.qid, PoolEntry.docno).where(
            PoolEntry.pool_id.in_(scope.ids), PoolEntry.sampled.is_(True)
        ),
    )
    return {
        (qid, docno)
        for pool_id, qid, docno in rows
        if pool_id not in with_assignments or (pool_id, qid) in assigned
    }


def _assigned(session: Session, scope: PoolScope, user_ids: Sequence[int]) -> dict[int, set[Key]]:
    """User id -> (qid, docno) of the user's active assignments in scope, as their judging
    pages show them (`assignments.documents_to_judge`: another judge of an adaptive pool's
    topic has its seeded sample)."""
    theirs = list(
        session.scalars(
            select(Assignment).where(
                Assignment.user_id.in_(user_ids),
                Assignment.active.is_(True),
                Assignment.pool_id.in_(scope.ids),
            )
        )
    )
    found = documents_to_judge(session, theirs)
    assigned: dict[int, set[Key]] = {}
    for a in theirs:
        assigned.setdefault(a.user_id, set()).update((a.qid, docno) for docno in found[a.id].shown)
    return assigned


def _unsampled(session: Session, scope: PoolScope) -> set[tuple[str, str]]:
    """(qid, docno) pooled but unsampled in some pool in scope and sampled in none."""
    sampled = aliased(PoolEntry)
    sampled_elsewhere = (
        select(sampled.id)
        .where(
            sampled.pool_id.in_(scope.ids),
            sampled.qid == PoolEntry.qid,
            sampled.docno == PoolEntry.docno,
            sampled.sampled.is_(True),
        )
        .exists()
    )
    rows = session.execute(
        select(PoolEntry.qid, PoolEntry.docno).where(
            PoolEntry.pool_id.in_(scope.ids), PoolEntry.sampled.is_(False), ~sampled_elsewhere
        )
    )
    return {(qid, docno) for qid, docno in rows}
