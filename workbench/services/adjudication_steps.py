"""A merge rule applied in steps: decided in a read transaction, written in short ones.

At TREC size (669,409 judged documents) deciding a rule takes about 40 s of CPU; in one write
transaction that held SQLite's write lock (and on PostgreSQL the labels' row locks) the whole
time, so every assessor's judgement waited. Here the rule reads the judged documents, the
labels and what decides which judgements count in one read transaction (a snapshot), decides
every document outside any write transaction, and writes the labels in batches of whole
topics (about BATCH_DOCUMENTS documents each), one short write transaction per batch
(`Store.batch_connection`: it pauses while judgements wait for the lock).

Contract (our own; docs/methods.md): each batch's write transaction re-reads, before it
writes, the labels of its topics, the judgement log's mark of each topic (its newest event's
id and its number of events) and what decides which judgements count (withdrawn assignments,
gold documents left out). A topic whose judgements changed since the snapshot (a judgement,
revision or undo recorded meanwhile), or every topic of the batch when what counts changed,
is decided again inside that transaction from what it reads there; the writes are computed
against the labels as they are then, so that a label an adjudicator decided meanwhile is
kept and a label written meanwhile is updated, never written twice. Each batch is thus the
one-transaction rule (`adjudication.apply_rule`) applied to its topics at its commit; with
nothing written meanwhile the labels equal those of the one-transaction rule. Topics first
judged after the snapshot are not labelled (as by a rule applied at the snapshot). Every
batch counts as a change of the campaign (`changes.changed`), even one that writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.services.adjudication import (
    AdjudicationSummary,
    LabelWrites,
    MergeSpec,
    Proposal,
    RuleRequest,
    final_labels,
    judged_documents,
    label_writes,
    proposals,
    rule_request,
    summarise,
    write_labels,
)
from workbench.services.campaigns import get_campaign
from workbench.services.current_judgements import left_out_gold, withdrawn_topics
from workbench.store import Store
from workbench.store.models import Campaign, Judgement, utcnow

BATCH_DOCUMENTS = 5_000
"""Judged documents per write transaction, in whole topics (a larger topic is one batch):
about 0.1-0.3 s of the write lock at full size (benchmarks/scale/README.md)."""


@dataclass(frozen=True)
class _Counting:
    """What decides which current judgements count (`current_judgements._counted`)."""

    count_withdrawn: bool
    withdrawn: frozenset[tuple[str, int]]
    gold: frozenset[tuple[str, str]]


def _counting(session: Session, campaign: Campaign) -> _Counting:
    return _Counting(
        campaign.count_withdrawn,
        frozenset(withdrawn_topics(session, campaign.id)),
        frozenset(left_out_gold(session, campaign.id)),
    )


def _marks(
    session: Session, campaign_id: int, qids: Collection[str] | None = None
) -> dict[str, tuple[int, int]]:
    """Each topic's judgement-log mark: (newest event id, number of events). The log is
    append-only, so any judgement, revision or undo recorded since changes it."""
    query = select(Judgement.qid, func.max(Judgement.id), func.count()).where(
        Judgement.campaign_id == campaign_id
    )
    if qids is not None:
        query = query.where(Judgement.qid.in_(sorted(qids)))
    rows = session.execute(query.group_by(Judgement.qid))
    return {qid: (int(newest), int(events)) for qid, newest, events in rows}


@dataclass
class _Snapshot:
    """What the read transaction decided: each topic's proposals and its mark then."""

    request: RuleRequest
    counting: _Counting
    marks: dict[str, tuple[int, int]]
    decided: dict[str, list[Proposal]]


def _batches(decided: dict[str, list[Proposal]]) -> Iterator[list[str]]:
    """Topics in qid order, grouped into batches of about BATCH_DOCUMENTS documents."""
    batch: list[str] = []
    size = 0
    for qid in sorted(decided):
        batch.append(qid)
        size += len(decided[qid])
        if size >= BATCH_DOCUMENTS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def apply_rule_in_steps(
    store: Store,
    campaign_id: int | str,
    merge: MergeSpec,
    *,
    topics: Collection[str] | None = None,
    reason: str = "",
) -> AdjudicationSummary:
    """`adjudication.apply_rule` (every topic, or `topics` only, one `reason`), decided in a
    read transaction and written in short write transactions, each re-checking what it
    overwrites (the module's contract)."""
    with store.read_session() as session:
        campaign = get_campaign(session, campaign_id)
        # the marks before the judgements: a judgement recorded between them (each statement
        # sees its own snapshot on PostgreSQL) makes its topic decided again, never missed
        counting, marks = _counting(session, campaign), _marks(session, campaign.id)
        documents = judged_documents(session, campaign)
        request = rule_request(session, campaign, merge, documents, topics=topics, reason=reason)
        by_topic: dict[str, list[Proposal]] = defaultdict(list)
        chosen = [d for d in documents if request.chosen is None or d.qid in request.chosen]
        for proposal in proposals(chosen, merge, request.primary_judge):
            by_topic[proposal.qid].append(proposal)
        snapshot = _Snapshot(request, counting, marks, dict(by_topic))
        campaign_id = campaign.id
    del documents, chosen
    labelled = kept = queued = transactions = redecided = 0
    for batch in _batches(snapshot.decided):
        with store.batch_connection() as connection, Session(bind=connection) as session:
            writes, again = _write_batch(session, campaign_id, snapshot, batch)
            write_labels(connection, campaign_id, writes)  # counted last, at once
        transactions += 1
        redecided += again
        done = writes.counts()
        labelled, kept, queued = labelled + done[0], kept + done[1], queued + done[2]
    with store.read_session() as session:
        campaign = get_campaign(session, campaign_id)
        return summarise(
            session,
            campaign,
            snapshot.request,
            (labelled, kept, queued),
            transactions=transactions,
            redecided=redecided,
        )


def _write_batch(
    session: Session, campaign_id: int, snapshot: _Snapshot, batch: list[str]
) -> tuple[LabelWrites, int]:
    """Inside a batch's write transaction: the writes of its topics, each decided again when
    its judgements (or what counts) changed since the snapshot; and how many were."""
    campaign = session.get_one(Campaign, campaign_id)
    request = snapshot.request
    marks = _marks(session, campaign_id, batch)
    counting_changed = _counting(session, campaign) != snapshot.counting
    decided: list[Proposal] = []
    again = 0
    for qid in batch:
        if counting_changed or marks.get(qid) != snapshot.marks.get(qid):
            again += 1
            documents = judged_documents(session, campaign, qid=qid)
            decided += proposals(documents, request.merge, request.primary_judge)
        else:
            decided += snapshot.decided[qid]
    writes = label_writes(
        campaign_id,
        decided,
        final_labels(session, campaign, qids=batch),
        rule=request.rule,
        reason=request.reason,
        now=utcnow(),
    )
    return writes, again
