"""What the runs contributed to one topic's pool within a depth (docs/methods.md section 2):
the pooled documents a run retrieved, those only one run or group retrieved (Zobel, "How
reliable are the results of large-scale IR experiments?", SIGIR 1998, section 3), the
documents two runs share and how the pool grows with the depth (our matrix form of the
same counts, kept per pool by `services.pool_statistics`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.pooling import RankedLists, TopLines


def contributed(top: Iterable[str], pool: set[str]) -> set[str]:
    """The pooled documents (`pool`) among a run's documents within the depth (`top`)."""
    return set(top) & pool


def unique_by_unit(
    contributed: Mapping[str, set[str]], units: Mapping[str, str]
) -> dict[str, set[str]]:
    """Per unit, the documents of one topic's pool that runs of that unit contributed and no
    run of another unit did (`contributed`: run tag -> its contributions; `units`: run tag ->
    unit, the run itself for leave-one-run-out, its group for leave-one-group-out). A unit
    without such documents is absent. One pass over the contributions for every unit."""
    owner: dict[str, str | None] = {}  # document -> its only unit, None once a second one
    for tag, docs in contributed.items():
        unit = units[tag]
        for doc in docs:
            if owner.setdefault(doc, unit) != unit:
                owner[doc] = None
    unique: dict[str, set[str]] = {}
    for doc, only in owner.items():
        if only is not None:
            unique.setdefault(only, set()).add(doc)
    return unique


@dataclass(frozen=True)
class TopicContributions:
    """How the runs (in a given tag order) contributed to one topic's pool within a depth.

    shared[i, j]: pooled documents both run i and run j retrieved within the depth (the
    diagonal: what run i contributed); unique[i]: those no other run retrieved within it;
    growth[d - 1]: size of the depth-d pool of these runs, d = 1..depth.
    """

    shared: np.ndarray
    unique: np.ndarray
    growth: np.ndarray


def topic_contributions(
    ranked_lists: RankedLists, pooled: Iterable[str], depth: int, tags: Sequence[str]
) -> TopicContributions:
    """Contributions of the runs `tags` (rows in that order; absent runs are zero).

    shared counts, for every pooled document, each ordered pair of the runs retrieving it:
    a document retrieved by m runs adds m * m pairs (numpy's bincount over the pairs)."""
    n = len(tags)
    row_of = {tag: i for i, tag in enumerate(tags)}
    lines = TopLines.of(ranked_lists.values(), depth)
    if not lines.names:
        return TopicContributions(np.zeros((n, n), int), np.zeros(n, int), np.zeros(depth, int))
    best = lines.best_ranks(depth + 1)
    growth = np.cumsum(np.bincount(best, minlength=depth + 2)[1 : depth + 1])
    pool = set(pooled)
    in_pool = np.fromiter(map(pool.__contains__, lines.names), dtype=bool, count=len(lines.names))
    kept = in_pool[lines.document]
    rows = np.array([row_of[tag] for tag in ranked_lists], dtype=np.int64)[lines.run[kept]]
    columns = lines.document[kept]
    by_document = np.argsort(columns, kind="stable")
    rows, columns = rows[by_document], columns[by_document]
    runs_per_document = np.bincount(columns, minlength=len(lines.names))
    unique = np.bincount(rows[runs_per_document[columns] == 1], minlength=n)
    # the pairs: line i (of a document retrieved by m runs) with each of its document's m lines
    m = runs_per_document[columns]
    first = np.cumsum(runs_per_document) - runs_per_document  # each document's first line
    offset = np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)  # 0..m-1 per line
    partner = np.repeat(first[columns], m) + offset
    shared = np.bincount(np.repeat(rows, m) * n + rows[partner], minlength=n * n).reshape(n, n)
    return TopicContributions(shared, unique, growth)
