"""Exports: a pool as a TREC-style document list, qrels (`services.qrels`), the judgement log.

`EXPORTS` declares them: the CLI's `export` subcommands, the web's download routes and forms
and the API's export parameters are generated from it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import limits, trec
from workbench.reports.tables import csv_safe
from workbench.services import adaptive_pools, pools, qrels
from workbench.services.errors import ServiceError
from workbench.services.scope import parse_pools
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
    rows = sorted(rows, key=lambda row: (pools.qid_key(row.qid), row.docno))
    dest.write("".join(f"{qid} {docno}\n" for qid, docno in rows))
    return len(rows)


def export_qrels(
    session: Session, campaign: Campaign, dest: TextIO, **choice: Any
) -> qrels.CampaignQrels:
    """Write `qrels.campaign_qrels(session, campaign, **choice)` (assessor, final,
    binary_level, allow_incomplete, pools) as `qid 0 docno rel` lines, and nothing else: the
    file stays valid TREC qrels for every reader (trec_eval stops at a `#` line). What must be
    said about it (incomplete, adaptive pools) is in the returned qrels' `warnings()`, which
    the export shows beside the file; returns those qrels (`.count` lines were written)."""
    result = qrels.campaign_qrels(session, campaign, **choice)
    trec.write_qrels(result.qrels, dest)
    return result


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
        select(
            Judgement.id,
            User.username,
            Judgement.qid,
            Judgement.docno,
            Judgement.grade,
            Judgement.cannot_judge,
            Judgement.comment,
            Judgement.created_at,
            Judgement.time_spent_ms,
            Judgement.position,
            Judgement.user_id,
        )
        .join(User, User.id == Judgement.user_id)
        .where(Judgement.campaign_id == campaign.id)
        .order_by(Judgement.id)
    )
    revisions: dict[tuple[str, str, int], int] = {}
    records = []
    for *values, created_at, time_spent_ms, position, user_id in rows:
        key = (values[2], values[3], user_id)
        revisions[key] = revision = revisions.get(key, 0) + 1
        records.append((*values, created_at.isoformat(), time_spent_ms, position, revision))
    if fmt == "json":
        json.dump(
            [dict(zip(LOG_FIELDS, record, strict=True)) for record in records], dest, indent=1
        )
        dest.write("\n")
    else:
        dest.write(adaptive_pools.export_header(session, campaign))
        writer = csv.writer(dest, lineterminator="\n")
        writer.writerow(LOG_FIELDS)
        writer.writerows([csv_safe(value) for value in record] for record in records)
    return len(records)


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class ExportOption:
    """An option of an export: the web's query parameter `name` and the CLI's `--name` (with
    dashes). kind: "int" (minimum..INT32_MAX, None when not given), "flag" (true on the web for
    1, true or yes), "text" (None when empty) or "choice" (one of `choices`, the first the
    default)."""

    name: str
    kind: Literal["int", "flag", "text", "choice"]
    help: str
    choices: tuple[str, ...] = ()
    minimum: int = -limits.INT32_MAX


@dataclass(frozen=True)
class Written:
    """What an export wrote: `count` items (pooled documents, qrels lines, ...), the file name
    it suggests, and warnings for the user (e.g. incomplete qrels)."""

    count: int
    filename: str
    warnings: tuple[str, ...] = ()


Writer = Callable[[Session, Campaign, TextIO, Mapping[str, Any]], Written]
"""(session, campaign, destination, the export's option values by name) -> Written."""


@dataclass(frozen=True)
class Export:
    """One export: `title` heads its web form (admin/_export.html, or admin/_export_NAME.html
    where one exists), `help` is the CLI command's help, `counted` names what Written.count
    counts, `write` writes it (refusing before writing anything)."""

    name: str
    title: str
    help: str
    counted: str
    write: Writer
    options: tuple[ExportOption, ...] = ()


def file_slug(text: str) -> str:
    """`text` as a file name part: letters, digits, '-', '_' and '.' kept, others '_'."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "campaign"


def _pool_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    pool = pools.get_pool(session, campaign, options["pool"])
    count = export_pool(session, pool, dest)
    return Written(count, f"{file_slug(campaign.name)}.pool{pool.number}.txt")


def _qrels_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    assessor, level = options["assessor"], options["binary_level"]
    choice = {**options, "pools": parse_pools(options.get("pools"))}
    result = export_qrels(session, campaign, dest, **choice)
    suffix = f".{file_slug(assessor)}" if assessor else (".final" if options["final"] else "")
    suffix += f".binary{level}" if level is not None else ".graded"
    suffix += "" if result.completeness.complete else ".incomplete"
    filename = f"{file_slug(campaign.name)}{suffix}.qrels"
    return Written(result.count, filename, result.warnings())


def _log_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    fmt = options["format"]
    count = export_judgement_log(session, campaign, dest, fmt=fmt)
    return Written(count, f"{file_slug(campaign.name)}.judgements.{fmt}")


EXPORTS: dict[str, Export] = {
    export.name: export
    for export in (
        Export(
            "pool",
            "Pool",
            "The pool as `qid docno` lines per topic.",
            "pooled document(s)",
            _pool_export,
            (
                ExportOption(
                    "pool",
                    "int",
                    "The pool's number in the campaign (default: the latest).",
                    minimum=1,
                ),
            ),
        ),
        Export(
            "qrels",
            "Qrels",
            "Qrels from the judgements made so far; refused while documents lack a label "
            "unless --allow-incomplete.",
            "qrels line(s)",
            _qrels_export,
            (
                ExportOption("assessor", "text", "One assessor's current judgements."),
                ExportOption("final", "flag", "The adjudicated final labels."),
                ExportOption("binary_level", "int", "Write 1 for grades >= L, else 0."),
                ExportOption(
                    "allow_incomplete",
                    "flag",
                    "Export even though pooled or judged documents lack a label (the file "
                    "name and the warnings say so; the file stays plain qrels).",
                ),
                ExportOption(
                    "pools",
                    "text",
                    "The pools whose documents must be labelled, e.g. 1,2 (default: the "
                    "pools with assignments; archived pools never).",
                ),
            ),
        ),
        Export(
            "log",
            "Judgement log",
            "Every judgement event (append-only log) with its time and revision.",
            "judgement(s)",
            _log_export,
            (ExportOption("format", "choice", "csv or a JSON list.", choices=("csv", "json")),),
        ),
    )
}
"""The one list of exports: adding an export is one entry here (the CLI's `workbench export
NAME`, the campaign page's download form, /admin/.../download/NAME and the API follow)."""
