"""A merge rule applied in steps: decided in a read transaction, written in short ones.

At TREC size (669,409 judged documents) deciding a rule takes about 40 s of CPU; in one write
transaction that held SQLite's write lock (and on PostgreSQL the labels' row locks) the whole
time, so every assessor's judgement waited. Here the rule reads the judged documents, the
labels and what decides which judgements count in one read transaction (a snapshot), decides
every document outside any write transaction, and writes the labels in batches of whole
topics (about BATCH_DOCUMENTS documents each), one short write transaction per batch
(`Store.batch_connection`: it pauses while judgements wait for the lock).

Contract (our own; docs/methods.md): each batch's write transaction first re-reads the
judgement log's mark of each of its topics (its newest event's id and its number of events)
and what decides which judgements count (withdrawn assignments, gold documents left out). A
topic whose judgements changed since it was decided (a judgement, revision or undo recorded
meanwhile), or whose counting changed, is decided again from a new read transaction and the
write tried again; after RETRIES such rounds (judging on the topic never pauses) the write
transaction decides it itself. The writes are computed against the labels as the write
transaction reads them, and the statements themselves never update or delete a label an
adjudicator decided nor insert over an existing one: a decision made meanwhile is kept.
Each batch so writes what the one-transaction rule (`adjudication.apply_rule`) would write
for its topics at its commit; with nothing written meanwhile the labels equal that rule's.
Topics first judged after the rule's read are not labelled (as by a rule applied then).
Every batch that writes counts as a change of the campaign (`changes.changed`), even one
that writes nothing new.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.services.adjudication import (
    AdjudicationSummary,
    LabelWrites,
    MergeSpec,
    Proposal,
    RuleCounts,
    RuleRequest,
    final_labels,
    judged_documents,
    label_writes,
    proposals,
    rule_labelled_topics,
    rule_request,
    summarise,
    write_labels,
)
from workbench.services.campaigns import get_campaign
from workbench.services.current_judgements import left_out_gold, withdrawn_topics
from workbench.store import Store
from workbench.store.models import Campaign, Judgement, utcnow

BATCH_DOCUMENTS = 2_000
"""Judged documents per write transaction, in whole topics (a larger topic is one batch: at
full size, about 2,700 documents; benchmarks/scale/README.md)."""
RETRIES = 3
"""How often a batch whose topics changed since they were decided has them decided again in
a read transaction before its write transaction decides them itself (under the lock: the
last resort when judging on them never pauses)."""


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
    """What the rule decided outside write transactions: each topic's proposals, and the
    judgement-log mark and what counted when it read them."""

    request: RuleRequest
    counting: dict[str, _Counting]
    marks: dict[str, tuple[int, int]]
    decided: dict[str, list[Proposal]]

    def stale(self, session: Session, campaign: Campaign, qids: list[str]) -> list[str]:
        """The topics of `qids` whose judgements or counting changed since decided."""
        counting, marks = _counting(session, campaign), _marks(session, campaign.id, qids)
        return [
            qid
            for qid in qids
            if self.counting[qid] != counting or marks.get(qid) != self.marks.get(qid)
        ]

    def decide(self, session: Session, campaign: Campaign, qids: list[str]) -> None:
        """Decide the topics `qids` again from what `session` reads now (marks first)."""
        counting, marks = _counting(session, campaign), _marks(session, campaign.id, qids)
        for qid in qids:
            documents = judged_documents(session, campaign, qid=qid)
            self.decided[qid] = proposals(documents, self.request.merge, self.request.primary_judge)
            self.counting[qid] = counting
            self.marks[qid] = marks.get(qid, (0, 0))


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
        for qid in rule_labelled_topics(session, campaign):  # labels to remove, no document
            if request.chosen is None or qid in request.chosen:
                by_topic.setdefault(qid, [])
        snapshot = _Snapshot(request, dict.fromkeys(by_topic, counting), marks, dict(by_topic))
        campaign_id = campaign.id
    del documents, chosen
    counts, transactions = RuleCounts(), 0
    redecided: set[str] = set()
    for batch in _batches(snapshot.decided):
        writes = _write_batch(store, campaign_id, snapshot, batch, redecided)
        transactions += 1
        counts += writes.counts()
    with store.read_session() as session:
        campaign = get_campaign(session, campaign_id)
        return summarise(
            session,
            campaign,
            snapshot.request,
            counts,
            transactions=transactions,
            redecided=len(redecided),
        )


def _write_batch(
    store: Store, campaign_id: int, snapshot: _Snapshot, batch: list[str], redecided: set[str]
) -> LabelWrites:
    """Write the batch's labels in one write transaction that first re-checks its topics; a
    stale topic is decided again in a read transaction and the write tried again (after
    RETRIES, decided in the write transaction itself). Adds the stale topics to `redecided`."""
    attempt = 0
    while True:
        with (
            _no_collection(),
            store.batch_connection() as connection,
            Session(bind=connection) as session,
        ):
            campaign = session.get_one(Campaign, campaign_id)
            stale = snapshot.stale(session, campaign, batch)
            redecided.update(stale)
            if not stale or attempt == RETRIES:
                snapshot.decide(session, campaign, stale)  # the last resort: under the lock
                writes = _writes(session, campaign, snapshot, batch)
                write_labels(connection, campaign_id, writes)  # counted last, at once
                return writes
        with store.read_session() as session:
            snapshot.decide(session, get_campaign(session, campaign_id), stale)
        attempt += 1


@contextmanager
def _no_collection() -> Iterator[None]:
    """Python's cyclic garbage collector off while a batch holds the write lock: a full
    collection over the rule's 669,409 decided documents took 0.7 s of CPU inside a batch
    of 45 ms at full size (benchmarks/scale/README.md); it runs after the batch instead."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _writes(
    session: Session, campaign: Campaign, snapshot: _Snapshot, batch: list[str]
) -> LabelWrites:
    """The writes of the batch's topics against their labels as they are now."""
    request = snapshot.request
    return label_writes(
        campaign.id,
        [proposal for qid in batch for proposal in snapshot.decided[qid]],
        final_labels(session, campaign, qids=batch),
        rule=request.rule,
        reason=request.reason,
        now=utcnow(),
    )
