"""The admin pages' figures that grow with the judgements (progress per assignment, topic and
assessor; the qrels' completeness; the assessors with a grade), computed out of the request
as report jobs (`services.jobs`) and kept until what they are computed from changes.

A job's result is keyed by `jobs.fingerprint` (the campaign's change counter, which every
writer of judgements, final labels, pool entries, routing slots and preference judgements
increments, `services.changes`; runs, pools, topics, ...) and, for these figures, by
`depends`: everything else they are read from (assignments and their withdrawals, the pools'
revisions and archival, an adaptive pool's budgets and reveals, gold documents and quality
settings, the campaign's judging mode and options (a pairwise design) and whether withdrawn
judgements count, the relevance level, topic titles, user names). A result whose key is the
store's current one is exactly what a recomputation gives; any other is shown only as what it is
(`Figures.as_of`: the judgement mark it was computed at, with a note that the store has
changed and a recomputation is under way). Judging adds one counter increment per judgement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, cast, func, select
from sqlalchemy.orm import Session

from workbench.services import evaluation_inputs, pool_statistics, pools, progress
from workbench.services.assignments import list_assignments
from workbench.services.campaign_pages import chosen_pool, qrels_status
from workbench.services.campaigns import count_in, get_campaign
from workbench.store.models import (
    AdaptiveTopic,
    Assignment,
    Campaign,
    Document,
    GoldDocument,
    Judgement,
    Pool,
    QualitySettings,
    Topic,
    User,
)


@dataclass(frozen=True)
class JudgementMark:
    """The judgement log as a figure was computed from it: its rows (count) and highest id."""

    count: int
    highest: int


def judgement_mark(session: Session, campaign_id: int) -> JudgementMark:
    count, highest = session.execute(
        select(func.count(Judgement.id), func.max(Judgement.id)).where(
            Judgement.campaign_id == campaign_id
        )
    ).one()
    return JudgementMark(int(count), int(highest or 0))


def depends(session: Session, campaign_id: int) -> list[Any]:
    """What the figures are read from beyond `jobs.fingerprint`'s data, as plain values (one
    query per table; pool entries, routing slots and preference judgements are in the
    fingerprint's change counter, `changes.TRACKED`)."""

    def rows(query: Any) -> list[list[Any]]:
        return [list(row) for row in session.execute(query)]

    pools = select(Pool.id).where(Pool.campaign_id == campaign_id)
    gold_weight = cast(GoldDocument.id, BigInteger)
    return [
        rows(
            select(
                Campaign.judging_mode,
                Campaign.judging_options,
                Campaign.count_withdrawn,
                Campaign.relevance_level,
            ).where(Campaign.id == campaign_id)
        ),
        rows(
            select(
                Assignment.id,
                Assignment.pool_id,
                Assignment.qid,
                Assignment.user_id,
                Assignment.order,
                Assignment.active,
            )
            .where(Assignment.campaign_id == campaign_id)
            .order_by(Assignment.id)
        ),
        rows(
            select(Pool.id, Pool.number, Pool.revision, Pool.archived_at, Pool.params)
            .where(Pool.campaign_id == campaign_id)
            .order_by(Pool.id)
        ),
        [
            [topic_id, budget, stopped, len(choices or [])]
            for topic_id, budget, stopped, choices in session.execute(
                select(
                    AdaptiveTopic.id,
                    AdaptiveTopic.budget,
                    AdaptiveTopic.stopped,
                    AdaptiveTopic.choices,
                )
                .where(AdaptiveTopic.pool_id.in_(pools))
                .order_by(AdaptiveTopic.id)
            )
        ],
        rows(
            select(
                func.count(GoldDocument.id),
                func.max(GoldDocument.id),
                func.sum(gold_weight * GoldDocument.grade),
            ).where(GoldDocument.campaign_id == campaign_id)
        ),
        rows(
            select(QualitySettings.gold_share, QualitySettings.gold_in_qrels).where(
                QualitySettings.campaign_id == campaign_id
            )
        ),
        rows(
            select(Topic.id, Topic.qid, Topic.title, Topic.archived_at)
            .where(Topic.campaign_id == campaign_id)
            .order_by(Topic.id)
        ),
        rows(select(User.id, User.username).order_by(User.id)),
    ]


@dataclass(frozen=True)
class Figures:
    """Figures of one page and the judgement log's mark they were computed at."""

    as_of: JudgementMark


@dataclass(frozen=True)
class ProgressFigures(Figures):
    report: dict[str, Any]  # `progress.campaign_progress`'s


@dataclass(frozen=True)
class AssignmentFigures(Figures):
    done: dict[int, progress.Progress]  # active assignment id -> its progress


@dataclass(frozen=True)
class CampaignFigures(Figures):
    qrels_status: str  # `campaign_pages.qrels_status`
    assessors: tuple[str, ...]  # the users with a current grade, by username
    documents: int  # the campaign's documents
    pool_documents: dict[int, int]  # every pool's documents, by pool id
    pool_id: int | None  # the pool shown in full (None: the campaign has no pool)
    sizes: dict[str, Any] | None  # its `pool_statistics.topic_sizes`
    without_text: tuple[
        str, ...
    ]  # its sampled documents without text (`pools.documents_without_text`)


def progress_figures(
    session: Session, campaign_id: int, pools: list[int] | None
) -> ProgressFigures:
    """The progress page's report over the pools numbered `pools` (default scope)."""
    mark = judgement_mark(session, campaign_id)
    return ProgressFigures(mark, progress.campaign_progress(session, campaign_id, pools))


def assignment_figures(session: Session, campaign_id: int) -> AssignmentFigures:
    """The progress of every active assignment of the campaign (the assignments page's)."""
    mark = judgement_mark(session, campaign_id)
    rows = list_assignments(session, campaign_id)
    return AssignmentFigures(mark, progress.assignment_progress(session, rows))


def campaign_figures(
    session: Session, campaign_id: int, pool_number: int | None
) -> CampaignFigures:
    """The campaign page's qrels status and assessors with a grade, its number of documents,
    each pool's size, and the sizes and documents without text of the pool numbered
    `pool_number` (default the latest)."""
    campaign = get_campaign(session, campaign_id)
    mark = judgement_mark(session, campaign_id)
    graders = evaluation_inputs.assessors(session, campaign)
    pool = chosen_pool(session, campaign, pool_number)
    return CampaignFigures(
        mark,
        qrels_status(session, campaign),
        tuple(u.username for u in graders),
        documents=count_in(session, Document, campaign_id),
        pool_documents={
            p.id: pools.pool_counts(session, p)[0]
            for p in pools.list_pools(session, campaign, archived=None)
        },
        pool_id=pool.id if pool else None,
        sizes=pool_statistics.topic_sizes(session, pool) if pool else None,
        without_text=tuple(pools.documents_without_text(session, pool)) if pool else (),
    )
