"""Pools: build one from a campaign's runs with a recorded strategy, extend it, describe it.

A pool records its strategy, parameters (including the run order and each run's checksum),
seed and creation time, so `build_pool` with the same runs, parameters and seed gives the same
pool. The per-topic work is `workbench.pooling` (pure); this module loads the runs and stores
the result as PoolEntry rows.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import func, insert, or_, select
from sqlalchemy.orm import Session

from workbench import adaptive, limits, pooling, routing
from workbench.bulk import collector_paused
from workbench.services import changes
from workbench.services.errors import NotFound, ServiceError, found
from workbench.services.topics import campaign_qids, chosen_topics, listed
from workbench.store.models import (
    Campaign,
    Document,
    Pool,
    PoolEntry,
    PoolRun,
    Run,
    RunTopic,
    Topic,
    utcnow,
)
from workbench.store.runs import bulk_insert, decode_docnos_head, decode_scores

if TYPE_CHECKING:
    from workbench.services.pool_statistics import ContributionSum

MAX_GROWTH_DEPTH = 1000


def build_pool(
    session: Session,
    campaign: Campaign,
    *,
    strategy: str = "depth",
    runs: list[str] | None = None,
    seed: int | None = None,
    name: str = "",
    topics: Sequence[str] | None = None,
    **params: Any,
) -> Pool:
    """Pool the chosen runs (default: every contributing run, by tag) topic by topic.

    params: the strategy's parameters (`pooling.STRATEGIES`: depth; take: budget, fair;
    fusion: budget, fusion; stratified: strata); None stands for the default.
    topics: pool only these campaign topics (recorded; extensions keep to them).
    The pool's statistics are kept in the same transaction (`pool_statistics.keep`).
    """
    built = new_pool(
        session, campaign, strategy=strategy, runs=runs, seed=seed, name=name, topics=topics,
        summing=True, **params,
    )  # fmt: skip
    _keep_statistics(session, built.pool, built.summed)
    return built.pool


class NewPool(NamedTuple):
    """A pool just built (`new_pool`) and the contributions summed as it was pooled (None:
    not summed)."""

    pool: Pool
    summed: ContributionSum | None


def new_pool(
    session: Session,
    campaign: Campaign,
    *,
    strategy: str,
    runs: list[str] | None,
    seed: int | None,
    name: str,
    topics: Sequence[str] | None,
    summing: bool = False,
    **params: Any,
) -> NewPool:
    """`build_pool` without keeping its statistics: for a caller that changes the pool further
    (an adaptive pool's settings) and keeps them itself. With `summing`, the contributions are
    summed as each topic is pooled when that equals computing them after
    (`pool_statistics.summed_while_pooling`)."""
    from workbench.services import pool_statistics

    if len(name) > limits.POOL_NAME:
        raise ServiceError(limits.length_error("pool name", name, limits.POOL_NAME))
    recorded = strategy_params(strategy, params)
    models = _select_runs(session, campaign, runs)
    if seed is None:
        seed = secrets.randbelow(2**31)
    recorded["runs"] = [run.tag for run in models]
    recorded["checksums"] = {run.tag: run.checksum for run in models}
    archived = set(
        session.scalars(
            select(Topic.qid).where(
                Topic.campaign_id == campaign.id, Topic.archived_at.is_not(None)
            )
        )
    )
    if topics is None and archived:  # archived topics are left out, and the pool says so
        topics = [qid for qid in campaign_qids(session, campaign) if qid not in archived]
    if topics is not None:
        recorded["topics"] = sorted(
            chosen_topics(topics, campaign_qids(session, campaign), campaign), key=qid_key
        )
        if archived & set(recorded["topics"]):
            raise ServiceError(
                f"topic(s) {listed(sorted(archived & set(recorded['topics'])))} are archived"
            )
    number = 1 + (
        session.scalar(select(func.max(Pool.number)).where(Pool.campaign_id == campaign.id)) or 0
    )
    pool = Pool(
        campaign_id=campaign.id,
        number=number,
        name=name.strip(),
        strategy=strategy,
        params=recorded,
        seed=seed,
    )
    session.add(pool)
    session.flush()
    session.execute(
        insert(PoolRun), [{"pool_id": pool.id, "run_id": run.id, "build": 0} for run in models]
    )
    tags = [run.tag for run in models]
    summed = pool_statistics.summed_while_pooling(recorded, tags) if summing else None
    _insert_pool_rows(session, pool, models, strategy, recorded, seed, build=0, summed=summed)
    return NewPool(pool, summed)


def extend_pool(session: Session, pool: Pool, runs: list[str]) -> int:
    """Add runs to a pool: only documents not pooled yet are added, as the next build.

    The strategy is re-applied to all the pool's runs with the recorded parameters and seed
    (new runs after the recorded ones in the run order); existing entries are untouched.
    """
    if pool.archived_at is not None:
        raise ServiceError(f"pool {pool.number} is archived: restore it to extend it")
    if (pool.params or {}).get("adaptive"):
        raise ServiceError(
            f"pool {pool.number} is adaptive: raise its budget instead of extending it"
        )
    if {"machine_sample", "machine_review"} & set(pool.params or {}):
        raise ServiceError(
            f"pool {pool.number} was drawn for a machine judge's hybrid design: extend its "
            "source pool and draw again"
        )
    campaign = session.get(Campaign, pool.campaign_id)
    assert campaign is not None  # pools.campaign_id is a foreign key
    new_models = _select_runs(session, campaign, runs)
    current = pool_runs(session, pool)
    already = [run.tag for run in new_models if run.tag in {r.tag for r in current}]
    if already:
        raise ServiceError(f"run(s) already in pool {pool.number}: {listed(already)}")
    build = 1 + (
        session.scalar(select(func.max(PoolRun.build)).where(PoolRun.pool_id == pool.id)) or 0
    )
    params = dict(pool.params)
    params["runs"] = [*params.get("runs", [r.tag for r in current]), *(r.tag for r in new_models)]
    params["checksums"] = {**params.get("checksums", {}), **{r.tag: r.checksum for r in new_models}}
    params["extensions"] = [
        *params.get("extensions", []),
        {"build": build, "runs": [r.tag for r in new_models], "at": utcnow().isoformat()},
    ]
    pool.params = params
    session.execute(
        insert(PoolRun),
        [{"pool_id": pool.id, "run_id": run.id, "build": build} for run in new_models],
    )
    existing: dict[str, set[str]] = {}
    for qid, docno in session.execute(
        select(PoolEntry.qid, PoolEntry.docno).where(PoolEntry.pool_id == pool.id)
    ):
        existing.setdefault(qid, set()).add(docno)
    models = [*current, *new_models]
    added = _insert_pool_rows(
        session, pool, models, pool.strategy, params, pool.seed, build=build, existing=existing
    )
    session.flush()
    _keep_statistics(session, pool)
    return added


def _keep_statistics(session: Session, pool: Pool, summed: ContributionSum | None = None) -> None:
    """Keep the pool's statistics in the build's transaction (`pool_statistics.keep`)."""
    # imported here: pool_statistics reads this module's ranked lists
    from workbench.services import pool_statistics

    pool_statistics.keep(session, pool, summed)


def pool_runs(session: Session, pool: Pool) -> list[Run]:
    """The pool's runs in the recorded run order (builds in order)."""
    query = (
        select(Run)
        .join(PoolRun, PoolRun.run_id == Run.id)
        .where(PoolRun.pool_id == pool.id)
        .order_by(PoolRun.build, PoolRun.id)
    )
    models = list(session.scalars(query))
    order = {tag: i for i, tag in enumerate(pool.params.get("runs", []))}
    return sorted(models, key=lambda run: order.get(run.tag, len(order)))


def pool_documents(session: Session, pool: Pool, qid: str) -> list[PoolEntry]:
    """A topic's pooled documents, by build then best rank then docno."""
    query = (
        select(PoolEntry)
        .where(PoolEntry.pool_id == pool.id, PoolEntry.qid == qid)
        .order_by(PoolEntry.build, PoolEntry.best_rank, PoolEntry.docno)
    )
    return list(session.scalars(query))


def latest_pool(session: Session, campaign: Campaign) -> Pool | None:
    """The campaign's newest pool that is not archived."""
    return session.scalar(
        select(Pool)
        .where(Pool.campaign_id == campaign.id, Pool.archived_at.is_(None))
        .order_by(Pool.number.desc())
        .limit(1)
    )


def list_pools(
    session: Session, campaign: Campaign, *, archived: bool | None = False
) -> list[Pool]:
    """The campaign's pools by number: current ones, archived ones (True) or all (None)."""
    query = select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.number)
    if archived is not None:
        query = query.where(
            Pool.archived_at.is_not(None) if archived else Pool.archived_at.is_(None)
        )
    return list(session.scalars(query))


def get_pool(session: Session, campaign: Campaign, number: int | None = None) -> Pool:
    """The pool of that number in the campaign ("Pool 2"), or its latest pool; NotFound
    otherwise."""
    if number is None:
        return found(latest_pool(session, campaign), f"campaign {campaign.name!r} has no pool yet")
    pool = session.scalar(
        select(Pool).where(Pool.campaign_id == campaign.id, Pool.number == number)
    )
    return found(pool, f"campaign {campaign.name!r} has no pool {number}")


@dataclass(frozen=True)
class PoolInfo:
    """What the pages show of a pool (read in its session, rendered after it closed)."""

    id: int
    number: int
    name: str
    strategy: str
    params: dict[str, Any]
    created_at: dt.datetime
    archived_at: dt.datetime | None

    @property
    def kind(self) -> str:
        """The strategy as people read it: an adaptive pool (a depth-k pool whose documents
        a judging strategy reveals) names that strategy."""
        adaptive = self.params.get("adaptive")
        return f"adaptive, {adaptive['strategy']}" if adaptive else self.strategy


def pool_info(pool: Pool) -> PoolInfo:
    """The pool's fields, read while its session is open."""
    return PoolInfo(
        pool.id, pool.number, pool.name, pool.strategy, pool.params, pool.created_at,
        pool.archived_at,
    )  # fmt: skip


def pool_label(pool: Pool) -> str:
    """How a pool is named to people: 'pool 2' or 'pool 2 “name”'."""
    return f"pool {pool.number}" + (f" “{pool.name}”" if pool.name else "")


def pool_counts(session: Session, pool: Pool) -> tuple[int, int, int]:
    """(pooled documents, sampled ones, topics) of a pool, counted in the database."""
    documents, sampled, topics = session.execute(
        select(
            func.count(),
            func.count().filter(PoolEntry.sampled.is_(True)),
            func.count(PoolEntry.qid.distinct()),
        ).where(PoolEntry.pool_id == pool.id)
    ).one()
    return documents, sampled, topics


def documents_without_text(session: Session, pool: Pool) -> list[str]:
    """Pooled docnos (sampled ones) with neither a title nor a text in the campaign, sorted
    (a document with a title alone, as many of CACM's, is judged by its title).

    A correlated NOT EXISTS, not an outer join: SQLite materialises a view on the right of a
    LEFT JOIN (every document's text copied, about 20 s for 1 GB), while the subquery looks
    each docno up by index."""
    with_text = select(Document.id).where(
        Document.campaign_id == pool.campaign_id,
        Document.docno == PoolEntry.docno,
        or_(Document.text != "", Document.title != ""),
    )
    query = (
        select(PoolEntry.docno)
        .where(PoolEntry.pool_id == pool.id, PoolEntry.sampled.is_(True))
        .where(~with_text.exists())
        .distinct()
        .order_by(PoolEntry.docno)
    )
    return list(session.scalars(query))


def qid_key(qid: str) -> tuple[int, int, str]:
    """Sort key: numeric topic ids numerically, before the others alphabetically."""
    return (0, int(qid), "") if qid.isascii() and qid.isdigit() else (1, 0, qid)


# ---------------------------------------------------------------- helpers


def strategy_params(strategy: str, values: dict[str, Any]) -> dict[str, Any]:
    """The parameters to record for a registered strategy (`pooling.STRATEGIES`), read from
    `values` (form text, CLI options or recorded JSON; other strategies' parameters are
    ignored), validated: ServiceError on a bad request."""
    if strategy in adaptive.ADAPTIVE:
        raise ServiceError(
            f"{strategy!r} is an adaptive method, not a pooling strategy: build an adaptive "
            f"pool (the adaptive pool form, `pool build --adaptive {strategy}`); pooling "
            f"strategies: {', '.join(pooling.STRATEGIES)}"
        )
    known = {option.name for option in pooling.option_fields()}
    unknown = set(values) - known
    if unknown:
        raise ServiceError(f"unknown pool parameter(s): {', '.join(sorted(unknown))}")
    try:
        return pooling.get_strategy(strategy).parse(values).record()
    except ValueError as error:
        raise ServiceError(str(error)) from None


def _pure(recorded: dict[str, Any]) -> dict[str, Any]:
    """Recorded parameters with the run order as `pooling.pool_topic` takes it."""
    return {**recorded, "run_order": recorded["runs"]}


def _ranked_list_limit(recorded: dict[str, Any]) -> int | None:
    """How deep the runs must be read: the pool depth for depth and stratified pools."""
    return int(recorded["depth"]) if "depth" in recorded else None


def contribution_depth(pool: Pool, deepest: int) -> int:
    depth = pool.params.get("depth") or deepest
    return max(1, min(int(depth), MAX_GROWTH_DEPTH))


def _select_runs(session: Session, campaign: Campaign, tags: Sequence[str] | None) -> list[Run]:
    """The named runs in the given order, or every contributing run sorted by tag."""
    if tags is None:
        models = list(
            session.scalars(
                select(Run)
                .where(
                    Run.campaign_id == campaign.id,
                    Run.contributes.is_(True),
                    Run.archived_at.is_(None),
                )
                .order_by(Run.tag)
            )
        )
        if not models:
            raise ServiceError(f"campaign {campaign.name!r} has no contributing runs to pool")
        return models
    tags = list(dict.fromkeys(tags))
    if not tags:
        raise ServiceError("no runs named")
    by_tag = {
        run.tag: run
        for run in session.scalars(
            select(Run).where(Run.campaign_id == campaign.id, Run.tag.in_(tags))
        )
    }
    missing = [tag for tag in tags if tag not in by_tag]
    if missing:
        raise NotFound(f"campaign {campaign.name!r} has no run(s) {listed(missing)}")
    archived = [tag for tag in tags if by_tag[tag].archived_at is not None]
    if archived:
        raise ServiceError(f"run(s) {listed(archived)} are archived: restore them to pool them")
    return [by_tag[tag] for tag in tags]


def each_topic_ranked_lists(
    session: Session,
    models: Sequence[Run],
    limit: int | None = None,
    topics: Sequence[str] | None = None,
) -> Iterator[tuple[str, dict[str, pooling.RankedList]]]:
    """(qid, {tag: ranked list}) for every topic any of the runs has (of `topics`, when
    given), one topic at a time.

    With `limit`, only each list's first `limit` documents are kept (enough for depth pools).
    """
    tag_of = {run.id: run.tag for run in models}
    qids = session.scalars(select(RunTopic.qid).where(RunTopic.run_id.in_(tag_of)).distinct()).all()
    if topics is not None:
        qids = [qid for qid in qids if qid in set(topics)]
    for qid in sorted(qids, key=qid_key):
        yield qid, topic_ranked_lists(session, models, qid, limit)


def topic_ranked_lists(
    session: Session, models: Sequence[Run], qid: str, limit: int | None = None
) -> dict[str, pooling.RankedList]:
    """{tag: ranked list} of one topic for the runs that have it, in the runs' order."""
    tag_of = {run.id: run.tag for run in models}
    columns = (RunTopic.run_id, RunTopic.n_lines, RunTopic.docnos, RunTopic.scores)
    rows = session.execute(select(*columns).where(RunTopic.run_id.in_(tag_of), RunTopic.qid == qid))
    ranked_lists: dict[str, pooling.RankedList] = {}
    for row in rows:
        scores = decode_scores(row.scores)
        needed = pooling.lines_needed(scores, limit)  # a depth-k pool decodes the head only
        docnos = decode_docnos_head(row.docnos, needed) if row.n_lines else []
        ranked_lists[tag_of[row.run_id]] = pooling.ranked_list(docnos, scores[:needed], limit=limit)
    return {run.tag: ranked_lists[run.tag] for run in models if run.tag in ranked_lists}


# a PoolEntry row: pool, topic and build, then the fields of a PooledDocument in its order
ENTRY_COLUMNS = ("pool_id", "qid", "build", *pooling.PooledDocument._fields)


def _insert_pool_rows(
    session: Session,
    pool: Pool,
    models: Sequence[Run],
    strategy: str,
    params: dict[str, Any],
    seed: int,
    *,
    build: int,
    existing: dict[str, set[str]] | None = None,
    summed: ContributionSum | None = None,
) -> int:
    """Insert the PoolEntry rows of a build of `pool`, one topic at a time (only a topic's
    rows are held), and count the change to its campaign; their number. Every topic (of
    params' topics, when recorded) is pooled with the recorded parameters, the documents
    already `existing` per topic left out, and its contributions added to `summed`, when
    given. The cyclic collector is paused meanwhile (`workbench.bulk`: a tuple per
    document)."""
    inserted = 0
    with collector_paused():
        for qid, ranked_lists in each_topic_ranked_lists(
            session, models, _ranked_list_limit(params), params.get("topics")
        ):
            pooled = pooling.pool_topic(
                ranked_lists,
                strategy=strategy,
                params=_pure(params),
                rng=pooling.topic_rng(seed, strategy, qid, build),
                exclude=(existing or {}).get(qid, ()),
            )
            if summed is not None:
                summed.add(ranked_lists, [document.docno for document in pooled])
            rows = list(_entry_rows(pool.id, qid, pooled, build=build))
            bulk_insert(session, PoolEntry.__table__, ENTRY_COLUMNS, rows)
            inserted += len(rows)
    changes.changed(session, pool.campaign_id)
    return inserted


def _entry_rows(
    pool_id: int, qid: str, pooled: Iterable[pooling.PooledDocument], *, build: int
) -> Iterator[tuple]:
    """PoolEntry rows in ENTRY_COLUMNS order (tuple concatenation in C: no Python call per
    document, of which a pool has 100,000s)."""
    return map((pool_id, qid, build).__add__, pooled)


def describe_parameters(pool: Pool) -> str:
    """The pool's parameters as people read them: 'depth 20', 'budget 50, fair run order',
    with the topic subset and extensions when there are any."""
    parts = [pooling.get_strategy(pool.strategy).describe(pool.params)]
    topics = pool.params.get("topics")
    if topics is not None:
        parts.append(f"{len(topics)} chosen {'topic' if len(topics) == 1 else 'topics'}")
    sample = pool.params.get("machine_sample")
    if sample:
        parts.append(
            f"human sample of pool {sample['source_pool']} for {sample['judge']} "
            f"({sample['design']}, share {sample['share']:g}, seed {sample['seed']})"
        )
    review = pool.params.get("machine_review")
    if review:
        parts.append(f"review of the disagreements with {review['judge']} ({review['on']})")
    extensions = len(pool.params.get("extensions", []))
    if extensions:
        parts.append(f"extended {extensions} {'time' if extensions == 1 else 'times'}")
    if pool.params.get("routing"):
        parts.append(f"assigned by {routing.describe(pool.params['routing'])}")
    return "; ".join(parts)


def describe_pool(pool: Pool) -> str:
    """One line: number, name, strategy, parameters, runs, seed and creation time."""
    created = pool.created_at.replace(tzinfo=dt.UTC).isoformat(timespec="seconds")
    n = len(pool.params.get("runs", []))
    return (
        f"{pool_label(pool)} ({pool.strategy}: {describe_parameters(pool)}, "
        f"{n} {'run' if n == 1 else 'runs'}, seed {pool.seed}, created {created})"
    )
