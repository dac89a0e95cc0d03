"""The current judgements: the latest row of each (campaign, topic, docno, assessor) key
(`services.judging` is the act of recording one).

The judgement table is an append-only log; this is the one place that derives current values.
"""

from __future__ import annotations

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from workbench.store.models import Assignment, Campaign, Judgement


def current_judgements_query(
    campaign_id: int, *, qid: str | None = None, user_id: int | None = None
) -> Select[Judgement]:
    """Select the latest Judgement per (qid, docno, user) of a campaign, optionally filtered."""
    latest = select(func.max(Judgement.id)).where(Judgement.campaign_id == campaign_id)
    if qid is not None:
        latest = latest.where(Judgement.qid == qid)
    if user_id is not None:
        latest = latest.where(Judgement.user_id == user_id)
    latest = latest.group_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    return (
        select(Judgement)
        .where(Judgement.id.in_(latest.scalar_subquery()))
        .order_by(Judgement.qid, Judgement.docno, Judgement.user_id)
    )


def current_judgements(
    session: Session, campaign_id: int, *, qid: str | None = None, user_id: int | None = None
) -> list[Judgement]:
    """The current judgement of every key (including 'cannot judge' rows, whose grade is None)."""
    query = current_judgements_query(campaign_id, qid=qid, user_id=user_id)
    return list(session.scalars(query))


def withdrawn_topics(session: Session, campaign_id: int) -> set[tuple[str, int]]:
    """(qid, user id) pairs whose every assignment in the campaign is withdrawn: the
    judgements of such a pair are those of a withdrawn assignment."""
    rows = session.execute(
        select(Assignment.qid, Assignment.user_id, Assignment.active).where(
            Assignment.campaign_id == campaign_id
        )
    )
    withdrawn: set[tuple[str, int]] = set()
    active: set[tuple[str, int]] = set()
    for qid, user_id, is_active in rows:
        (active if is_active else withdrawn).add((qid, user_id))
    return withdrawn - active


def counted_judgements(session: Session, campaign: Campaign) -> list[Judgement]:
    """The current judgements that count in agreement, adjudication and qrels: all of them,
    or (campaign.count_withdrawn False) all but those of withdrawn assignments."""
    rows = current_judgements(session, campaign.id)
    if campaign.count_withdrawn:
        return rows
    withdrawn = withdrawn_topics(session, campaign.id)
    return [j for j in rows if (j.qid, j.user_id) not in withdrawn]


def withdrawn_note(session: Session, campaign: Campaign) -> str:
    """What the agreement and adjudication pages say of judgements made under withdrawn
    assignments ('' when there are none): how many, and whether they count here."""
    withdrawn = withdrawn_topics(session, campaign.id)
    made = [j for j in current_judgements(session, campaign.id) if (j.qid, j.user_id) in withdrawn]
    if not made:
        return ""
    topics = sorted({j.qid for j in made})
    counted = "count here" if campaign.count_withdrawn else "do not count here"
    noun = "judgement was" if len(made) == 1 else "judgements were"
    return (
        f"{len(made)} {noun} made under withdrawn assignments (topic(s) {', '.join(topics)}); "
        f"as the campaign is set, they {counted}."
    )

