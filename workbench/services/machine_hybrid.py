"""Hybrid designs in a campaign: the human sample of a machine-labelled pool, the disagreement
review, and the qrels that combine human and machine labels (`workbench.hybrid`).

- `create_sample_pool`: a new pool holding the source pool's documents, those of the human
  sample marked sampled (with their inclusion probability and, as stratum, the machine's
  grade), the others pooled but not sampled; humans are assigned to it as to any pool. Its
  params record the design (`params["machine_sample"]`).
- `create_review_pool`: a new pool of the documents where the machine and the first human
  (the assessor whose first judgement of the document is the earliest) disagree, to assign
  to other assessors (`params["machine_review"]`).
- `combined_qrels`: the machine's labels alone ("machine"), or the human label where there is
  one and the machine's elsewhere over the campaign's pooled documents ("hybrid": machine
  first with humans on a sample, or humans first with the machine filling the holes), each
  label with its source.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import hybrid, limits
from workbench.services import adaptive_provenance, changes, machine_judges
from workbench.services.archive import refuse_if_archived
from workbench.services.current_judgements import counted_judgements
from workbench.services.errors import ServiceError
from workbench.services.pools import ENTRY_COLUMNS, get_pool, qid_key
from workbench.services.qrels import UNSAMPLED, Completeness, qrels_labels
from workbench.store.models import (
    Campaign,
    Judgement,
    MachineJudge,
    MachineJudgement,
    Pool,
    PoolEntry,
    PoolRun,
    QrelsEntry,
    QrelsSet,
    User,
)
from workbench.store.runs import bulk_insert

Key = tuple[str, str]
COMBINATIONS: dict[str, str] = {
    "hybrid": "the human label where there is one, the machine's elsewhere",
    "machine": "the machine's labels alone",
}


def pooled_keys(session: Session, campaign: Campaign) -> set[Key]:
    """(qid, docno) sampled into some pool of the campaign."""
    return _pool_keys(session, campaign)[0]


def _pool_keys(session: Session, campaign: Campaign) -> tuple[set[Key], set[Key]]:
    """(sampled into some pool, pooled but sampled into none): the documents to judge, and
    those a stratified pool left out or an adaptive pool never revealed (-1 in qrels)."""
    sampled: set[Key] = set()
    unsampled: set[Key] = set()
    rows = session.execute(
        select(PoolEntry.qid, PoolEntry.docno, PoolEntry.sampled)
        .join(Pool, Pool.id == PoolEntry.pool_id)
        .where(Pool.campaign_id == campaign.id)
    )
    for qid, docno, is_sampled in rows:
        (sampled if is_sampled else unsampled).add((qid, docno))
    return sampled, unsampled - sampled


def _certainty(session: Session, judge: MachineJudge) -> dict[Key, float]:
    rows = session.execute(
        select(MachineJudgement.qid, MachineJudgement.docno, MachineJudgement.certainty).where(
            MachineJudgement.judge_id == judge.id, MachineJudgement.certainty.is_not(None)
        )
    )
    return {(qid, docno): float(c) for qid, docno, c in rows if c is not None}


def _flagged(session: Session, judge: MachineJudge) -> set[Key]:
    rows = session.execute(
        select(MachineJudgement.qid, MachineJudgement.docno, MachineJudgement.flags).where(
            MachineJudgement.judge_id == judge.id
        )
    )
    suspicious = {"instructions", "stuffing"}
    return {(qid, docno) for qid, docno, flags in rows if suspicious & set(flags or ())}


NOT_INHERITED = ("adaptive", "routing", "machine_sample", "machine_review")
"""What a hybrid pool does not take from its source pool's params: the adaptive strategy (it
has no adaptive topics), the routing policy and its assessors (it is assigned afresh), and an
earlier hybrid design."""


def _pooling_choices(source: Pool) -> dict[str, Any]:
    """The source pool's pooling choices (depth, runs...), without `NOT_INHERITED`."""
    return {k: v for k, v in (source.params or {}).items() if k not in NOT_INHERITED}


def _new_pool(
    session: Session, campaign: Campaign, source: Pool, name: str, params: dict[str, Any]
) -> Pool:
    number = 1 + max((p.number for p in session.scalars(
        select(Pool).where(Pool.campaign_id == campaign.id))), default=0)  # fmt: skip
    pool = Pool(campaign_id=campaign.id, number=number, name=name.strip(),
                strategy=source.strategy, params=params, seed=source.seed)  # fmt: skip
    session.add(pool)
    session.flush()
    runs = session.execute(select(PoolRun.run_id).where(PoolRun.pool_id == source.id))
    for (run_id,) in runs:
        session.add(PoolRun(pool_id=pool.id, run_id=run_id, build=0))
    return pool


def create_sample_pool(
    session: Session,
    campaign: Campaign,
    judge: MachineJudge,
    *,
    design: str,
    share: float,
    pool_number: int | None = None,
    seed: int = 0,
    include_flagged: bool = True,
    name: str = "",
) -> Pool:
    """Machine first, humans on a sample: a new pool whose sampled documents are the human
    sample of the source pool (default: the latest) drawn by `design` (`hybrid`)."""
    refuse_if_archived(campaign)
    source = get_pool(session, campaign, pool_number)
    entries = list(session.scalars(
        select(PoolEntry).where(PoolEntry.pool_id == source.id, PoolEntry.sampled.is_(True))
    ))  # fmt: skip
    if not entries:
        raise ServiceError(f"pool {source.number} has no documents")
    machine = machine_judges.machine_labels(session, judge)
    keys = [(e.qid, e.docno) for e in entries]
    unlabelled = sum(1 for k in keys if k not in machine)
    if unlabelled == len(keys):
        raise ServiceError(
            f"{judge.name} has not labelled pool {source.number} yet: run it first "
            f"(workbench machine run --judge {judge.name} --pool {source.number})"
        )
    try:
        sample = hybrid.draw_sample(
            keys, machine, design=design, share=share, seed=seed,
            certainty=_certainty(session, judge),
            always=_flagged(session, judge) if include_flagged else (),
            level=campaign.relevance_level, ranks={(e.qid, e.docno): e.best_rank for e in entries},
        )  # fmt: skip
    except hybrid.DesignError as error:
        raise ServiceError(str(error)) from None
    params = {
        **_pooling_choices(source),
        "machine_sample": {
            "source_pool": source.number, "judge": judge.name, "design": design,
            "share": share, "seed": seed, "include_flagged": include_flagged,
            "sampled": sum(s.sampled for s in sample), "unlabelled_by_machine": unlabelled,
        },
    }  # fmt: skip
    pool = _new_pool(session, campaign, source, name or f"human sample ({design})", params)
    by_key = {(e.qid, e.docno): e for e in entries}
    rows = []
    for s in sample:
        e = by_key[s.key]
        rows.append((pool.id, e.qid, 0, e.docno, e.best_rank, e.n_runs, e.priority, s.stratum,
                     s.sampled, s.inclusion_prob))  # fmt: skip
    bulk_insert(session, PoolEntry.__table__, ENTRY_COLUMNS, rows)
    changes.changed(session, campaign.id)
    return pool


def first_human_labels(session: Session, campaign: Campaign) -> dict[Key, tuple[int, str]]:
    """(qid, docno) -> (current grade, username) of its first human judge: the assessor who
    judged the document first (lowest judgement id); left out when that judge's current
    judgement is 'cannot judge' or does not count (a withdrawn assignment)."""
    rows = session.execute(
        select(Judgement.qid, Judgement.docno, Judgement.user_id)
        .where(Judgement.campaign_id == campaign.id)
        .order_by(Judgement.id)
    )
    earliest: dict[Key, int] = {}
    for qid, docno, user_id in rows:
        earliest.setdefault((qid, docno), user_id)
    current = {(j.qid, j.docno, j.user_id): j.grade for j in counted_judgements(session, campaign)}
    names = {uid: name for uid, name in session.execute(select(User.id, User.username))}
    out: dict[Key, tuple[int, str]] = {}
    for key, user_id in earliest.items():
        grade = current.get((*key, user_id))
        if grade is not None:
            out[key] = (grade, names.get(user_id, "?"))
    return out


def create_review_pool(
    session: Session,
    campaign: Campaign,
    judge: MachineJudge,
    *,
    on: str = "relevance",
    name: str = "",
) -> tuple[Pool, int]:
    """Disagreement review: a new pool of the documents where `judge` and the first human
    disagree (`hybrid.disagreements`); (pool, documents)."""
    refuse_if_archived(campaign)
    machine = machine_judges.machine_labels(session, judge)
    first = first_human_labels(session, campaign)
    try:
        keys = hybrid.disagreements(
            {k: g for k, (g, _) in first.items()}, machine,
            level=campaign.relevance_level, on=on,
        )  # fmt: skip
    except hybrid.DesignError as error:
        raise ServiceError(str(error)) from None
    if not keys:
        raise ServiceError(f"{judge.name} and the first human judges agree everywhere ({on})")
    wanted = set(keys)
    entries: dict[Key, PoolEntry] = {}
    source: Pool | None = None
    for pool in session.scalars(
        select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.number)
    ):
        for e in session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id)):
            if (e.qid, e.docno) in wanted and (e.qid, e.docno) not in entries:
                entries[(e.qid, e.docno)] = e
                source = source or pool
    if source is None:
        raise ServiceError("the disagreements are on documents of no pool")
    params = {**_pooling_choices(source), "machine_review": {
        "judge": judge.name, "on": on, "documents": len(keys),
        "first_judges": sorted({first[k][1] for k in keys}),
    }}  # fmt: skip
    pool = _new_pool(session, campaign, source, name or f"review of {judge.name}", params)
    rows = []
    for key in sorted(keys, key=lambda k: (qid_key(k[0]), k[1])):
        found = entries.get(key)
        best, n_runs, priority = (
            (found.best_rank, found.n_runs, found.priority) if found else (0, 0, 0.0)
        )
        rows.append((pool.id, key[0], 0, key[1], best, n_runs, priority, None, True, 1.0))
    bulk_insert(session, PoolEntry.__table__, ENTRY_COLUMNS, rows)
    changes.changed(session, campaign.id)
    return pool, len(keys)


# ---------------------------------------------------------------------------------- qrels


@dataclass(frozen=True)
class CombinedQrels:
    """Machine or hybrid qrels with each label's source and what they lack."""

    combination: str
    judge: str
    labels: dict[Key, int]
    sources: dict[Key, str]
    completeness: Completeness
    human_labels: str  # what the human labels are ("final labels", "labels", "alice's ...")
    created_at: dt.datetime
    unsampled: frozenset[Key] = frozenset()  # pooled, sampled nowhere, unlabelled: -1
    provenance: tuple[str, ...] = ()  # `adaptive_provenance.unjudged_notes`: the export's messages

    def with_unsampled(self) -> dict[Key, int]:
        """The labels and -1 (`qrels.UNSAMPLED`) for the unsampled documents, as the campaign's
        own qrels hold them (infAP's convention)."""
        return {**dict.fromkeys(self.unsampled, UNSAMPLED), **self.labels}

    @property
    def qrels(self) -> dict[str, dict[str, int]]:
        labels = self.with_unsampled()
        out: dict[str, dict[str, int]] = {}
        for qid, docno in sorted(labels, key=lambda k: (qid_key(k[0]), k[1])):
            out.setdefault(qid, {})[docno] = labels[(qid, docno)]
        return out

    def describe(self) -> str:
        """What the qrels hold, in words (the export's message; the file stays plain qrels)."""
        humans = sum(1 for s in self.sources.values() if s == "human")
        machines = len(self.sources) - humans
        said = f"{self.combination} qrels: {machines} label(s) by {self.judge}"
        if self.combination == "hybrid":
            said += (
                f" and {humans} human label(s) ({self.human_labels}), preferred where both exist"
            )
        return said


def combined_qrels(
    session: Session,
    campaign: Campaign,
    judge: MachineJudge,
    *,
    combination: str = "hybrid",
    assessor: str | None = None,
) -> CombinedQrels:
    """The machine's qrels, or the hybrid of the human labels (the campaign's qrels labels:
    final where there are final labels, or one assessor's) and the machine's."""
    if combination not in COMBINATIONS:
        raise ServiceError(
            f"unknown combination {combination!r}; expected {', '.join(COMBINATIONS)}"
        )
    machine = machine_judges.machine_labels(session, judge)
    universe, unsampled = _pool_keys(session, campaign)
    if combination == "machine":
        human: dict[Key, int] = {}
        what = ""
    else:
        human, completeness = qrels_labels(session, campaign, assessor=assessor)
        what = human_label_name(completeness.labels)
    combined = hybrid.hybrid_labels(human, machine, universe, judge.name)
    labelled = "a machine label" if combination == "machine" else "a human or machine label"
    missing = tuple(sorted(combined.missing, key=lambda k: (qid_key(k[0]), k[1])))
    return CombinedQrels(
        combination, judge.name, combined.labels, combined.sources,
        Completeness(labelled, len(universe | set(human)), missing), what,
        dt.datetime.now(dt.UTC).replace(tzinfo=None),
        frozenset(unsampled - set(combined.labels)),
        adaptive_provenance.unjudged_notes(session, campaign),
    )  # fmt: skip


def human_label_name(labels: str) -> str:
    """What `qrels.Completeness.labels` names, as a plural: 'final labels', "alice's grades"."""
    if labels == "a final label":
        return "final labels"
    if labels == "a label":
        return "the single judges' labels"
    return f"{labels.removeprefix('a grade by ')}'s grades"


def save_qrels_set(
    session: Session, campaign: Campaign, combined: CombinedQrels, name: str
) -> QrelsSet:
    """Store combined qrels as a qrels set of the campaign (a snapshot: `workbench evaluate
    --qrels NAME` and every report read it); its source says what it holds (`describe`: the
    judge, and how many labels are the machine's and the humans'), and so does every report
    on it (`evaluation_inputs.resolve_qrels`)."""
    refuse_if_archived(campaign)
    name = name.strip()
    if not name or len(name) > limits.QRELS_SET_NAME:
        raise ServiceError(limits.length_error("qrels set name", name, limits.QRELS_SET_NAME))
    exists = session.scalar(
        select(QrelsSet.id).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == name)
    )
    if exists is not None:
        raise ServiceError(f"campaign {campaign.name!r} already has a qrels set {name!r}")
    source = combined.describe()[: limits.FILE_NAME]
    qrels_set = QrelsSet(campaign_id=campaign.id, name=name, source=source)
    session.add(qrels_set)
    session.flush()
    rows = [(qrels_set.id, qid, docno, "0", grade)
            for (qid, docno), grade in sorted(combined.with_unsampled().items())]  # fmt: skip
    bulk_insert(session, QrelsEntry.__table__, ("qrels_set_id", "qid", "docno", "iteration",
                                                "rel"), rows)  # fmt: skip
    changes.changed(session, campaign.id)
    return qrels_set
