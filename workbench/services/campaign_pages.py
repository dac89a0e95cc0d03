"""What the organiser's campaign pages show: the campaign's data and pools, and its
assignments, read in one session as frozen dataclasses (the views render them after the
session closed)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services import assignments, pool_statistics, pools
from workbench.services import users as user_service
from workbench.services.campaigns import CampaignInfo, campaign_info, count_in, get_campaign
from workbench.services.pools import PoolInfo, pool_info
from workbench.services.scope import default_assignment_pool
from workbench.store.models import Campaign, Pool, QrelsSet, Run, Topic


@dataclass(frozen=True)
class RunRow:
    id: int
    tag: str
    group: str
    contributes: bool
    line_count: int
    archived_at: dt.datetime | None


@dataclass(frozen=True)
class TopicRow:
    id: int
    qid: str
    title: str
    archived_at: dt.datetime | None


@dataclass(frozen=True)
class PoolRow:
    pool: PoolInfo
    parameters: str  # as people read them (`pools.describe_parameters`)


@dataclass(frozen=True)
class CampaignPage:
    """The campaign page: counts, runs and topics, the pools, the pool shown in full (with
    `pool_statistics.contribution_statistics`); the figures that take a pass over the pool
    entries or documents (the number of documents, each pool's size, the shown pool's sizes
    per topic and documents without text) or grow with the judgements (qrels status,
    assessors with grades) are `judging_figures.campaign_figures`."""

    campaign: CampaignInfo
    counts: dict[str, int]
    runs: tuple[RunRow, ...]
    topics: tuple[TopicRow, ...]
    pool_rows: tuple[PoolRow, ...]
    pool: PoolInfo | None
    stats: dict[str, Any] | None
    # the shown pool's contributions when computed on this load, for `keep_statistics`
    unkept: pool_statistics.Contributions | None = None


def chosen_pool(session: Session, campaign: Campaign, number: int | None) -> Pool | None:
    """The campaign's pool numbered `number` (NotFound if none such), else its latest."""
    if number is None:
        return pools.latest_pool(session, campaign)
    return pools.get_pool(session, campaign, number)


def campaign_page(session: Session, campaign_id: int, pool_number: int | None) -> CampaignPage:
    """The campaign page with pool `pool_number` (default the latest) shown in full;
    NotFound for a campaign or pool there is not."""
    c = get_campaign(session, campaign_id)
    pool = chosen_pool(session, c, pool_number)
    contributions, kept = (
        pool_statistics.current_contributions(session, pool) if pool else (None, True)
    )
    runs = session.scalars(select(Run).where(Run.campaign_id == c.id).order_by(Run.tag))
    topics = session.scalars(select(Topic).where(Topic.campaign_id == c.id).order_by(Topic.id))
    return CampaignPage(
        campaign=campaign_info(c),
        counts={
            "topics": count_in(session, Topic, c.id),
            "runs": count_in(session, Run, c.id),
            "qrels sets": count_in(session, QrelsSet, c.id),
            "pools": count_in(session, Pool, c.id),
        },
        runs=tuple(
            RunRow(r.id, r.tag, r.group, r.contributes, r.line_count, r.archived_at) for r in runs
        ),
        topics=tuple(TopicRow(t.id, t.qid, t.title, t.archived_at) for t in topics),
        pool_rows=tuple(
            PoolRow(pool_info(p), pools.describe_parameters(p))
            for p in pools.list_pools(session, c, archived=None)
        ),
        pool=pool_info(pool) if pool is not None else None,
        stats=(
            pool_statistics.contribution_statistics(pool, contributions)
            if pool and contributions
            else None
        ),
        unkept=None if kept else contributions,
    )


def keep_statistics(session: Session, page: CampaignPage) -> None:
    """Keep the pool statistics `page` computed (a write session), so that the next load
    reads them (`services.pool_statistics`)."""
    if page.unkept is not None:
        pool_statistics.remember(session, page.unkept)


def qrels_status(session: Session, campaign: Campaign) -> str:
    """What the qrels download would be, said beside its form: complete, or incomplete and
    why (such a download is named ...incomplete.qrels; the file itself stays plain qrels)."""
    from workbench.services.errors import ServiceError
    from workbench.services.qrels import qrels_completeness
    from workbench.services.scope import pool_scope

    try:
        completeness = qrels_completeness(session, campaign)
    except ServiceError as refused:
        return f"The qrels cannot be written yet: {refused}."
    scope = pool_scope(session, campaign).describe()
    if completeness.complete:
        return f"The qrels label every pooled or judged document of {scope}: complete."
    return (
        f"The qrels are incomplete: {completeness.describe()}, within {scope}. A download "
        "with 'export even if documents lack a label' is named ...incomplete.qrels."
    )


@dataclass(frozen=True)
class AssignmentRow:
    id: int
    pool_id: int
    qid: str
    user_id: int
    order: str


@dataclass(frozen=True)
class AssignmentsPage:
    """The assignments page: the pool to assign from (`pool`, one of `pools`) with its
    documents to judge per topic, the active users, and the active assignments with the names
    of their assessors (their progress is `judging_figures.assignment_figures`)."""

    campaign: CampaignInfo
    pool: PoolInfo | None
    pools: tuple[PoolInfo, ...]
    sizes: dict[str, int]
    users: tuple[user_service.Account, ...]  # the active ones
    rows: tuple[AssignmentRow, ...]
    names: dict[int, str]

    @property
    def numbers(self) -> dict[int, int]:
        """Pool id -> its number in the campaign."""
        return {p.id: p.number for p in self.pools}


def assignments_page(
    session: Session, campaign_id: int, pool_number: int | None
) -> AssignmentsPage:
    """The assignments page of pool `pool_number` (default `scope.default_assignment_pool`:
    the newest pool with assignments, else the newest pool); NotFound for a campaign or pool
    there is not."""
    c = get_campaign(session, campaign_id)
    pool = (
        default_assignment_pool(session, c)
        if pool_number is None
        else pools.get_pool(session, c, pool_number)
    )
    rows = assignments.list_assignments(session, c.id)
    users = user_service.list_users(session)
    return AssignmentsPage(
        campaign=campaign_info(c),
        pool=pool_info(pool) if pool is not None else None,
        pools=tuple(pool_info(p) for p in pools.list_pools(session, c)),
        sizes=assignments.topic_sizes(session, pool) if pool is not None else {},
        users=tuple(user_service.Account.of(u) for u in users if u.active),
        rows=tuple(AssignmentRow(a.id, a.pool_id, a.qid, a.user_id, a.order) for a in rows),
        names={u.id: u.username for u in users},
    )
