"""The ranked relevance of every evaluated topic, in CSR form (one home for trec_eval's setup).

For each evaluated topic, the run's lines are put in trec order (score descending, docno
descending), optionally filtered to judged documents (``-J``) and truncated (``-M``); each
ranked document gets its qrels value: the grade when judged, ``NONPOOL`` (-1) when absent
from the qrels, ``UNJUDGED`` (-2) when the qrels give it a negative value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from workbench.metrics.ranking import segment_trec_order
from workbench.trec import Qrels, Run, docno_hash, group_keys

NONPOOL = -1
UNJUDGED = -2


@dataclass
class Ranked:
    """Evaluated topics: ``rel[offsets[t]:offsets[t+1]]`` is topic t's ranking."""

    qids: list[str]
    offsets: np.ndarray
    rel: np.ndarray  # int64 qrels value of each ranked document (NONPOOL/UNJUDGED when < 0)
    num_rel: np.ndarray  # per topic: judged with rel >= level
    num_nonrel: np.ndarray  # per topic: judged with 0 <= rel < level
    judged_offsets: np.ndarray  # CSR over judged_rel
    judged_rel: np.ndarray  # per topic, the nonnegative qrels values, descending
    level: int
    n_docs_in_collection: int = 0

    @property
    def n_topics(self) -> int:
        return len(self.qids)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def topic(self) -> np.ndarray:
        """Topic index of each ranked row."""
        return np.repeat(np.arange(self.n_topics), self.num_ret)

    @cached_property
    def pos(self) -> np.ndarray:
        """1-based rank of each row within its topic."""
        return np.arange(len(self.rel)) - np.repeat(self.offsets[:-1], self.num_ret) + 1

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.level

    @cached_property
    def rel_so_far(self) -> np.ndarray:
        """Relevant documents at or above each row, within its topic."""
        return segment_cumsum(self.is_rel.astype(np.int64), self.offsets)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.per_topic_count(self.is_rel)

    def per_topic_count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.topic[mask], minlength=self.n_topics).astype(np.int64)

    def per_topic_sum(self, weights: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sums in row order (sequential, as trec_eval's loops add)."""
        if mask is not None:
            return np.bincount(self.topic[mask], weights=weights[mask], minlength=self.n_topics)
        return np.bincount(self.topic, weights=weights, minlength=self.n_topics)

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


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at each CSR segment."""
    total = np.cumsum(values)
    if not len(total):
        return total
    starts = offsets[:-1]
    before = np.where(starts > 0, total[np.maximum(starts - 1, 0)], 0)
    return total - np.repeat(before, np.diff(offsets))


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
    """Build :class:`Ranked` for ``qids`` (a topic absent from the run ranks nothing)."""
    run_index = {q: i for i, q in enumerate(run.topics())}
    which = np.array([run_index.get(q, -1) for q in qids], dtype=np.int64)
    rows, offsets = _csr_rows(run.offsets, which)
    whole = len(rows) == len(run.docnos) and _is_range(rows)
    docnos = run.docnos if whole else run.docnos[rows]
    scores = run.scores if whole else run.scores[rows]
    order = segment_trec_order(docnos, scores, offsets, float32=float32)
    q_rows, q_offsets = _csr_rows(qrels.offsets, _index_in(qrels, qids))
    hashes = run.docno_hashes if whole else run.docno_hashes[rows]
    rel = _lookup(
        qrels.grouped_docnos[q_rows],
        qrels.grouped_rels[q_rows],
        q_offsets,
        docnos,
        hashes,
        offsets,
    )
    if not _is_range(order):
        rel = rel[order]
    if judged_only:
        keep = rel >= 0
        rel = rel[keep]
        topic = np.repeat(np.arange(len(qids)), np.diff(offsets))
        offsets = _offsets(np.bincount(topic[keep], minlength=len(qids)))
    if max_results is not None:
        n = np.diff(offsets)
        kept = np.minimum(n, max(max_results, 0))
        pos = np.arange(len(rel)) - np.repeat(offsets[:-1], n)
        rel = rel[pos < np.repeat(kept, n)]
        offsets = _offsets(kept)
    judged_offsets, judged_rel, num_rel, num_nonrel = _judged(
        qrels.grouped_rels[q_rows], q_offsets, relevance_level
    )
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
    )


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _index_in(qrels: Qrels, qids: list[str]) -> np.ndarray:
    index = {q: i for i, q in enumerate(qrels.topics())}
    return np.array([index.get(q, -1) for q in qids], dtype=np.int64)


def _csr_rows(offsets: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the CSR segments ``which`` (-1: an empty segment), and their new offsets."""
    valid = which >= 0
    safe = np.where(valid, which, 0)
    lengths = np.where(valid, offsets[safe + 1] - offsets[safe], 0)
    new_offsets = _offsets(lengths)
    starts = np.where(valid, offsets[safe], 0)
    rows = np.arange(int(new_offsets[-1]), dtype=np.int64) + np.repeat(
        starts - new_offsets[:-1], lengths
    )
    return rows, new_offsets


def _is_range(order: np.ndarray) -> bool:
    return bool(len(order) == 0 or (order[0] == 0 and np.all(np.diff(order) == 1)))


def _lookup(
    q_docnos: np.ndarray,
    q_rels: np.ndarray,
    q_offsets: np.ndarray,
    docnos: np.ndarray,
    hashes: np.ndarray,
    offsets: np.ndarray,
) -> np.ndarray:
    """Qrels value of each run row (NONPOOL if absent, UNJUDGED if negative).

    A 64-bit hash of (topic, docno) in an open-addressing table of the (small) qrels, probed
    for all run rows at once; hits are verified on the exact bytes.
    """
    rel = np.full(len(docnos), NONPOOL, dtype=np.int64)
    if not len(docnos) or not len(q_docnos):
        return rel
    width = docnos.dtype.itemsize
    if q_docnos.dtype.itemsize > width:
        fits = np.char.str_len(q_docnos) <= width
    else:
        fits = np.ones(len(q_docnos), dtype=bool)
    q_topic = np.repeat(np.arange(len(q_offsets) - 1), np.diff(q_offsets))
    q_docnos, q_rels, q_topic = q_docnos[fits].astype(f"S{width}"), q_rels[fits], q_topic[fits]
    table = _HashTable(group_keys(docno_hash(q_docnos), q_topic))
    r_topic = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    found = table.find(group_keys(hashes, r_topic))
    hit_rows = np.flatnonzero(found >= 0)
    source = found[hit_rows]
    r_topic = np.searchsorted(offsets, hit_rows, side="right") - 1
    same = (q_docnos[source] == docnos[hit_rows]) & (q_topic[source] == r_topic)
    values = q_rels[source[same]]
    rel[hit_rows[same]] = np.where(values < 0, UNJUDGED, values)
    return rel


class _HashTable:
    """Open addressing with linear probing over uint64 keys, built and probed vectorised."""

    def __init__(self, keys: np.ndarray) -> None:
        size = 1 << max(int(4 * len(keys)).bit_length(), 4)
        self.mask = np.uint64(size - 1)
        self.keys = np.zeros(size, dtype=np.uint64)
        self.index = np.full(size, -1, dtype=np.int64)
        slots = keys & self.mask
        pending = np.arange(len(keys))
        while len(pending):
            s = slots[pending]
            free = self.index[s] == -1
            taken_slots, first = np.unique(s[free], return_index=True)
            winners = pending[free][first]
            self.index[taken_slots] = winners
            self.keys[taken_slots] = keys[winners]
            placed = np.zeros(len(keys), dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + np.uint64(1)) & self.mask

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Index of each key in the table's source array, -1 when absent."""
        result = np.full(len(keys), -1, dtype=np.int64)
        slot = keys & self.mask
        index = self.index[slot]
        hit = (index >= 0) & (self.keys[slot] == keys)
        result[hit] = index[hit]
        active = np.flatnonzero((index >= 0) & ~hit)
        while len(active):
            s = (slot[active] + np.uint64(1)) & self.mask
            slot[active] = s
            index = self.index[s]
            hit = (index >= 0) & (self.keys[s] == keys[active])
            result[active[hit]] = index[hit]
            active = active[(index >= 0) & ~hit]
        return result


def _judged(
    q_rels: np.ndarray, q_offsets: np.ndarray, level: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per topic: the nonnegative grades descending (CSR), R and the judged nonrelevant."""
    n_topics = len(q_offsets) - 1
    topic = np.repeat(np.arange(n_topics), np.diff(q_offsets))
    judged = q_rels >= 0
    rels, topic = q_rels[judged], topic[judged]
    order = np.lexsort((-rels, topic))
    rels, topic = rels[order], topic[order]
    counts = np.bincount(topic, minlength=n_topics)
    num_rel = np.bincount(topic[rels >= level], minlength=n_topics)
    return (
        _offsets(counts),
        rels.astype(np.int64),
        num_rel.astype(np.int64),
        (counts - num_rel).astype(np.int64),
    )
