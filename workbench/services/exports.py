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
from workbench.services import (
    adaptive_provenance,
    machine_exports,
    pools,
    preferences,
    qrels,
    run_metadata,
)
from workbench.services.errors import ServiceError
from workbench.services.scope import parse_pools
from workbench.store.models import (
    Campaign,
    Judgement,
    Pool,
    PoolEntry,
    PreferenceJudgement,
    User,
)
from workbench.text_safety import csv_safe

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
    "evidence",
    "undoes",
    "source",  # "human", or "machine" for a machine judge's label (services.machine_exports)
)
PREFERENCE_LOG_FIELDS = (
    "id",
    "assessor",
    "qid",
    "first",
    "second",
    "shown_left",
    "outcome",
    "preferred",
    "comment",
    "created_at",
    "time_spent_ms",
    "position",
    "revision",
    "undoes",
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
    """Write every judgement event of the campaign, oldest first, as CSV or a JSON list, then
    the machine judges' labels (source "machine", `machine_exports.log_records`).

    revision numbers an assessor's judgements of one document: 1, 2, ... evidence lists the
    marked passages (CSV: `start-end` ranges joined by spaces; JSON: [start, end] pairs) as
    character offsets in the document's text; undoes names the event an undo took back (a
    row with neither grade nor reason takes a first judgement back). Returns the row count.
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
            Judgement.evidence,
            Judgement.undoes_id,
        )
        .join(User, User.id == Judgement.user_id)
        .where(Judgement.campaign_id == campaign.id)
        .order_by(Judgement.id)
    )
    revisions: dict[tuple[str, str, int], int] = {}
    records = []
    for *values, created_at, time_spent_ms, position, user_id, evidence, undoes in rows:
        key = (values[2], values[3], user_id)
        revisions[key] = revision = revisions.get(key, 0) + 1
        spans = evidence or []
        if fmt == "csv":
            spans = " ".join(f"{start}-{end}" for start, end in spans)
        records.append(
            (*values, created_at.isoformat(), time_spent_ms, position, revision, spans, undoes,
             "human")
        )  # fmt: skip
    records += machine_exports.log_records(session, campaign)
    _write_log(dest, fmt, LOG_FIELDS, records, adaptive_provenance.export_header(session, campaign))
    return len(records)


def _write_log(
    dest: TextIO, fmt: str, names: tuple[str, ...], records: list[tuple], header: str = ""
) -> None:
    """Records as a JSON list of objects, or as CSV after `header` (`#` lines)."""
    if fmt == "json":
        json.dump([dict(zip(names, record, strict=True)) for record in records], dest, indent=1)
        dest.write("\n")
    else:
        dest.write(header)
        writer = csv.writer(dest, lineterminator="\n")
        writer.writerow(names)
        writer.writerows([csv_safe(value) for value in record] for record in records)


def export_preference_log(
    session: Session, campaign: Campaign, dest: TextIO, *, fmt: str = "csv"
) -> int:
    """Write every pairwise preference event, oldest first, as CSV or a JSON list: the pair
    (first < second), the docno shown on the left, the outcome (first, second, equal; empty
    for a preference taken back) and the preferred docno, the revision of the assessor's
    answers for that pair and the event an undo took back. Returns the row count."""
    if fmt not in ("csv", "json"):
        raise ServiceError(f"unknown log format {fmt!r}; expected csv or json")
    rows = session.execute(
        select(PreferenceJudgement, User.username)
        .join(User, User.id == PreferenceJudgement.user_id)
        .where(PreferenceJudgement.campaign_id == campaign.id)
        .order_by(PreferenceJudgement.id)
    )
    revisions: dict[tuple[str, str, str, int], int] = {}
    records = []
    for event, username in rows:
        key = (event.qid, event.first, event.second, event.user_id)
        revisions[key] = revisions.get(key, 0) + 1
        preferred = {"first": event.first, "second": event.second}.get(event.outcome or "", "")
        records.append(
            (
                event.id,
                username,
                event.qid,
                event.first,
                event.second,
                event.shown_left,
                event.outcome or "",
                preferred,
                event.comment,
                event.created_at.isoformat(),
                event.time_spent_ms,
                event.position,
                revisions[key],
                event.undoes_id,
            )
        )
    _write_log(dest, fmt, PREFERENCE_LOG_FIELDS, records)
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


def _run_metadata_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    tag = options["run"]
    text = run_metadata.export_run_metadata(session, campaign, tag)
    dest.write(text)
    if tag:
        warnings = () if text else (f"run {tag!r} has no ir_metadata",)
        name = f"{file_slug(campaign.name)}.{file_slug(tag)}.ir_metadata.txt"
        return Written(1 if text else 0, name, warnings)
    count = len(run_metadata.campaign_run_metadata(session, campaign))
    return Written(count, f"{file_slug(campaign.name)}.run-metadata.json")


def _machine_export(write: Any, extension: str) -> Writer:
    """An Export writer over a `services.machine_exports` writer."""

    def export(
        session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
    ) -> Written:
        count, suffix, warnings = write(session, campaign, dest, options)
        return Written(count, f"{file_slug(campaign.name)}{file_slug(suffix)}{extension}", warnings)

    return export


def _preference_log_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    fmt = options["format"]
    count = export_preference_log(session, campaign, dest, fmt=fmt)
    return Written(count, f"{file_slug(campaign.name)}.preferences.{fmt}")


def _prefs_export(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Written:
    assessor = options["assessor"]
    text = preferences.prefs_text(session, campaign, assessor=assessor)
    dest.write(text)
    suffix = f".{file_slug(assessor)}" if assessor else ""
    return Written(text.count("\n") // 2, f"{file_slug(campaign.name)}{suffix}.prefs")


_LOG_FORMAT = ExportOption("format", "choice", "csv or a JSON list.", choices=("csv", "json"))

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
            "Every judgement event (append-only log) with its time, revision and evidence "
            "passages.",
            "judgement(s)",
            _log_export,
            (_LOG_FORMAT,),
        ),
        Export(
            "preferences",
            "Preference log",
            "Every pairwise preference event (append-only log) with its time and revision.",
            "preference(s)",
            _preference_log_export,
            (_LOG_FORMAT,),
        ),
        Export(
            "prefs",
            "Preferences for trec_eval",
            "The pairwise preferences as a trec_eval prefs file (-R prefs): by majority over "
            "the assessors, or one assessor's.",
            "preference(s)",
            _prefs_export,
            (ExportOption("assessor", "text", "One assessor's current preferences."),),
        ),
        Export(
            "machine-qrels",
            "Machine or hybrid qrels",
            "A machine judge's qrels, alone or filling the documents without a human label "
            "(the download's message names the sources).",
            "qrels line(s)",
            _machine_export(machine_exports.write_qrels, ".qrels"),
            (
                ExportOption("judge", "text", "The machine judge (machine:<model>)."),
                ExportOption(
                    "combination",
                    "choice",
                    "hybrid: human labels where there are, the "
                    "machine's elsewhere; machine: the machine's alone.",
                    choices=("hybrid", "machine"),
                ),
                ExportOption(
                    "assessor",
                    "text",
                    "Human labels of one assessor (default: the "
                    "final labels, or the single judges' labels).",
                ),
                ExportOption("binary_level", "int", "Write 1 for grades >= L, else 0."),
                ExportOption(
                    "allow_incomplete",
                    "flag",
                    "Export even though pooled documents "
                    "lack a label (said in the file name and the message).",
                ),
            ),
        ),
        Export(
            "machine-labels",
            "Machine labels with provenance",
            "Every machine label with its provenance: model, template hash, raw answer, "
            "reason, tokens, latency, cost, certainty, flags.",
            "label(s)",
            _machine_export(machine_exports.write_labels, ""),
            (
                ExportOption("judge", "text", "One machine judge (default: all)."),
                ExportOption("format", "choice", "csv or a JSON list.", choices=("csv", "json")),
            ),
        ),
        Export(
            "run-metadata",
            "Run metadata (ir_metadata)",
            "The runs' ir_metadata (PRIMAD) annotations: JSON for every run, or with --run TAG "
            "that run's # ir_metadata block as its run file opened with it.",
            "run(s) with metadata",
            _run_metadata_export,
            (ExportOption("run", "text", "One run's tag: its block as comment lines."),),
        ),
    )
}
"""The one list of exports: adding an export is one entry here (the CLI's `workbench export
NAME`, the campaign page's download form, /admin/.../download/NAME and the API follow)."""
