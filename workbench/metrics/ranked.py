"""The ranked relevance of every evaluated topic, in CSR form (one home for trec_eval's setup).

For each evaluated topic, the run's lines are put in trec order (score descending, docno
descending), optionally truncated (``-M``) and then filtered to judged documents (``-J``),
as trec_eval does; each ranked document gets its qrels value: the grade when judged,
``NONPOOL`` (-1) when absent from the qrels, ``UNJUDGED`` (-2) when the qrels give it a
negative value.
"""

from __future__ import annotations

import math
import weakref
from functools import cached_property
from typing import NamedTuple

import numpy as np

from workbench.metrics._keys import match_table, topic_tables
from workbench.trec import native
from workbench.trec.keys import group_keys, offsets_of, segment_rows
from workbench.trec.order import trec_order_blocks
from workbench.trec.qrels import Qrels
from workbench.trec.runs import Run

NONPOOL = -1
UNJUDGED = -2


class Ranked:
    """Evaluated topics: ``rel[offsets[t]:offsets[t+1]]`` is topic t's ranking.

    A plain class (not a dataclass: its generated methods would cost start-up time).
    """

    def __init__(
        self,
        qids: list[str],
        offsets: np.ndarray,
        rel: np.ndarray,
        num_rel: np.ndarray,
        num_nonrel: np.ndarray,
        judged_offsets: np.ndarray,
        judged_rel: np.ndarray,
        level: int,
        n_docs_in_collection: int = 0,
        judged_memo: dict[tuple, np.ndarray] | None = None,
    ) -> None:
        self.qids = qids
        self.offsets = offsets
        # qrels value of each ranked document (NONPOOL/UNJUDGED when < 0); int8 unless grades
        # need more
        self.rel = rel
        self.num_rel = num_rel  # per topic: judged with rel >= level
        self.num_nonrel = num_nonrel  # per topic: judged with 0 <= rel < level
        self.judged_offsets = judged_offsets  # CSR over judged_rel
        self.judged_rel = judged_rel  # per topic, the nonnegative qrels values, descending
        self.level = level
        self.n_docs_in_collection = n_docs_in_collection
        # values that depend on the judged parts alone (ideal DCGs ...), shared by every run
        # ranked over the same qrels, topics and level
        self.judged_memo = judged_memo if judged_memo is not None else {}

    @property
    def n_topics(self) -> int:
        return len(self.qids)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    def topic_of(self, rows: np.ndarray) -> np.ndarray:
        """Topic index of each of ``rows`` (computed once for ``judged_rows`` and
        ``rel_rows``)."""
        if rows is self.__dict__.get("judged_rows"):
            return self.judged_rows_topic
        if rows is self.__dict__.get("rel_rows"):
            return self.rel_topic
        return np.searchsorted(self.offsets, rows, side="right") - 1

    def pos_of(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank of each of ``rows`` within its topic."""
        return rows - self.offsets[self.topic_of(rows)] + 1

    @cached_property
    def judged_rows(self) -> np.ndarray:
        """Indices of the ranked rows with a judgement (rel >= 0), which the gain-based
        measures share."""
        return np.flatnonzero(self.rel >= 0)

    @cached_property
    def judged_rows_topic(self) -> np.ndarray:
        return np.searchsorted(self.offsets, self.judged_rows, side="right") - 1

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.level

    @cached_property
    def rel_rows(self) -> np.ndarray:
        """Indices of the relevant ranked rows (rel >= level)."""
        return np.flatnonzero(self.is_rel)

    @cached_property
    def rel_topic(self) -> np.ndarray:
        """Topic index of each relevant row (``rel_rows`` order)."""
        return np.searchsorted(self.offsets, self.rel_rows, side="right") - 1

    @cached_property
    def rel_pos(self) -> np.ndarray:
        """Rank of each relevant row (``rel_rows`` order)."""
        return self.rel_rows - self.offsets[self.rel_topic] + 1

    @cached_property
    def rel_rank(self) -> np.ndarray:
        """For each relevant row (``rel_rows`` order): the relevant rows at or above it in its
        topic (1 for the topic's first relevant row); only as long as ``rel_rows``."""
        rows = self.rel_rows
        counts = self.num_rel_ret  # rel_rows are in topic order: topic t's start in them
        first = (np.cumsum(counts) - counts)[self.rel_topic]
        return np.arange(1, len(rows) + 1, dtype=np.int64) - first

    def rel_so_far(self, rows: np.ndarray) -> np.ndarray:
        """Relevant documents at or above each of ``rows`` (relevant rows), within its topic
        (``rel_rank`` itself for ``rel_rows``)."""
        if rows is self.__dict__.get("rel_rows"):
            return self.rel_rank
        return self.rel_rank[np.searchsorted(self.rel_rows, rows)]

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return np.bincount(self.rel_topic, minlength=self.n_topics).astype(np.int64)

    def per_topic_count(self, rows: np.ndarray) -> np.ndarray:
        """How many of ``rows`` each topic has."""
        return np.bincount(self.topic_of(rows), minlength=self.n_topics).astype(np.int64)

    def per_topic_sum(self, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Per-topic sums of the ``weights`` of ``rows``, in row order (sequential, as
        trec_eval's loops add)."""
        return np.bincount(self.topic_of(rows), weights=weights, minlength=self.n_topics)

    def topic_rels(self, t: int) -> np.ndarray:
        return self.rel[self.offsets[t] : self.offsets[t + 1]]

    def topic_judged(self, t: int) -> np.ndarray:
        return self.judged_rel[self.judged_offsets[t] : self.judged_offsets[t + 1]]

    @cached_property
    def judged_pos(self) -> np.ndarray:
        counts = np.diff(self.judged_offsets)
        starts = np.repeat(self.judged_offsets[:-1], counts)
        return np.arange(len(self.judged_rel)) - starts + 1

    @cached_property
    def judged_topic(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_topics), np.diff(self.judged_offsets))


_DISCOUNTS: list[float] = [0.0]


def discount(pos: np.ndarray) -> np.ndarray:
    """log2(pos + 1) for 1-based ranks, computed with C's log2 (math.log2) for exactness."""
    top = int(pos.max()) if len(pos) else 0
    if top >= len(_DISCOUNTS):
        _DISCOUNTS.extend(math.log2(i + 1) for i in range(len(_DISCOUNTS), top + 1))
    return np.asarray(_DISCOUNTS)[pos]


def rank_topics(
    qrels: Qrels,
    run: Run,
    qids: list[str],
    *,
    relevance_level: int = 1,
    max_results: int | None = None,
    judged_only: bool = False,
    float32: bool = False,
    n_docs_in_collection: int = 0,
) -> Ranked:
    """Build :class:`Ranked` for ``qids`` (a topic absent from the run ranks nothing).

    ``Ranked.qids`` lists them in the run's order (missing ones last), which spares copying
    the run when every run topic is evaluated.
    """
    run_index = run.topic_index
    n_run = len(run_index)
    qids = sorted(qids, key=lambda q: run_index.get(q, n_run))
    which = np.array([run_index.get(q, -1) for q in qids], dtype=np.int64)
    if len(which) == n_run and np.array_equal(which, np.arange(n_run)):
        rows, offsets = None, run.offsets  # every run topic, in the run's order: no copies
    else:
        rows, offsets = segment_rows(run.offsets, which)
    q_topic = _index_in(qrels, qids)
    rel = _ranked_rels(qrels, q_topic, _RunRows(run, rows, offsets), float32)
    # trec_eval cuts at -M first, then drops the unjudged (-J) keeping the order
    if max_results is not None:
        n = np.diff(offsets)
        kept = np.minimum(n, max(max_results, 0))
        pos = np.arange(len(rel)) - np.repeat(offsets[:-1], n)
        rel = rel[pos < np.repeat(kept, n)]
        offsets = offsets_of(kept)
    if judged_only:
        keep = rel >= 0
        rel = rel[keep]
        topic = np.repeat(np.arange(len(qids)), np.diff(offsets))
        offsets = offsets_of(np.bincount(topic[keep], minlength=len(qids)))
    parts = _judged_of(qrels, q_topic, relevance_level)
    judged_offsets, judged_rel, num_rel, num_nonrel, memo = parts
    return Ranked(
        qids,
        offsets,
        rel,
        num_rel,
        num_nonrel,
        judged_offsets,
        judged_rel,
        relevance_level,
        n_docs_in_collection,
        memo,
    )


def _index_in(qrels: Qrels, qids: list[str]) -> np.ndarray:
    index = qrels.topic_index
    return np.array([index.get(q, -1) for q in qids], dtype=np.int64)


class _RunRows(NamedTuple):
    """The lines of a run's topics being ranked: the run, their rows in it (None: every
    line, in its order) and their CSR offsets."""

    run: Run
    rows: np.ndarray | None
    offsets: np.ndarray

    def of(self, column: np.ndarray) -> np.ndarray:
        """A column of the run (one value per line) for these lines."""
        return column if self.rows is None else column[self.rows]


def _ranked_rels(qrels: Qrels, q_topic: np.ndarray, rows: _RunRows, float32: bool) -> np.ndarray:
    """Qrels value of each row in trec order within its topic: NONPOOL if absent, UNJUDGED if
    negative; int8 when every grade fits (as usual), else int32 or int64.

    ``q_topic``: the qrels topic index of each evaluated topic (-1: none).  A block of whole
    topics at a time is put in trec order and probed in the qrels' hash tables (in C, one
    small table per topic; else one table of (topic, docno) keys); hits are verified on the
    exact bytes.

    Qrels with a lineage (`Qrels.lineage`: each entry is one of a root's, same topic, same
    docno) take the root row each ranked document matches (`_root_hits`, probed once per
    root and run) and their own grade of that row: what probing their own tables gives.
    """
    lineage = _usable_lineage(qrels)
    if lineage is None:
        docnos, scores = rows.of(rows.run.docnos), rows.of(rows.run.scores)
        rel = np.full(len(docnos), NONPOOL, dtype=_smallest_int(qrels.grouped_rels))
        if len(docnos):
            hashes, offsets = rows.of(rows.run.docno_hashes), rows.offsets
            lookup = _Lookup(qrels, q_topic, qrels.grouped_rels)
            for first, last, order in trec_order_blocks(docnos, scores, offsets, float32=float32):
                lookup.block(hashes, docnos, offsets, first, last, order, rel)
        return rel
    root, root_rows = lineage
    return _coded(qrels, root, root_rows)[rows.of(_root_hits(root, rows.run, float32))]


# Per derived qrels while they live: their value of each root row (`_coded`).
_CODED: weakref.WeakKeyDictionary[Qrels, np.ndarray] = weakref.WeakKeyDictionary()


def _coded(qrels: Qrels, root: Qrels, root_rows: np.ndarray) -> np.ndarray:
    """The derived qrels' value of each root row, as a ranked document matching it gets it
    (their grade, UNJUDGED for a negative one, NONPOOL for a row they lack), and NONPOOL
    last (for -1, no row); made once per qrels (every run ranked against them reads it)."""
    coded = _CODED.get(qrels)
    if coded is None:
        grades = qrels.grouped_rels
        coded = np.full(len(root) + 1, NONPOOL, dtype=_smallest_int(grades))
        coded[root_rows] = np.where(grades < 0, UNJUDGED, grades)
        coded.flags.writeable = False
        _CODED[qrels] = coded
    return coded


# Per root qrels and run while both live: the root's grouped row that each of the run's lines
# (every topic, in trec order within it) matches, -1 for none; for each float32.
_HITS: weakref.WeakKeyDictionary[Qrels, weakref.WeakKeyDictionary[Run, dict[bool, np.ndarray]]] = (
    weakref.WeakKeyDictionary()
)


def _root_hits(root: Qrels, run: Run, float32: bool) -> np.ndarray:
    """The root's grouped row each line of the run matches (its topic's entry of the same
    docno), -1 for none, every topic's lines in trec order: probed in the root's tables once
    (the rows' numbers as the looked-up values) and kept while the root and the run live;
    read-only, int32 (int64 for roots of 2^31 entries or more)."""
    kept = _HITS.setdefault(root, weakref.WeakKeyDictionary()).setdefault(run, {})
    if float32 not in kept:
        dtype = np.int32 if len(root) < 2**31 - 1 else np.int64
        hits = np.full(len(run.docnos), -1, dtype=dtype)
        if len(run.docnos):
            lookup = _Lookup(root, _index_in(root, run.topics()), np.arange(len(root)))
            blocks = trec_order_blocks(run.docnos, run.scores, run.offsets, float32=float32)
            for first, last, order in blocks:
                lookup.block(run.docno_hashes, run.docnos, run.offsets, first, last, order, hits)
        hits.flags.writeable = False
        kept[float32] = hits
    return kept[float32]


class _Lookup:
    """Probing a block of topics' rows (in trec order) in one qrels' hash tables, writing the
    `values` (per grouped entry: its grade, or its row number) of the entries found."""

    def __init__(self, qrels: Qrels, q_topic: np.ndarray, values: np.ndarray) -> None:
        self.qrels = qrels
        self.q_topic = q_topic.astype(np.int32)
        self.values = values
        self.tables = topic_tables(qrels) if len(qrels) else None
        self.table = match_table(qrels) if len(qrels) and self.tables is None else None

    def block(
        self,
        hashes: np.ndarray,
        docnos: np.ndarray,
        offsets: np.ndarray,
        first: int,
        last: int,
        order: np.ndarray | None,
        rel: np.ndarray,
    ) -> None:
        qrels, q_topic, values = self.qrels, self.q_topic, self.values
        if self.tables is not None:
            lookup = (hashes, docnos, qrels.grouped_docnos, values, q_topic, offsets, order)
            native.lookup_rels(self.tables, *lookup, first, last, rel)
            return
        if self.table is None:
            return
        lo, hi = int(offsets[first]), int(offsets[last])
        rows = np.arange(lo, hi) if order is None else lo + order
        # the trec order permutes rows within their topic: position i is in i's segment
        row_topic = np.repeat(q_topic[first:last], np.diff(offsets[first : last + 1]))
        found = self.table.find(group_keys(hashes[rows], row_topic))
        found[row_topic < 0] = -1
        hit = np.flatnonzero(found >= 0)
        source = found[hit]
        same = (qrels.grouped_docnos[source] == docnos[rows[hit]]) & (
            qrels.grouped_topic[source] == row_topic[hit]
        )
        found_values = values[source[same]]
        rel[lo + hit[same]] = np.where(found_values < 0, UNJUDGED, found_values)


def _usable_lineage(qrels: Qrels) -> tuple[Qrels, np.ndarray] | None:
    """The qrels' lineage (root, root rows), unless they have none or the root judges a
    docno twice in a topic (then which of its entries a lookup finds depends on its table,
    and the qrels' own tables are used)."""
    lineage = qrels.lineage
    if lineage is None or lineage[0].judged_twice:
        return None
    return lineage


def _mapped_topics(qrels: Qrels, other: Qrels, q_topic: np.ndarray) -> np.ndarray:
    """`other`'s topic index of each of the qrels topics ``q_topic`` (-1: none there)."""
    index = {q: i for i, q in enumerate(other.topics())}
    mapped = np.array([index.get(q, -1) for q in qrels.topics()] + [-1], dtype=np.int64)
    return mapped[q_topic]


def _smallest_int(grades: np.ndarray) -> type[np.signedinteger]:
    """The narrowest of int8, int32 and int64 that holds the grades and NONPOOL/UNJUDGED."""
    low = min(int(grades.min()), UNJUDGED) if len(grades) else UNJUDGED
    high = int(grades.max()) if len(grades) else 0
    for dtype in (np.int8, np.int32):
        bounds = np.iinfo(dtype)
        if bounds.min <= low and high <= bounds.max:
            return dtype
    return np.int64


_JudgedParts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[tuple, np.ndarray]]
# Per Qrels object while it lives: the judged parts of each (topics, level) asked for, shared
# (read-only) by every run evaluated on the same topics, with a memo of what derives from them,
# and the qrels' grouped row of each judged entry (for qrels derived from these).
_JUDGED: weakref.WeakKeyDictionary[
    Qrels, dict[tuple[bytes, int], tuple[_JudgedParts, np.ndarray]]
] = weakref.WeakKeyDictionary()


def _judged_of(qrels: Qrels, q_topic: np.ndarray, level: int) -> _JudgedParts:
    """:func:`_judged` of the qrels topics ``q_topic`` (-1: none), computed once per qrels,
    and a memo of the values derived from them alone (``Ranked.judged_memo``)."""
    return _judged_with_rows(qrels, q_topic, level)[0]


def _judged_with_rows(
    qrels: Qrels, q_topic: np.ndarray, level: int
) -> tuple[_JudgedParts, np.ndarray]:
    """:func:`_judged_of`, and the grouped row of each judged entry. Qrels with a lineage
    (`Qrels.lineage`) whose grades are their root's (`select`, `without`) take the root's
    judged entries of the same topics less the rows they lack (the root's order is (topic,
    grade descending): what is left is in it)."""
    cache = _JUDGED.setdefault(qrels, {})
    key = (q_topic.tobytes(), level)
    found = cache.get(key)
    if found is None:
        lineage = _usable_lineage(qrels)
        if lineage is not None and not np.array_equal(
            qrels.grouped_rels, lineage[0].grouped_rels[lineage[1]]
        ):
            lineage = None  # grades of their own
        if lineage is None:
            q_rows, q_offsets = segment_rows(qrels.offsets, q_topic)
            *arrays, src = _judged(qrels.grouped_rels[q_rows], q_offsets, level)
            rows = q_rows[src]
        else:
            arrays, rows = _judged_in_root(qrels, *lineage, q_topic, level)
        for array in arrays:
            array.flags.writeable = False
        offsets, rels, num_rel, num_nonrel = arrays
        found = cache[key] = ((offsets, rels, num_rel, num_nonrel, {}), rows)
    return found


def _judged_in_root(
    qrels: Qrels, root: Qrels, root_rows: np.ndarray, q_topic: np.ndarray, level: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """The judged parts of derived qrels from their root's (see `_judged_with_rows`), and
    the qrels' own grouped row of each judged entry."""
    parts, rows = _judged_with_rows(root, _mapped_topics(qrels, root, q_topic), level)
    judged_offsets, judged_rel = parts[0], parts[1]
    own = np.full(len(root), -1, dtype=np.int64)
    own[root_rows] = np.arange(len(root_rows))
    kept = own[rows] >= 0
    n_topics = len(q_topic)
    topic = np.repeat(np.arange(n_topics), np.diff(judged_offsets))[kept]
    rels = judged_rel[kept]
    counts = np.bincount(topic, minlength=n_topics)
    num_rel = np.bincount(topic[rels >= level], minlength=n_topics)
    arrays = [
        offsets_of(counts),
        rels,
        num_rel.astype(np.int64),
        (counts - num_rel).astype(np.int64),
    ]
    return arrays, own[rows[kept]]


def _judged(
    q_rels: np.ndarray, q_offsets: np.ndarray, level: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per topic: the nonnegative grades descending (CSR), R and the judged nonrelevant; and
    the index in ``q_rels`` of each of those grades."""
    n_topics = len(q_offsets) - 1
    topic = np.repeat(np.arange(n_topics), np.diff(q_offsets))
    judged = np.flatnonzero(q_rels >= 0)
    rels, topic = q_rels[judged], topic[judged]
    order = np.lexsort((-rels, topic))
    rels, topic = rels[order], topic[order]
    counts = np.bincount(topic, minlength=n_topics)
    num_rel = np.bincount(topic[rels >= level], minlength=n_topics)
    return (
        offsets_of(counts),
        rels.astype(np.int64),
        num_rel.astype(np.int64),
        (counts - num_rel).astype(np.int64),
        judged[order],
    )
