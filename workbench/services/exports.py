"""Exports: a pool as a TREC-style document list, qrels (`services.qrels`), the judgement log."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import trec
from workbench.reports.tables import csv_safe
from workbench.services import adaptive_pools, qrels
from workbench.services.errors import ServiceError
from workbench.services.pools import qid_key
from workbench.store.models import Campaign, Judgement, Pool, PoolEntry, User

LOG_FIELDS = (
    "id",
    "assessor",
    "qid",
    "docno",
    "grade",
    "cannot_judge",
    "comment",
    "created_at",
    "time_spent_ms",
    "position",
    "revision",
)


def export_pool(session: Session, pool: Pool, dest: TextIO) -> int:
    """Write `qid docno` lines, topics in order, docnos sorted; stratified pools list only the
    sampled documents (the ones to judge). Returns the number of lines."""
    rows = session.execute(
        select(PoolEntry.qid, PoolEntry.docno).where(
            PoolEntry.pool_id == pool.id, PoolEntry.sampled.is_(True)
        )
    ).all()
    rows = sorted(rows, key=lambda row: (qid_key(row.qid), row.docno))
    dest.write("".join(f"{qid} {docno}\n" for qid, docno in rows))
    return len(rows)


def export_qrels(
    session: Session,
    campaign: Campaign,
    dest: TextIO,
    *,
    assessor: str | None = None,
    final: bool = False,
    binary_level: int | None = None,
    allow_incomplete: bool = False,
) -> int:
    """Write `qrels.campaign_qrels` (same arguments) as `qid 0 docno rel` lines, after `#`
    lines that say so when they are incomplete; returns the number of lines."""
    result = qrels.campaign_qrels(
        session,
        campaign,
        assessor=assessor,
        final=final,
        binary_level=binary_level,
        allow_incomplete=allow_incomplete,
    )
    return write_qrels(result, dest)


def write_qrels(result: qrels.CampaignQrels, dest: TextIO) -> int:
    """Write campaign qrels: their `#` header if incomplete, then `qid 0 docno rel` lines."""
    dest.write(result.header())
    trec.write_qrels(result.qrels, dest)
    return result.count


def export_judgement_log(
    session: Session, campaign: Campaign, dest: TextIO, *, fmt: str = "csv"
) -> int:
    """Write every judgement event of the campaign, oldest first, as CSV or a JSON list.

    revision numbers an assessor's judgements of one document: 1, 2, ... Returns the row count.
    The CSV of a campaign with an adaptive pool opens with `#` lines naming its strategy and
    budget (the JSON form: GET /api/v1/campaigns/<id>/adaptive-provenance).
    """
    if fmt not in ("csv", "json"):
        raise ServiceError(f"unknown log format {fmt!r}; expected csv or json")
    rows = session.execute(
        select(Judgement, User.username)
        .join(User, User.id == Judgement.user_id)
        .where(Judgement.campaign_id == campaign.id)
        .order_by(Judgement.id)
    ).all()
    revisions: dict[tuple[str, str, int], int] = {}
    records = []
    for judgement, username in rows:
        key = (judgement.qid, judgement.docno, judgement.user_id)
        revisions[key] = revisions.get(key, 0) + 1
        records.append(
            {
                "id": judgement.id,
                "assessor": username,
                "qid": judgement.qid,
                "docno": judgement.docno,
                "grade": judgement.grade,
                "cannot_judge": judgement.cannot_judge,
                "comment": judgement.comment,
                "created_at": judgement.created_at.isoformat(),
                "time_spent_ms": judgement.time_spent_ms,
                "position": judgement.position,
                "revision": revisions[key],
            }
        )
    if fmt == "json":
        json.dump(records, dest, indent=1)
        dest.write("\n")
    else:
        dest.write(adaptive_pools.export_header(session, campaign))
        writer = csv.DictWriter(dest, fieldnames=LOG_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_safe(v) for k, v in record.items()} for record in records)
    return len(records)
