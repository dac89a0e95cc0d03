"""What the exports write of machine judges (`services.exports` registers them): their qrels,
alone or combined with the human labels (`machine_hybrid.combined_qrels`), their labels with
provenance, and their rows of the judgement log, marked as the machine's. Nothing here
writes an endpoint's key (the judge's settings are read for its name and model only)."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from typing import Any, TextIO

from sqlalchemy.orm import Session

from workbench import trec
from workbench.relevance import is_relevant
from workbench.services import machine_hybrid, machine_judges
from workbench.services.errors import ServiceError
from workbench.services.qrels import UNSAMPLED, IncompleteQrels
from workbench.store.models import Campaign
from workbench.text_safety import csv_safe

LABEL_FIELDS = (
    "judge", "model", "qid", "docno", "grade", "cannot_judge", "reason", "raw_answer",
    "certainty", "prompt_tokens", "completion_tokens", "latency_ms", "cost", "attempts",
    "cached", "flags", "template_hash", "parameters", "created_at",
)  # fmt: skip
Outcome = tuple[int, str, tuple[str, ...]]  # (items written, file name suffix, warnings)


def _judge(session: Session, campaign: Campaign, name: str | None) -> Any:
    if not name:
        names = machine_judges.judge_names(session, campaign)
        raise ServiceError(
            "name the machine judge (judge=machine:<model>)"
            + (f"; the campaign's judges: {', '.join(names)}" if names else "")
        )
    return machine_judges.get_judge(session, campaign, name)


def write_qrels(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Outcome:
    """The judge's qrels (`combination` machine or hybrid) as plain `qid 0 docno rel` lines
    (valid TREC qrels for every reader: the labels' sources are in the returned messages, and
    incomplete qrels say so in the file name and the messages); refused while documents lack
    a label unless allow_incomplete; binary_level L writes 1 for grades >= L."""
    judge = _judge(session, campaign, options.get("judge"))
    combined = machine_hybrid.combined_qrels(
        session, campaign, judge, combination=options.get("combination") or "hybrid",
        assessor=options.get("assessor"),
    )  # fmt: skip
    if not combined.completeness.complete and not options.get("allow_incomplete"):
        raise IncompleteQrels(combined.completeness)
    qrels = combined.qrels
    level = options.get("binary_level")
    if level is not None:
        qrels = {q: {d: g if g == UNSAMPLED else int(is_relevant(g, level))
                     for d, g in docs.items()} for q, docs in qrels.items()}  # fmt: skip
    trec.write_qrels(qrels, dest)
    incomplete = (
        ()
        if combined.completeness.complete
        else (f"incomplete qrels: {combined.completeness.describe()}",)
    )
    warnings = (combined.describe(), *combined.provenance, *incomplete)
    suffix = f".{combined.combination}.{judge.name.removeprefix('machine:')}"
    suffix += "" if combined.completeness.complete else ".incomplete"
    return len(combined.labels), suffix, warnings


def write_labels(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> Outcome:
    """Every machine label (of one judge, or all) with its provenance, as CSV or JSON."""
    name = options.get("judge")
    judge = machine_judges.get_judge(session, campaign, name) if name else None
    labels = machine_judges.machine_judgements(session, campaign, judge)
    records = [
        [getattr(label, f) if f != "created_at" else label.created_at.isoformat()
         for f in LABEL_FIELDS]
        for label in labels
    ]  # fmt: skip
    fmt = options.get("format") or "csv"
    if fmt == "json":
        json.dump([dict(zip(LABEL_FIELDS, r, strict=True)) for r in records], dest, indent=1)
        dest.write("\n")
    else:
        writer = csv.writer(dest, lineterminator="\n")
        writer.writerow(LABEL_FIELDS)
        writer.writerows(
            [csv_safe(" ".join(v) if isinstance(v, tuple) else v) for v in r] for r in records
        )
    return len(records), f".machine-labels.{fmt}", ()


def log_records(session: Session, campaign: Campaign) -> list[tuple[Any, ...]]:
    """The machine's rows of the judgement log (`exports.LOG_FIELDS` order): id 'm<id>'-less
    numbering is avoided by prefixing 'machine-', assessor the judge's name, the reason as
    comment, latency as time spent, no evidence and no undo, source 'machine'."""
    rows = []
    for n, label in enumerate(machine_judges.machine_judgements(session, campaign), 1):
        rows.append((
            f"machine-{n}", label.judge, label.qid, label.docno, label.grade,
            label.cannot_judge, label.reason, label.created_at.isoformat(),
            round(label.latency_ms), None, 1, None, None, "machine",
        ))  # fmt: skip
    return rows
