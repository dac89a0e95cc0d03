"""Qrels: ``qid iteration docno rel`` files read into a columnar :class:`Qrels`, and written."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import cached_property

import numpy as np

from workbench.limits import NO_LIMITS, IdLimits
from workbench.trec.errors import TrecFormatError
from workbench.trec.keys import (
    docno_hash,
    first_duplicate,
    group_keys,
    group_topics,
    offsets_of,
    segments_with_repeats,
)
from workbench.trec.scan import (
    Source,
    _check_lengths,
    _checked_scan,
    _concat,
    _decode,
    _duplicate_error,
    _encode,
    _field,
    _numbers,
    _source_name,
    _write_text,
)


class Qrels:
    """Relevance judgments: ``qid iteration docno rel`` entries in file order."""

    def __init__(
        self, qids: np.ndarray, iterations: np.ndarray, docnos: np.ndarray, rels: np.ndarray
    ) -> None:
        self._set(qids, iterations, docnos, rels, *group_topics(qids))

    def _set(
        self,
        qids: np.ndarray,
        iterations: np.ndarray,
        docnos: np.ndarray,
        rels: np.ndarray,
        topics: list[str],
        order: np.ndarray | None,
        offsets: np.ndarray,
    ) -> None:
        """The columns and their grouping (`keys.group_topics` of `qids`)."""
        self.qids = qids
        self.iterations = iterations
        self.docnos = docnos
        self.rels = rels
        self._topics, self.offsets = topics, offsets
        self._index = {q: i for i, q in enumerate(self._topics)}
        self._order = order
        self.grouped_docnos = docnos if order is None else docnos[order]
        self.grouped_rels = rels if order is None else rels[order]
        self.grouped_topic = np.repeat(np.arange(len(self._topics)), np.diff(self.offsets))
        self._lineage: tuple[Qrels, np.ndarray] | None = None

    def _kept(self, keep: np.ndarray) -> Qrels:
        """The grouped entries where `keep`, as grouped qrels (topics in this order, one
        left without entries gone): `Qrels` of those columns, without grouping them again."""
        counts = np.bincount(self.grouped_topic[keep], minlength=len(self._topics))
        present = np.flatnonzero(counts)
        kept = Qrels.__new__(Qrels)
        kept._set(
            self._grouped(self.qids)[keep],
            self._grouped(self.iterations)[keep],
            self.grouped_docnos[keep],
            self.grouped_rels[keep],
            [self._topics[t] for t in present.tolist()],
            None,
            offsets_of(counts[present]),
        )
        return kept

    @property
    def lineage(self) -> tuple[Qrels, np.ndarray] | None:
        """(root, rows) when these qrels were made from others by `select`, `without`,
        `as_derived` or `part_of` (of these, of their results ...): ``rows[i]`` is the
        root's grouped row of the same topic and docno as this grouped row i (each root row
        at most once; the grade is this one's, the root's but for `part_of`). The metric
        module ranks a run against the root's tables once for all such qrels
        (`metrics.ranked`). None for qrels made otherwise (read, from a dict)."""
        return self._lineage

    def _derived(self, rows: np.ndarray) -> tuple[Qrels, np.ndarray]:
        """(root, root rows) of the entries at these grouped `rows`."""
        if self._lineage is None:
            return self, rows
        root, parent_rows = self._lineage
        return root, parent_rows[rows]

    def topics(self) -> list[str]:
        return list(self._topics)

    @cached_property
    def grouped_hashes(self) -> np.ndarray:
        """:func:`docno_hash` of ``grouped_docnos`` (computed once: every run is matched
        against them)."""
        return docno_hash(self.grouped_docnos)

    @cached_property
    def judged_twice(self) -> frozenset[str]:
        """Topics where some docno (by hash) is judged twice; only ``read_qrels(
        check_duplicates=False)``, trec-eval's reading, lets such qrels through. None when
        these qrels derive from a root that has none (`lineage`: they hold some of its
        entries)."""
        if self._lineage is not None and not self._lineage[0].judged_twice:
            return frozenset()
        flags = segments_with_repeats(self.grouped_hashes, self.offsets)
        return frozenset(self._topics[t] for t in np.flatnonzero(flags).tolist())

    @property
    def topic_index(self) -> Mapping[str, int]:
        """qid -> its index in `topics` (the qrels' own mapping: read it, never change it)."""
        return self._index

    def __contains__(self, qid: str) -> bool:
        return qid in self._index

    def topic_slice(self, qid: str) -> slice:
        i = self._index[qid]
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def topic(self, qid: str) -> dict[str, int]:
        if qid not in self._index:
            return {}
        s = self.topic_slice(qid)
        return dict(
            zip(_decode(self.grouped_docnos[s]), self.grouped_rels[s].tolist(), strict=True)
        )

    def select(self, topics: Iterable[str]) -> Qrels:
        """The entries of `topics`, grouped in that order, each topic's in its order here (a
        topic without entries adds none): what `from_dict` of `{q: self.topic(q) for q in
        topics}` gives, by slicing instead of decoding and encoding every entry (these qrels
        themselves when that is every topic in their order and they are grouped; the docno
        hashes, when computed, carried over)."""
        chosen = [qid for qid in topics if qid in self._index]
        if self._order is None and chosen == self._topics:
            return self  # every topic, in this order, already grouped: the same entries
        slices = [self.topic_slice(qid) for qid in chosen]

        def take(grouped: np.ndarray) -> np.ndarray:
            return np.concatenate([grouped[s] for s in slices]) if slices else grouped[:0]

        positions = np.arange(len(self.grouped_rels))

        selected = Qrels(
            take(self._grouped(self.qids)),
            take(self._grouped(self.iterations)),
            take(self.grouped_docnos),
            take(self.grouped_rels),
        )
        if "grouped_hashes" in self.__dict__:  # selected is grouped as taken: rows align
            selected.__dict__["grouped_hashes"] = take(self.grouped_hashes)
        selected._lineage = self._derived(take(positions))
        return selected

    def judged_topics(self) -> list[str]:
        """The topics with some label of 0 or more (a topic holding only negative labels,
        pooled but never judged, is not judged), in the order of `topics`."""
        if not len(self.grouped_rels):
            return []
        tops = np.maximum.reduceat(self.grouped_rels, self.offsets[:-1])
        return [self._topics[t] for t in np.flatnonzero(tops >= 0).tolist()]

    def as_derived(self) -> Qrels:
        """The same entries as qrels derived from these (`lineage`: every row of these, or
        of their root): for qrels that many runs are evaluated against, again and again
        and in parts (a report's), so that the metric module probes each run once."""
        derived = Qrels(self.qids, self.iterations, self.docnos, self.rels)
        if "grouped_hashes" in self.__dict__:
            derived.__dict__["grouped_hashes"] = self.grouped_hashes
        derived._lineage = self._derived(np.arange(len(self.grouped_rels)))
        return derived

    def part_of(self, root: Qrels) -> Qrels:
        """These qrels with a `lineage` in `root` when each of their entries is one of the
        root's (same topic, same docno; the grade their own) and no docno is judged twice
        in a topic here; else these qrels themselves. For many qrels over the documents of
        one (each assessor's over the final qrels): the metric module probes a run in the
        root's tables once for all of them."""
        rows = np.empty(len(self.grouped_rels), dtype=np.int64)
        for qid in self._topics:
            if qid not in root._index:
                return self
            own, theirs = self.topic_slice(qid), root.topic_slice(qid)
            order = root._docno_order[theirs]
            names = root.grouped_docnos[order]
            wanted = self.grouped_docnos[own]
            at = np.minimum(np.searchsorted(names, wanted), max(len(names) - 1, 0))
            if not len(names) or not (names[at] == wanted).all():
                return self
            rows[own] = order[at]
        if len(np.unique(rows)) < len(rows):  # a docno judged twice here
            return self
        derived = self.as_derived()
        derived._lineage = root._derived(rows)
        return derived

    def without(self, removed: Mapping[str, Collection[str]]) -> Qrels:
        """These qrels less the docnos `removed[qid]` of each topic (a topic left without
        entries disappears), the rest in its order: a leave-one-out's reduced qrels, made
        by a mask instead of a dict per left-out run. Each removed docno is looked up in
        its topic's entries sorted by docno (`_docno_order`, sorted once per Qrels), so the
        cost is that of the removed docnos, not of every entry; the docno hashes, when
        computed, are carried over."""
        keep = np.ones(len(self.grouped_rels), dtype=bool)
        for qid, docnos in removed.items():
            if docnos and qid in self._index:
                s = self.topic_slice(qid)
                rows = self._docno_order[s]
                names = self.grouped_docnos[rows]
                gone = np.array([_encode(d) for d in docnos], dtype=bytes)
                first = np.searchsorted(names, gone, side="left")
                last = np.searchsorted(names, gone, side="right")  # a docno judged twice
                for lo, hi in zip(first.tolist(), last.tolist(), strict=True):
                    keep[rows[lo:hi]] = False
        reduced = self._kept(keep)
        if "grouped_hashes" in self.__dict__:  # reduced is grouped as given: rows align
            reduced.__dict__["grouped_hashes"] = self.grouped_hashes[keep]
        reduced._lineage = self._derived(np.flatnonzero(keep))
        return reduced

    @cached_property
    def _docno_order(self) -> np.ndarray:
        """Grouped rows sorted by topic, then docno (bytes order): topic i's rows sorted by
        docno occupy its own range offsets[i]:offsets[i + 1]."""
        return np.lexsort((self.grouped_docnos, self.grouped_topic))

    def _grouped(self, column: np.ndarray) -> np.ndarray:
        """An entry column in the grouped order of `grouped_docnos`."""
        return column if self._order is None else column[self._order]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {qid: self.topic(qid) for qid in self._topics}

    def entries(self) -> Iterator[tuple[str, str, str, int]]:
        qids, iters, docnos = _decode(self.qids), _decode(self.iterations), _decode(self.docnos)
        yield from zip(qids, iters, docnos, self.rels.tolist(), strict=True)

    def __len__(self) -> int:
        return len(self.rels)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, int]]) -> Qrels:
        qids: list[bytes] = []
        docnos: list[bytes] = []
        rels: list[int] = []
        for qid, docs in data.items():
            for docno, rel in docs.items():
                qids.append(_encode(str(qid)))
                docnos.append(_encode(str(docno)))
                rels.append(int(rel))
        empty = np.zeros(0, dtype="S1")
        return cls(
            np.array(qids, dtype=bytes) if qids else empty,
            np.full(len(qids), b"0", dtype="S1"),
            np.array(docnos, dtype=bytes) if docnos else empty,
            np.array(rels, dtype=np.int64),
        )


GRADE_BOUNDS = (-(2**31), 2**31 - 1)  # a stored grade is a 32-bit integer column


def read_qrels(
    source: Source,
    *,
    limits: IdLimits = NO_LIMITS,
    strict: bool = False,
    check_duplicates: bool = True,
) -> Qrels:
    """Parse qrels (exactly 4 fields ``qid iteration docno rel``; rel an integer).

    A (qid, docno) judged twice is an error naming its second line (unless
    ``check_duplicates`` is false: trec_eval only fails when it evaluates that topic), and so
    is a qid, iteration or docno longer than ``limits`` (by default any length).  ``strict``
    (imports): the bytes must be UTF-8, every grade must fit 32 bits (:data:`GRADE_BOUNDS`)
    and the file must hold a line.
    """
    path = _source_name(source)
    parts: list[tuple[np.ndarray, ...]] = []
    lines_seen: list[np.ndarray] = []
    bounds = GRADE_BOUNDS if strict else None
    for lines in _checked_scan(source, path, "qid iteration docno rel", strict=strict, exact=True):
        rels = _numbers(lines, path, 3, "relevance grade", integer=True, bounds=bounds)
        fields = (_field(lines, 0), _field(lines, 1), _field(lines, 2))
        for k, limit, what in (
            (0, limits.qid, "qid"),
            (1, limits.iteration, "iteration"),
            (2, limits.docno, "docno"),
        ):
            _check_lengths(lines, path, k, fields[k], limit, what)
        parts.append((*fields, rels))
        lines_seen.append(lines.line_numbers)
    qids = _concat([p[0] for p in parts])
    if strict and not len(qids):  # an import never takes an empty file (trec_eval: "Cannot read")
        raise TrecFormatError(path, 1, "", "qrels lines (qid iteration docno rel)")
    iterations = _concat([p[1] for p in parts])
    docnos = _concat([p[2] for p in parts])
    rels = _concat([p[3] for p in parts], "i8")
    if not check_duplicates:
        return Qrels(qids, iterations, docnos, rels)
    codes: dict[bytes, int] = {}
    groups = np.array([codes.setdefault(q, len(codes)) for q in qids], dtype=np.int64)
    dup = first_duplicate(
        lambda: group_keys(docno_hash(docnos), groups), docnos, lambda row: int(groups[row])
    )
    if dup is not None:
        line_number = int(_concat(lines_seen, "i8")[dup])
        qid = qids[dup].decode("utf-8", "surrogateescape")
        docno = docnos[dup].decode("utf-8", "surrogateescape")
        raise _duplicate_error(source, path, line_number, "qrels", qid, docno)
    return Qrels(qids, iterations, docnos, rels)


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]], dest: Source) -> None:
    """Write ``qid iteration docno rel`` lines in entry order."""
    if not isinstance(qrels, Qrels):
        qrels = Qrels.from_dict(qrels)
    text = "".join(f"{q} {it} {d} {r}\n" for q, it, d, r in qrels.entries())
    _write_text(dest, text)
