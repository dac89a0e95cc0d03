"""A pool's statistics: sizes per topic, documents only each run contributed, pairwise run
overlap, pool growth by depth.

The run contributions need every pool run's ranked list of every topic decoded (about 1 s of
CPU at a tenth of a TREC-size campaign, and growing with the runs): they are computed once and
kept in `pool_statistics` with the pool's *signature* (its entries' count and highest id, its
recorded parameters, its runs' ids and the highest id of each run's `run_topics` rows: a run
replaced in place keeps its id, and its new lines are new rows). Contributions depend on
nothing else: which documents are pooled, at which best rank, and the runs' lists. Entries are
only ever added (a build, an extension, adaptive pools' reserves); revealing or sampling flips
`sampled`, which the contributions do not use. So a kept row whose signature is the pool's
current one is exactly what a recomputation would give; any other is recomputed. The sizes per
topic are counted by the database on every load (one GROUP BY, no row read into Python).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import pool_contributions, pooling
from workbench.services.pools import (
    MAX_GROWTH_DEPTH,
    contribution_depth,
    describe_parameters,
    each_topic_ranked_lists,
    pool_runs,
    qid_key,
)
from workbench.store.models import Pool, PoolEntry, PoolStatistics, Run, RunTopic


@dataclass(frozen=True)
class Contributions:
    """What each run of a pool contributed within `depth` (`pool_contributions.topic_contributions`
    summed over topics): shared[i][j] documents both runs i and j contributed (the diagonal:
    each run's own), unique[i] only run i, growth[d] the pool's size at depth d + 1."""

    pool_id: int
    signature: str
    depth: int
    runs: tuple[str, ...]
    shared: tuple[tuple[int, ...], ...]
    unique: tuple[int, ...]
    growth: tuple[int, ...]

    def record(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "runs": list(self.runs),
            "shared": [list(row) for row in self.shared],
            "unique": list(self.unique),
            "growth": list(self.growth),
        }


def pool_signature(session: Session, pool: Pool, runs: list[Run]) -> str:
    """SHA-256 of what the contributions depend on: the number of the pool's entries and
    their highest id (entries are only added, each with its best rank for good), the pool's
    recorded parameters and its runs (id and the highest id of its `run_topics` rows, in pool
    order: `import --replace` keeps a run's id and writes its lines as new rows)."""
    count, highest = session.execute(
        select(func.count(), func.max(PoolEntry.id)).where(PoolEntry.pool_id == pool.id)
    ).one()
    rows = (
        select(RunTopic.run_id, func.max(RunTopic.id))
        .where(RunTopic.run_id.in_([run.id for run in runs]))
        .group_by(RunTopic.run_id)
    )
    lines = {run_id: last for run_id, last in session.execute(rows)}
    described = [count, highest, pool.params, [[run.id, lines.get(run.id)] for run in runs]]
    text = json.dumps(described, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def current_contributions(session: Session, pool: Pool) -> tuple[Contributions, bool]:
    """The pool's contributions and whether they were kept ones (False: computed now, and
    `remember` would keep them)."""
    runs = pool_runs(session, pool)
    signature = pool_signature(session, pool, runs)
    kept = session.get(PoolStatistics, pool.id)
    if kept is not None and kept.signature == signature:
        return _from_record(pool.id, signature, kept.contributions), True
    return _compute(session, pool, runs, signature), False


def keep(session: Session, pool: Pool, summed: ContributionSum | None = None) -> None:
    """Keep the pool's contributions: those a new pool's build `summed` as it pooled
    (`summed_while_pooling`), else computed unless what is kept is current. The pool
    builder's last step (`pools.build_pool`, `pools.extend_pool`, an adaptive pool's build),
    so that the campaign page's first load after a pool change reads them."""
    if summed is not None:
        signature = pool_signature(session, pool, pool_runs(session, pool))
        remember(session, summed.contributions(pool.id, signature))
        return
    contributions, kept = current_contributions(session, pool)
    if not kept:
        remember(session, contributions)


def remember(session: Session, contributions: Contributions) -> None:
    """Keep `contributions` for their pool (replacing what was kept); a concurrent writer
    that kept them first wins (both computed the same)."""
    kept = session.get(PoolStatistics, contributions.pool_id)
    if kept is not None:
        kept.signature = contributions.signature
        kept.contributions = contributions.record()
        return
    try:
        with session.begin_nested():
            session.add(
                PoolStatistics(
                    pool_id=contributions.pool_id,
                    signature=contributions.signature,
                    contributions=contributions.record(),
                )
            )
    except IntegrityError:
        pass  # another server kept them at the same moment


def pool_statistics(
    session: Session, pool: Pool, contributions: Contributions | None = None
) -> dict[str, Any]:
    """`contribution_statistics` and `topic_sizes` in one dict (`contributions`: default
    `current_contributions`')."""
    if contributions is None:
        contributions = current_contributions(session, pool)[0]
    return {**contribution_statistics(pool, contributions), **topic_sizes(session, pool)}


def topic_sizes(session: Session, pool: Pool) -> dict[str, Any]:
    """The pool's documents ("size") and sampled ones ("sampled", to judge), in all and per
    topic ("topics": qid -> size and sampled, in topic order): a pass over its entries (the
    campaign page reads them from a report job, `judging_figures.campaign_figures`)."""
    per_topic = session.execute(
        select(PoolEntry.qid, func.count(), func.count().filter(PoolEntry.sampled.is_(True)))
        .where(PoolEntry.pool_id == pool.id)
        .group_by(PoolEntry.qid)
    ).all()
    return {
        "size": sum(size for _, size, _ in per_topic),
        "sampled": sum(sampled for _, _, sampled in per_topic),
        "topics": {
            qid: {"size": size, "sampled": sampled}
            for qid, size, sampled in sorted(per_topic, key=lambda row: qid_key(row[0]))
        },
    }


def contribution_statistics(pool: Pool, contributions: Contributions) -> dict[str, Any]:
    """The pool's description, documents only each run contributed, pairwise run overlap
    (Jaccard of contributed documents over all topics), and pool size at depths 1..D summed
    over topics.

    A run contributes a pooled document it ranks within D: the pool depth (depth), the last
    stratum bound (stratified), or the deepest best rank in the pool (take, fusion).
    """
    tags = list(contributions.runs)
    shared = np.array(contributions.shared, dtype=np.int64).reshape(len(tags), len(tags))
    contributed = np.diag(shared)
    union = contributed[:, None] + contributed[None, :] - shared
    jaccard = np.divide(shared, union, out=np.zeros(shared.shape), where=union > 0)
    return {
        "pool": pool.id,
        "number": pool.number,
        "name": pool.name,
        "strategy": pool.strategy,
        "params": pool.params,
        "parameters": describe_parameters(pool),
        "seed": pool.seed,
        "created_at": pool.created_at.isoformat(),
        "runs": tags,
        "contribution_depth": contributions.depth,
        "contributed_per_run": dict(zip(tags, contributed.tolist(), strict=True)),
        "unique_per_run": dict(zip(tags, list(contributions.unique), strict=True)),
        "overlap": {
            a: dict(zip(tags, row, strict=True))
            for a, row in zip(tags, jaccard.tolist(), strict=True)
        },
        "growth_by_depth": list(contributions.growth),
    }


class ContributionSum:
    """Contributions summed topic by topic (`pool_contributions.topic_contributions` of each topic's
    ranked lists and pooled documents) for the runs `tags` within `depth`."""

    def __init__(self, depth: int, tags: list[str]) -> None:
        self.depth = depth
        self.tags = tags
        self.shared = np.zeros((len(tags), len(tags)), dtype=np.int64)
        self.unique = np.zeros(len(tags), dtype=np.int64)
        self.growth = np.zeros(depth, dtype=np.int64)

    def add(self, ranked_lists: pooling.RankedLists, pooled: Iterable[str]) -> None:
        topic = pool_contributions.topic_contributions(ranked_lists, pooled, self.depth, self.tags)
        self.shared += topic.shared
        self.unique += topic.unique
        self.growth += topic.growth

    def contributions(self, pool_id: int, signature: str) -> Contributions:
        return Contributions(
            pool_id=pool_id,
            signature=signature,
            depth=self.depth,
            runs=tuple(self.tags),
            shared=tuple(tuple(row) for row in self.shared.tolist()),
            unique=tuple(self.unique.tolist()),
            growth=tuple(self.growth.tolist()),
        )


def summed_while_pooling(params: dict[str, Any], tags: list[str]) -> ContributionSum | None:
    """A sum for a new pool's build to fill as it pools each topic (`pools.build_pool`),
    when that equals `_compute`'s pass after it: the recorded depth (depth and stratified
    pools) is how deep the build reads the runs and the contribution depth
    (`contribution_depth`, within MAX_GROWTH_DEPTH), and every topic of the runs is pooled (no
    topic subset: the growth counts every topic's lists). Otherwise None, and the build's
    statistics are computed after it (a second pass over the runs: at W-adhoc size, 100 runs
    of 50 topics, 3.3-4.3 s of the build's 8.7-9.6 s)."""
    depth = params.get("depth")
    if depth is None or "topics" in params or not 1 <= int(depth) <= MAX_GROWTH_DEPTH:
        return None
    return ContributionSum(int(depth), tags)


def _compute(session: Session, pool: Pool, runs: list[Run], signature: str) -> Contributions:
    """The contributions from the runs' ranked lists (every topic decoded)."""
    entries = session.execute(
        select(PoolEntry.qid, PoolEntry.docno, PoolEntry.best_rank).where(
            PoolEntry.pool_id == pool.id
        )
    ).all()
    pooled: dict[str, set[str]] = {}
    for qid, docno, _ in entries:
        pooled.setdefault(qid, set()).add(docno)
    depth = contribution_depth(pool, max((e.best_rank for e in entries), default=1))
    total = ContributionSum(depth, [run.tag for run in runs])
    for qid, ranked_lists in each_topic_ranked_lists(session, runs, depth):
        total.add(ranked_lists, pooled.get(qid, ()))
    return total.contributions(pool.id, signature)


def _from_record(pool_id: int, signature: str, record: dict[str, Any]) -> Contributions:
    return Contributions(
        pool_id=pool_id,
        signature=signature,
        depth=int(record["depth"]),
        runs=tuple(record["runs"]),
        shared=tuple(tuple(row) for row in record["shared"]),
        unique=tuple(record["unique"]),
        growth=tuple(record["growth"]),
    )
