"""Topic choices of a campaign and lists in messages, shared by imports, pools and
assignments."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services.errors import ServiceError
from workbench.store.models import Campaign, Topic

MAX_LISTED = 20


def listed(items: Sequence[str], limit: int = MAX_LISTED) -> str:
    """'a, b, c' with at most `limit` items shown and the rest counted."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def campaign_qids(session: Session, campaign: Campaign) -> set[str]:
    return set(session.scalars(select(Topic.qid).where(Topic.campaign_id == campaign.id)))


def chosen_topics(topics: Collection[str], known: set[str], campaign: Campaign) -> set[str]:
    """The chosen topics, each a topic of the campaign (else an error listing the others)."""
    unknown = [qid for qid in topics if qid not in known]
    if unknown:
        raise ServiceError(
            f"campaign {campaign.name!r} has no topic(s) {listed(unknown)} (chosen topics)"
        )
    if not topics:
        raise ServiceError("no topics chosen")
    return set(topics)
