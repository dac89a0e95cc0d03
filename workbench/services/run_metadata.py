"""Runs' ir_metadata (PRIMAD) annotations, as their files gave them: read for the run pages,
the report's run table and the export.

The store keeps each run's block as YAML text (`Run.ir_metadata`); this module is the one
place that turns it into the mapping (`workbench.trec.run_metadata`) and into the one-line
PRIMAD summary a table shows.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services.errors import NotFound
from workbench.store.models import Campaign, Run
from workbench.trec.run_metadata import PRIMAD, metadata_lines, parse_metadata


def parsed(text: str | None) -> dict[str, Any] | None:
    """The mapping of a stored block (None for a run without one)."""
    return None if text is None else parse_metadata(text).data


def campaign_run_metadata(session: Session, campaign: Campaign) -> dict[str, dict[str, Any]]:
    """Run tag -> its ir_metadata mapping, for every run of the campaign that has one."""
    rows = session.execute(
        select(Run.tag, Run.ir_metadata).where(
            Run.campaign_id == campaign.id, Run.ir_metadata.is_not(None)
        )
    )
    return {tag: parse_metadata(text).data for tag, text in rows if text is not None}


def primad_summary(data: dict[str, Any] | None) -> str:
    """One line for a table: each PRIMAD component present, briefly (``method: bm25; actor:
    irgroup; data: TREC Robust04``); empty without metadata."""
    if not data:
        return ""
    parts = []
    for component in PRIMAD:
        if component in data:
            parts.append(f"{component}: {_brief(data[component])}")
    return "; ".join(parts)


def _brief(value: Any, limit: int = 60) -> str:
    """A component's leading names and values, cut at ``limit`` characters."""
    words: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("name", "team", "tag"):
                if key in node and not isinstance(node[key], dict | list):
                    words.append(str(node[key]))
                    return
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)
        elif node is not None:
            words.append(str(node))

    walk(value)
    text = ", ".join(words)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def export_run_metadata(session: Session, campaign: Campaign, tag: str | None) -> str:
    """One run's block as its run file opens with it, or every run's mapping as JSON (tag ->
    mapping, runs without metadata left out and listed under ``"runs without"``)."""
    if tag:
        row = session.execute(
            select(Run.id, Run.ir_metadata).where(Run.campaign_id == campaign.id, Run.tag == tag)
        ).first()
        if row is None:
            raise NotFound(f"no run {tag!r} in campaign {campaign.name!r}")
        return metadata_lines(row.ir_metadata) if row.ir_metadata is not None else ""
    found = campaign_run_metadata(session, campaign)
    tags = session.scalars(select(Run.tag).where(Run.campaign_id == campaign.id))
    document = {"runs": dict(sorted(found.items())), "runs without": sorted(set(tags) - set(found))}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"
