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
from workbench.trec import Qrels, Run, docno_hash

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
    pieces = []
    counts = []
    for qid in qids:
        if qid in run:
            s = run.topic_slice(qid)
            pieces.append(np.arange(s.start, s.stop))
            counts.append(s.stop - s.start)
        else:
            counts.append(0)
    rows = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    whole = len(rows) == len(run.docnos) and _is_range(rows)
    docnos = run.docnos if whole else run.docnos[rows]
    scores = run.scores if whole else run.scores[rows]
    order = segment_trec_order(docnos, scores, offsets, float32=float32)
    if not _is_range(order):
        docnos = docnos[order]
    rel = _lookup(qrels, qids, docnos, offsets)
    if judged_only:
        keep = rel >= 0
        rel = rel[keep]
        offsets = np.concatenate(
            (
                [0],
                np.cumsum(
                    np.bincount(
                        np.repeat(np.arange(len(qids)), np.diff(offsets))[keep], minlength=len(qids)
                    )
                ),
            )
        ).astype(np.int64)
    if max_results is not None:
        n = np.diff(offsets)
        kept = np.minimum(n, max(max_results, 0))
        pos = np.arange(len(rel)) - np.repeat(offsets[:-1], n)
        rel = rel[pos < np.repeat(kept, n)]
        offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    judged_offsets, judged_rel, num_rel, num_nonrel = _judged(qrels, qids, relevance_level)
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


def _is_range(order: np.ndarray) -> bool:
    return bool(len(order) == 0 or (order[0] == 0 and np.all(np.diff(order) == 1)))


def _lookup(qrels: Qrels, qids: list[str], docnos: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Qrels value of each ranked docno (NONPOOL if absent, UNJUDGED if negative)."""
    rel = np.full(len(docnos), NONPOOL, dtype=np.int64)
    if not len(docnos):
        return rel
    width = docnos.dtype.itemsize
    q_docnos, q_rels, q_topic = [], [], []
    for t, qid in enumerate(qids):
        if qid not in qrels:
            continue
        s = qrels.topic_slice(qid)
        d = qrels.grouped_docnos[s]
        q_docnos.append(d)
        q_rels.append(qrels.grouped_rels[s])
        q_topic.append(np.full(len(d), t, dtype=np.int64))
    if not q_docnos:
        return rel
    qd = np.concatenate(q_docnos)
    qr = np.concatenate(q_rels)
    qt = np.concatenate(q_topic)
    fits = np.char.str_len(qd) <= width if qd.dtype.itemsize > width else np.ones(len(qd), bool)
    qd, qr, qt = qd[fits].astype(f"S{width}"), qr[fits], qt[fits]
    mix = np.uint64(0x9E3779B97F4A7C15)
    q_keys = docno_hash(qd) ^ (qt.astype(np.uint64) * mix)
    order = np.argsort(q_keys)
    q_keys = q_keys[order]
    r_topic = np.repeat(np.arange(len(qids)), np.diff(offsets))
    r_keys = docno_hash(docnos) ^ (r_topic.astype(np.uint64) * mix)
    at = np.searchsorted(q_keys, r_keys)
    at[at == len(q_keys)] = 0
    hit = q_keys[at] == r_keys
    hit_rows = np.flatnonzero(hit)
    source = order[at[hit_rows]]
    same = (qd[source] == docnos[hit_rows]) & (qt[source] == r_topic[hit_rows])
    values = qr[source[same]]
    rel[hit_rows[same]] = np.where(values < 0, UNJUDGED, values)
    return rel


def _judged(
    qrels: Qrels, qids: list[str], level: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    parts, counts, num_rel, num_nonrel = [], [], [], []
    for qid in qids:
        if qid in qrels:
            r = qrels.grouped_rels[qrels.topic_slice(qid)]
            r = -np.sort(-r[r >= 0])
        else:
            r = np.zeros(0, dtype=np.int64)
        parts.append(r)
        counts.append(len(r))
        num_rel.append(int(np.count_nonzero(r >= level)))
        num_nonrel.append(int(np.count_nonzero(r < level)))
    judged = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return (
        np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        judged.astype(np.int64),
        np.array(num_rel, dtype=np.int64),
        np.array(num_nonrel, dtype=np.int64),
    )
