"""Imports of topics into a campaign (TREC <top>, TSV or JSONL files)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import limits, trec
from workbench.services.import_steps import (
    ImportReport,
    PathLike,
)
from workbench.store.models import (
    Campaign,
    Topic,
)


def import_topics(
    session: Session, campaign: Campaign, path: PathLike, *, format: str | None = None
) -> ImportReport:
    """Add the topics of a file; topics already in the campaign get the file's statements."""
    notes: list[str] = []
    statements = trec.read_topics(path, format=format, limits=limits.STORE_LIMITS, notes=notes)
    if not statements:  # as an empty run is refused
        raise trec.TrecFormatError(str(path), 1, "", "topics (TREC <top>, TSV or JSONL)")
    existing = {
        topic.qid: topic
        for topic in session.scalars(select(Topic).where(Topic.campaign_id == campaign.id))
    }
    report = ImportReport("topics", files=1, warnings=notes)
    for statement in statements:
        fields = {
            "title": statement.title,
            "description": statement.description,
            "narrative": statement.narrative,
            "extra": dict(statement.extra),
        }
        topic = existing.get(statement.qid)
        if topic is None:
            session.add(Topic(campaign_id=campaign.id, qid=statement.qid, **fields))
            report.added += 1
        else:
            for name, value in fields.items():
                setattr(topic, name, value)
            report.updated += 1
    session.flush()
    return report
