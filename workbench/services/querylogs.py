"""Query logs of a campaign: the stored logs, click preferences, their agreement with the
assessors, runs evaluated on them, and click deviation as the pool's judging priority.

The signals are `workbench.clicks` (pure), the file format and anonymisation
`workbench.querylog` (pure); this module only joins them to the store. A log is imported
(anonymised, its impressions matched to topics) by `services.querylog_import`; impressions of
queries matching no topic are kept (they count in E(p), the expected click rate per rank over
all queries) but give no preferences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import clicks, querylog, stats
from workbench.metrics.prefs import TrecEvalFlags, evaluate_prefs
from workbench.services import changes, evaluation, evaluation_inputs, pools
from workbench.services.errors import ServiceError, found
from workbench.store.models import (
    Assignment,
    Campaign,
    PoolEntry,
    QueryLog,
    QueryLogImpression,
    Topic,
)
from workbench.trec.prefs import PrefsLine

IMPORTING, READY = "importing", "ready"
DEFAULT_MIN_SUPPORT = 2
UNSHOWN_PRIORITY = -2.0  # below any click deviation (which lies in [-1, 1])
PREFS_MEASURE = "prefs_simp"


# ------------------------------------------------------------------------------- stored logs


@dataclass(frozen=True)
class QueryLogSummary:
    """A stored log: its anonymisation report and how its impressions map to topics."""

    name: str
    source: str
    created_at: str
    min_users: int
    impressions: int
    mapped_impressions: int
    topics: int  # campaign topics with at least one impression
    unmapped_queries: int
    anonymisation: querylog.AnonymisationReport
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k != "anonymisation"}
        out["anonymisation"] = self.anonymisation.to_dict()
        out["warnings"] = list(self.warnings)
        return out


def summarise(session: Session, log: QueryLog) -> QueryLogSummary:
    counts = session.execute(
        select(
            func.count(),
            func.count(QueryLogImpression.qid),
            func.count(func.distinct(QueryLogImpression.qid)),
        ).where(QueryLogImpression.query_log_id == log.id)
    ).one()
    unmapped = session.scalar(
        select(func.count(func.distinct(QueryLogImpression.query_key))).where(
            QueryLogImpression.query_log_id == log.id, QueryLogImpression.qid.is_(None)
        )
    )
    return QueryLogSummary(
        log.name,
        log.source,
        log.created_at.isoformat(timespec="seconds"),
        log.min_users,
        counts[0],
        counts[1],
        counts[2],
        unmapped or 0,
        querylog.AnonymisationReport.from_dict(log.report["anonymisation"]),
    )


def get_query_log(session: Session, campaign: Campaign, name: str) -> QueryLog:
    log = session.scalar(
        select(QueryLog).where(
            QueryLog.campaign_id == campaign.id, QueryLog.name == name, QueryLog.state == READY
        )
    )
    return found(log, f"campaign {campaign.name!r} has no query log named {name!r}")


def list_query_logs(session: Session, campaign: Campaign) -> list[QueryLogSummary]:
    logs = session.scalars(
        select(QueryLog)
        .where(QueryLog.campaign_id == campaign.id, QueryLog.state == READY)
        .order_by(QueryLog.name)
    )
    return [summarise(session, log) for log in logs]


def query_log_summary(session: Session, campaign: Campaign, name: str) -> QueryLogSummary:
    return summarise(session, get_query_log(session, campaign, name))


# ------------------------------------------------------------------------------- signals


def load_impressions(session: Session, log: QueryLog) -> list[clicks.Impression]:
    """Every stored impression; ``query`` is the topic id, or ``?`` + the query key for an
    impression matching no topic."""
    rows = session.execute(
        select(
            QueryLogImpression.session,
            QueryLogImpression.user_hash,
            QueryLogImpression.qid,
            QueryLogImpression.query_key,
            QueryLogImpression.time,
            QueryLogImpression.results,
            QueryLogImpression.clicks,
        )
        .where(QueryLogImpression.query_log_id == log.id)
        .order_by(QueryLogImpression.session, QueryLogImpression.time, QueryLogImpression.id)
    ).all()
    return [
        clicks.Impression(
            row.qid if row.qid is not None else "?" + row.query_key,
            tuple(row.results),
            tuple(clicks.Click(d, t) for d, t in row.clicks),
            session=row.session,
            user=row.user_hash,
            time=row.time,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class PreferenceOptions:
    """How preferences are drawn: Joachims' ``strategy``, the minimum support m, and an
    optional click-deviation threshold (only clicks with CD(d, p) > threshold count)."""

    strategy: str = clicks.SKIP_ABOVE
    min_support: int = DEFAULT_MIN_SUPPORT
    deviation_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.strategy not in clicks.STRATEGIES:
            raise ServiceError(
                f"unknown preference strategy {self.strategy!r}; expected one of "
                + ", ".join(clicks.STRATEGIES)
            )
        if self.min_support < 1:
            raise ServiceError(f"min support must be at least 1, got {self.min_support}")

    def describe(self) -> str:
        text = f"{self.strategy}, m = {self.min_support}"
        if self.deviation_threshold is not None:
            text += f", clicks with CD > {self.deviation_threshold:g}"
        return text


@dataclass(frozen=True)
class ClickComparison:
    """What is set against what: the click preferences of the query log named `log`, drawn
    with `options`, against the assessors' qrels `qrels` (a spec of
    `evaluation_inputs.resolve_qrels`: 'final', an assessor, a qrels set or, where allowed, a
    file), which may lack labels when `allow_incomplete` (the results then say so)."""

    log: str
    qrels: str = "final"
    options: PreferenceOptions = PreferenceOptions()
    allow_incomplete: bool = False


def click_preferences(
    session: Session, log: QueryLog, options: PreferenceOptions
) -> list[clicks.Preference]:
    """The log's aggregated preferences on topics (see `clicks.aggregate_preferences`)."""
    impressions = load_impressions(session, log)
    if options.deviation_threshold is not None:
        keep = clicks.deviating_clicks(
            clicks.click_deviation(impressions), options.deviation_threshold
        )
        impressions = clicks.filter_clicks(impressions, keep)
    mapped = [imp for imp in impressions if not imp.query.startswith("?")]
    return clicks.aggregate_preferences(mapped, options.strategy, min_support=options.min_support)


def export_prefs(
    session: Session, campaign: Campaign, name: str, options: PreferenceOptions
) -> str:
    """trec_eval's prefs file (``-R prefs``) of the log's click preferences."""
    log = get_query_log(session, campaign, name)
    return clicks.prefs_text(clicks.prefs_lines(click_preferences(session, log, options)))


# ------------------------------------------------------------------------------ agreement


@dataclass(frozen=True)
class TopicAgreement:
    qid: str
    consistent: int
    comparable: int
    share: float


@dataclass(frozen=True)
class ClickAgreement:
    """Click preferences against the assessors' grades: per topic and pooled, with a
    topic-bootstrap interval of the pooled share."""

    log: str
    qrels: str
    options: str
    preferences: int  # click preferences on topics
    topics: tuple[TopicAgreement, ...]
    consistent: int
    comparable: int
    share: float
    interval: tuple[float, float]
    confidence: float
    qrels_notes: tuple[str, ...] = ()  # e.g. that the qrels are incomplete, used as asked

    def to_dict(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["topics"] = [vars(t) for t in self.topics]
        out["interval"] = list(self.interval)
        out["qrels_notes"] = list(self.qrels_notes)
        return out


def click_agreement(
    session: Session,
    campaign: Campaign,
    compared: ClickComparison,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    allow_files: bool = False,
) -> ClickAgreement:
    """Share of click preferences a > b, both documents judged with different grades, where
    grade(a) > grade(b) (`clicks.preference_agreement`)."""
    name, options = compared.log, compared.options
    log = get_query_log(session, campaign, name)
    prefs = click_preferences(session, log, options)
    named = evaluation_inputs.resolve_qrels(
        session,
        campaign,
        compared.qrels,
        allow_files=allow_files,
        allow_incomplete=compared.allow_incomplete,
    )
    per_topic = clicks.preference_agreement(prefs, named.qrels)
    pooled = clicks.pooled_agreement(per_topic)
    interval = clicks.agreement_interval(
        per_topic, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return ClickAgreement(
        name,
        named.label,
        options.describe(),
        len(prefs),
        tuple(TopicAgreement(q, a.consistent, a.comparable, a.share) for q, a in per_topic.items()),
        pooled.consistent,
        pooled.comparable,
        pooled.share,
        interval,
        confidence,
        named.notes,
    )


# ----------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class RunUnderBoth:
    tag: str
    clicks: float  # the prefs measure over the topics with click preferences
    assessors: float  # the measure under the assessors' qrels
    click_topics: int


@dataclass(frozen=True)
class ClickEvaluation:
    """Runs scored on preferences (trec_eval ``-R prefs``: the click preferences of a query
    log, or the assessors' pairwise preferences) and on the assessors' qrels, the system
    ranking under each and Kendall's tau (and tau_AP, assessors as reference). `source`
    names the preferences' origin in the tables ('clicks', 'preferences')."""

    log: str
    qrels: str
    options: str
    prefs_measure: str
    measure: str
    preference_topics: int
    campaign_topics: int
    runs: tuple[RunUnderBoth, ...]
    clicks_order: tuple[str, ...]
    assessors_order: tuple[str, ...]
    kendall_tau: float
    tau_ap: float
    source: str = "clicks"
    qrels_notes: tuple[str, ...] = ()  # e.g. that the qrels are incomplete, used as asked

    def to_dict(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["runs"] = [vars(r) for r in self.runs]
        out["qrels_notes"] = list(self.qrels_notes)
        return out


def click_evaluation(
    session: Session,
    campaign: Campaign,
    compared: ClickComparison,
    *,
    measure: str = "map",
    prefs_measures: Sequence[str] = ("all_prefs",),
    allow_files: bool = False,
) -> ClickEvaluation:
    """Every run evaluated with trec_eval's preference measures on the click preferences
    (``all_prefs``; ``prefs_simp`` ranks them) and with ``measure`` on the assessors' qrels
    (`evaluate_preference_lines`)."""
    name, options = compared.log, compared.options
    log = get_query_log(session, campaign, name)
    lines = clicks.prefs_lines(click_preferences(session, log, options))
    if not lines:
        raise ServiceError(
            f"query log {name!r} gives no click preferences ({options.describe()}) on the "
            "campaign's topics"
        )
    return evaluate_preference_lines(
        session,
        campaign,
        lines,
        PreferenceSource(name, options.describe(), "clicks"),
        compared.qrels,
        measure=measure,
        prefs_measures=prefs_measures,
        allow_files=allow_files,
        allow_incomplete=compared.allow_incomplete,
    )


@dataclass(frozen=True)
class PreferenceSource:
    """Where preferences come from: `name` (a query log, or the campaign), how they were
    drawn (`options`), and the word the tables use for them (`source`)."""

    name: str
    options: str
    source: str


def evaluate_preference_lines(
    session: Session,
    campaign: Campaign,
    lines: Sequence[PrefsLine],
    origin: PreferenceSource,
    qrels: str,
    *,
    measure: str = "map",
    prefs_measures: Sequence[str] = ("all_prefs",),
    allow_files: bool = False,
    allow_incomplete: bool = False,
) -> ClickEvaluation:
    """Every run scored with trec_eval's preference measures on `lines` (``prefs_simp``
    ranks them) and with ``measure`` on the `qrels` spec. A run is scored on the topics that
    have preferences (trec_eval's rule: topics of both the prefs and the run);
    ``preference_topics`` of ``campaign_topics`` says how many. `qrels` may lack labels when
    `allow_incomplete` (the result then says so)."""
    runs = evaluation_inputs.load_runs(session, campaign)
    table = evaluation.evaluate_campaign(
        session,
        campaign,
        qrels,
        [measure],
        scope=evaluation_inputs.Scope(runs, allow_incomplete=allow_incomplete),
        allow_files=allow_files,
    )
    canonical = table.measures[0]
    assessor_scores = {r.tag: r.summary[canonical] for r in table.runs}
    click_scores: dict[str, float] = {}
    rows = []
    for run in runs:
        out = evaluate_prefs(
            list(lines), run.trec_run, list(prefs_measures), TrecEvalFlags(per_topic=True)
        )
        summary = {m: v for m, q, v in out if q == "all"}
        topics = {q for _, q, _ in out if q != "all"}
        click_scores[run.tag] = float(summary.get(PREFS_MEASURE, math.nan))
        rows.append(
            RunUnderBoth(run.tag, click_scores[run.tag], assessor_scores[run.tag], len(topics))
        )
    enough = len(runs) >= 2
    campaign_topics = session.scalar(
        select(func.count()).select_from(Topic).where(Topic.campaign_id == campaign.id)
    )
    clicks_order = stats.system_ranking(click_scores)
    assessors_order = stats.system_ranking(assessor_scores)
    return ClickEvaluation(
        origin.name,
        table.qrels,
        origin.options,
        PREFS_MEASURE,
        canonical,
        len({line.qid for line in lines}),
        campaign_topics or 0,
        tuple(rows),
        tuple(clicks_order),
        tuple(assessors_order),
        stats.kendall_tau(assessor_scores, click_scores) if enough else math.nan,
        stats.tau_ap_ties(assessor_scores, click_scores) if enough else math.nan,
        origin.source,
        tuple(table.qrels_notes),
    )


# -------------------------------------------------------------------------------- pooling


@dataclass(frozen=True)
class PoolPriorities:
    pool: int
    log: str
    entries: int
    shown: int  # pool entries users saw in the log


def prioritise_pool(
    session: Session, campaign: Campaign, pool_number: int, name: str
) -> PoolPriorities:
    """Set the pool entries' priority to their click deviation (`clicks.document_deviation`:
    observed minus expected clicks per impression), so assessors with the 'priority' order
    judge first what users favoured; entries users never saw get -2, below any deviation.
    Refused once the pool has assignments (their order must not change under an assessor).
    The pool (its number in the campaign) records the source of its priorities."""
    pool = pools.get_pool(session, campaign, pool_number)
    if session.scalar(select(Assignment.id).where(Assignment.pool_id == pool.id).limit(1)):
        raise ServiceError(
            f"pool {pool.number} already has assignments: prioritise a pool before assigning it"
        )
    log = get_query_log(session, campaign, name)
    deviation = clicks.document_deviation(load_impressions(session, log))
    entries = session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id)).all()
    shown = 0
    for entry in entries:
        value = deviation.get((entry.qid, entry.docno))
        shown += value is not None
        entry.priority = UNSHOWN_PRIORITY if value is None else value
    pool.params = {**pool.params, "priority": f"click deviation, query log {name}"}
    changes.changed(session, campaign.id)
    session.flush()
    return PoolPriorities(pool.number, name, len(entries), shown)
