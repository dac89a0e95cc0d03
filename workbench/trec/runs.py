"""Runs: ``qid Q0 docno rank score tag`` files read into a columnar :class:`Run`, and written.

:class:`Run` is the one shape of run data from the reader to the metric module: the readers
(:func:`read_run`, :func:`read_runs`; the C reader ``_fastscan`` and the numpy reader fill the
same columns), the store's blobs (``store.runs.load_run``), a campaign's loaded runs
(``services.evaluation_inputs.LoadedRun``) and ``{qid: {docno: score}}`` or DataFrame input
(``metrics.evaluation.as_run``) all give a ``Run``, and ``metrics.evaluate`` ranks it as it is.
Rows stay in file order; trec_eval's ranking order (:mod:`workbench.trec.order`) is applied
once, where a ranking is built (``metrics.ranked.rank_topics``, ``pooling.ranked_list``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import NamedTuple

import numpy as np

from workbench.limits import NO_LIMITS, IdLimits, at_most
from workbench.trec import native
from workbench.trec.errors import TrecFormatError
from workbench.trec.keys import (
    MIX,
    docno_hash,
    first_duplicate,
    group_segments,
    offsets_of,
    segment_rows,
    segments_with_repeats,
)
from workbench.trec.native import RunColumns
from workbench.trec.order import trec_order
from workbench.trec.scan import (
    _PADDING,
    MAX_FIELD_BYTES,
    Source,
    _as_strings,
    _check_lengths,
    _checked_scan,
    _decode,
    _duplicate_error,
    _encode,
    _fail,
    _field,
    _field_columns,
    _Lines,
    _nth_line,
    _numbers,
    _source_name,
    _write_text,
    atol,
)


class RunTopicLines(NamedTuple):
    docnos: list[str]
    scores: np.ndarray
    ranks: np.ndarray


class Run:
    """A run: per topic, its lines (docno, score, rank) in file order; columnar inside.

    ``docnos`` is an 'S' array, rows grouped by topic (``offsets`` is CSR over ``_topics``).
    """

    def __init__(
        self,
        topics: list[str],
        offsets: np.ndarray,
        docnos: np.ndarray,
        scores: np.ndarray,
        ranks: np.ndarray,
        tag: str,
        n_lines: int | None = None,
        docno_hashes: np.ndarray | None = None,
        repeated_topics: frozenset[str] | None = None,
    ) -> None:
        if docno_hashes is not None:
            self.__dict__["docno_hashes"] = docno_hashes
        if repeated_topics is not None:
            self.__dict__["repeated_topics"] = repeated_topics
        self._topics = topics
        self._index = {q: i for i, q in enumerate(topics)}
        self.offsets = offsets
        self.docnos = docnos
        self.scores = scores
        self.ranks = ranks
        self.tag = tag
        self.n_lines = len(docnos) if n_lines is None else n_lines

    def topics(self) -> list[str]:
        return list(self._topics)

    @property
    def topic_index(self) -> Mapping[str, int]:
        """qid -> its index in `topics` (the run' own mapping: read it, never change it)."""
        return self._index

    def __contains__(self, qid: str) -> bool:
        return qid in self._index

    @cached_property
    def docno_hashes(self) -> np.ndarray:
        """:func:`docno_hash` of every row (computed once; matching and duplicate checks)."""
        return docno_hash(self.docnos)

    @cached_property
    def repeated_topics(self) -> frozenset[str]:
        """Topics where some docno (by hash) appears twice (computed once; the metric
        module checks these exactly)."""
        flags = segments_with_repeats(self.docno_hashes, self.offsets)
        return frozenset(self._topics[t] for t in np.flatnonzero(flags).tolist())

    def topic_slice(self, qid: str) -> slice:
        i = self._index[qid]
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def select(self, qids: list[str]) -> Run:
        """The run's lines of ``qids``, topics in that order; a qid the run lacks becomes a
        topic without lines (an empty ranking)."""
        which = np.array([self._index.get(q, -1) for q in qids], dtype=np.int64)
        rows, offsets = segment_rows(self.offsets, which)
        known: frozenset[str] | None = self.__dict__.get("repeated_topics")
        return Run(
            list(qids),
            offsets,
            self.docnos[rows],
            self.scores[rows],
            self.ranks[rows],
            self.tag,
            docno_hashes=self.docno_hashes[rows],
            repeated_topics=None if known is None else known.intersection(qids),
        )

    def topic_lines(self, qid: str) -> RunTopicLines:
        s = self.topic_slice(qid)
        return RunTopicLines(_decode(self.docnos[s]), self.scores[s], self.ranks[s])

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for qid in self._topics:
            lines = self.topic_lines(qid)
            out[qid] = dict(zip(lines.docnos, lines.scores.tolist(), strict=True))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float]], tag: str = "run") -> Run:
        topics = [str(q) for q in data]
        docnos: list[bytes] = []
        scores: list[float] = []
        ranks: list[int] = []
        offsets = [0]
        for qid in data:
            docs = data[qid]
            docnos.extend(_encode(str(d)) for d in docs)
            scores.extend(float(s) for s in docs.values())
            ranks.extend(range(1, len(docs) + 1))
            offsets.append(len(docnos))
        return cls(
            topics,
            np.array(offsets, dtype=np.int64),
            np.array(docnos, dtype=bytes) if docnos else np.zeros(0, dtype="S1"),
            np.array(scores, dtype=np.float64),
            np.array(ranks, dtype=np.int64),
            tag,
        )


class _Column:
    """An output column filled chunk by chunk into one preallocated array (no join at the end).

    Grows by doubling when the estimate falls short, and re-casts once to a wider 'S' dtype
    when a later chunk holds longer strings.
    """

    def __init__(self, first: np.ndarray, capacity: int) -> None:
        self.data = np.empty(max(capacity, len(first)), dtype=first.dtype)
        self.size = 0
        self.append(first)

    def append(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if values.dtype.kind == "S" and values.dtype.itemsize > self.data.dtype.itemsize:
            self.data = self.data.astype(values.dtype)
        if end > len(self.data):
            grown = np.empty(max(end, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end] = values
        self.size = end

    def values(self) -> np.ndarray:
        return self.data[: self.size]


def _source_size(source: Source) -> int | None:
    if isinstance(source, str | os.PathLike) and os.fspath(source) != "-":
        return os.path.getsize(source)
    return None


def read_run(
    source: Source,
    *,
    name: str | None = None,
    limits: IdLimits = NO_LIMITS,
    check_duplicates: bool = True,
    ranks: bool = True,
) -> Run:
    """Parse a run (``qid Q0 docno rank score tag``; extra fields ignored, as trec_eval).

    The tag is that of the last line.  A docno twice in one topic is an error (unless
    ``check_duplicates`` is false: trec_eval only fails on the topics it evaluates), and so is
    a qid, docno or tag longer than ``limits`` (by default any length, as trec_eval).
    ``ranks=False``: the rank column, which evaluation ignores, is not read (``Run.ranks``
    are then 0), which saves time and memory on large runs.
    """
    path = name or _source_name(source)
    parsed = _read_run(
        source, path, limits, strict=False, ranks=ranks, line_numbers=check_duplicates
    )
    if check_duplicates:
        _check_run_duplicates(source, path, parsed.run, parsed.line_numbers)
    return parsed.run


def read_runs(
    source: Source,
    *,
    name: str | None = None,
    limits: IdLimits = NO_LIMITS,
    split_tags: bool = False,
) -> list[Run]:
    """Parse a run file for import, refusing whatever :func:`read_run` would let pass.

    Exactly 6 fields per line; the rank an integer that fits 64 bits; UTF-8 bytes; at least
    one line; one tag per file, unless ``split_tags``: then one run per tag, in the order
    the tags first appear (a docno may then repeat in a topic across tags, never within one).
    """
    path = name or _source_name(source)
    parsed = _read_run(source, path, limits, strict=True)
    run = parsed.run
    if not run.n_lines:
        raise TrecFormatError(path, 1, "", "run lines (qid Q0 docno rank score tag)")
    if len(parsed.tags) == 1:
        _check_run_duplicates(source, path, run, parsed.line_numbers)
        return [run]
    if not split_tags:
        other = parsed.tag_codes != 0
        line_number = int(parsed.line_numbers[other].min())
        first = int(parsed.line_numbers[~other].min())
        raise TrecFormatError(
            path,
            line_number,
            _nth_line(source, line_number),
            f"one run tag per file ({parsed.tags[0]!r}, as on line {first}; "
            "--split-tags imports one run per tag)",
        )
    runs = []
    topic_of = np.repeat(np.arange(len(run._topics)), np.diff(run.offsets))
    for code, tag in enumerate(parsed.tags):
        rows = np.flatnonzero(parsed.tag_codes == code)
        counts = np.bincount(topic_of[rows], minlength=len(run._topics))
        kept = np.flatnonzero(counts)
        part = Run(
            [run._topics[i] for i in kept],
            offsets_of(counts[kept]),
            run.docnos[rows],
            run.scores[rows],
            run.ranks[rows],
            tag,
            docno_hashes=run.docno_hashes[rows],
        )
        _check_run_duplicates(source, path, part, parsed.line_numbers[rows])
        runs.append(part)
    return runs


class _ParsedRun(NamedTuple):
    run: Run  # not yet checked for duplicates
    line_numbers: np.ndarray  # per row of the run (empty when not asked for)
    tags: list[str]  # distinct tags in order of appearance (strict reading only)
    tag_codes: np.ndarray  # per row, the index of its tag in ``tags`` (strict reading only)


def _read_run(
    source: Source,
    path: str,
    limits: IdLimits,
    strict: bool,
    ranks: bool = True,
    line_numbers: bool = True,
) -> _ParsedRun:
    size = _source_size(source)
    tag_codes: dict[bytes, int] = {}
    read: RunColumns | None = None
    if not strict and limits == NO_LIMITS and native.available():
        read = native.read_columns(source, path, ranks=ranks, line_numbers=line_numbers, size=size)
    elif strict and native.available() and _seekable(source):
        read = _plain_read(source, path, limits, line_numbers, size)
        if read is not None:
            tag_codes[read.tag] = 0
    if read is None:
        parts = _numpy_parts(source, path, limits, strict, ranks, line_numbers, tag_codes)
        read = _joined(parts, size)
    n_rows = len(read.columns["scores"]) if read.columns else 0
    empty = {
        "docnos": np.zeros(0, dtype="S1"),
        "hashes": np.zeros(0, dtype=np.uint64),
        "scores": np.zeros(0),
        "ranks": np.zeros(0, dtype=np.int64),
        "lines": np.zeros(0, dtype=np.int32),
        "tags": np.zeros(0, dtype=np.int32),
    }
    kept = {key: read.columns.get(key, empty[key]) for key in empty}
    topics, order, offsets = group_segments(read.seg_starts, read.seg_qids, n_rows)
    if order is not None:
        kept = {key: column[order] if len(column) else column for key, column in kept.items()}
    tags = _decode(tag_codes)
    run_tag = _decode([read.tag])[0]
    if strict and tags:
        run_tag = tags[0] if len(tags) == 1 else run_tag
    # unread ranks: zeros from calloc, so no memory is touched until they are
    has_ranks = "ranks" in read.columns or not n_rows
    rank_column = kept["ranks"] if has_ranks else np.zeros(n_rows, np.int64)
    run = Run(
        topics,
        offsets,
        kept["docnos"],
        kept["scores"],
        rank_column,
        run_tag,
        docno_hashes=kept["hashes"],
    )
    return _ParsedRun(run, kept["lines"], tags, kept["tags"])


def _seekable(source: Source) -> bool:
    """Whether the source can be read twice (a file by name): the plain C reading of an
    import may give way to the numpy one."""
    return isinstance(source, str | os.PathLike) and os.fspath(source) != "-"


def _plain_read(
    source: Source, path: str, limits: IdLimits, line_numbers: bool, size: int | None
) -> RunColumns | None:
    """An import's strict reading in C when the file is plain (see ``native.read_columns``)
    and its ids within ``limits`` and MAX_FIELD_BYTES (ASCII: a byte is a character); None
    when the numpy reader must read it (and refuse what it refuses)."""
    read = native.read_columns(
        source, path, ranks=True, line_numbers=line_numbers, size=size, plain=True
    )
    if read is None or not len(read.columns["scores"]):
        return None
    longest = (
        (limits.qid, max(map(len, read.seg_qids))),
        (limits.docno, read.columns["docnos"].dtype.itemsize),
        (limits.tag, len(read.tag)),
    )
    for limit, length in longest:
        if length > MAX_FIELD_BYTES or (limit is not None and length > limit):
            return None
    return read


class _Part(NamedTuple):
    """One chunk's rows: where new runs of equal qids start (rows within the part) and their
    qids, the columns, the chunk's size in bytes and its last line's tag."""

    seg_starts: list[int]
    seg_qids: list[bytes]
    columns: dict[str, np.ndarray]
    chunk_bytes: int
    tag: bytes


def _joined(parts: Iterator[_Part], size: int | None) -> RunColumns:
    """The parts' columns end to end (one preallocated array each, sized from the first part
    and the file's ``size``)."""
    columns: dict[str, _Column] = {}
    seg_starts: list[int] = []
    seg_qids: list[bytes] = []
    n_rows = 0
    tag = b""
    for part in parts:
        seg_starts.extend(start + n_rows for start in part.seg_starts)
        seg_qids.extend(part.seg_qids)
        n = len(part.columns["scores"])
        n_rows += n
        if not columns:
            estimate = 2 * n
            if size is not None:
                estimate = int(size * n / part.chunk_bytes * 1.02) + 16
            columns = {key: _Column(values, estimate) for key, values in part.columns.items()}
        else:
            for key, values in part.columns.items():
                columns[key].append(values)
        tag = part.tag
    return RunColumns(
        seg_starts, seg_qids, {key: column.values() for key, column in columns.items()}, tag
    )


def _numpy_parts(
    source: Source,
    path: str,
    limits: IdLimits,
    strict: bool,
    ranks: bool,
    line_numbers: bool,
    tag_codes: dict[bytes, int],
) -> Iterator[_Part]:
    """The run's parts tokenised with numpy (every reading mode; ``tag_codes`` gains the tags
    of a strict reading)."""
    previous: bytes | None = None
    last: _Lines | None = None
    layout = "qid Q0 docno rank score tag"
    for lines in _checked_scan(source, path, layout, strict=strict, exact=strict):
        qids = _field(lines, 0)
        _check_lengths(lines, path, 0, qids, limits.qid, "qid")
        starts = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        if bytes(qids[0]) != previous:
            starts = np.concatenate(([0], starts))
        previous = bytes(qids[-1])
        docnos = _field(lines, 2)
        _check_lengths(lines, path, 2, docnos, limits.docno, "docno")
        chunk = {
            "docnos": docnos,
            "hashes": docno_hash(docnos),
            "scores": _numbers(lines, path, 4, "score"),
        }
        if strict:
            chunk["ranks"] = _numbers(lines, path, 3, "rank", integer=True)
        elif ranks:
            chunk["ranks"] = _ranks(lines)
        if line_numbers:
            chunk["lines"] = lines.line_numbers.astype(np.int32)
        if strict:
            chunk["tags"] = _tag_codes(lines, path, limits, tag_codes)
        final = np.array([len(lines.n_fields) - 1])
        yield _Part(
            starts.tolist(),
            [bytes(q) for q in qids[starts]],
            chunk,
            len(lines.buf) - len(_PADDING),
            bytes(_field(lines, 5, final)[0]),
        )
        last = lines
    if last is not None and limits.tag is not None:
        final_row = len(last.n_fields) - 1
        tag = _decode(_field(last, 5, np.array([final_row])))[0]
        if len(tag) > limits.tag:
            raise _fail(path, last, final_row, f"{at_most('run tag', limits.tag)} as field 6")


def _tag_codes(lines: _Lines, path: str, limits: IdLimits, codes: dict[bytes, int]) -> np.ndarray:
    """The index of each line's tag (field 6) in ``codes``, which gains the chunk's new tags."""
    tags = _field(lines, 5)
    first = bytes(tags[0])
    if list(codes) in ([], [first]) and np.all(tags == tags[0]):
        # one tag in the chunk, the file's only one so far (the usual file): no sort
        _check_lengths(lines, path, 5, tags, limits.tag, "run tag")
        codes.setdefault(first, 0)
        return np.zeros(len(tags), dtype=np.int32)
    _check_lengths(lines, path, 5, tags, limits.tag, "run tag")
    distinct, inverse = np.unique(tags, return_inverse=True)
    first_rows = np.full(len(distinct), len(tags))
    np.minimum.at(first_rows, inverse, np.arange(len(tags)))
    for k in np.argsort(first_rows, kind="stable"):
        codes.setdefault(bytes(distinct[k]), len(codes))
    mapping = np.array([codes[bytes(t)] for t in distinct], dtype=np.int32)
    return mapping[inverse.ravel()]


def _check_run_duplicates(source: Source, path: str, run: Run, line_numbers: np.ndarray) -> None:
    """A docno twice in one topic of ``run`` is an error naming the second line."""
    offsets, topics, hashes, docnos = run.offsets, run._topics, run.docno_hashes, run.docnos

    def keys() -> np.ndarray:
        out = np.repeat(np.arange(len(topics), dtype=np.uint64) * MIX, np.diff(offsets))
        out ^= hashes
        return out

    dup = first_duplicate(keys, docnos, lambda row: _segment_of(offsets, row))
    if dup is not None:
        docno = docnos[dup].decode("utf-8", "surrogateescape")
        qid = topics[_segment_of(offsets, dup)]
        raise _duplicate_error(source, path, int(line_numbers[dup]), "run", qid, docno)


def _segment_of(offsets: np.ndarray, row: int) -> int:
    return int(np.searchsorted(offsets, row, side="right")) - 1


def _ranks(lines: _Lines) -> np.ndarray:
    """The rank column (ignored by evaluation): its leading digits, as atol (else 0)."""
    columns = _field_columns(lines, 3)
    out = np.zeros(columns.shape[1], dtype=np.int64)
    going = np.ones(columns.shape[1], dtype=bool)
    for column in columns:
        value = column.astype(np.int64) - 48
        going &= (value >= 0) & (value <= 9)
        out = np.where(going, out * 10 + value, out)
    signed = (columns[0] == 45) | (columns[0] == 43)
    for i in np.flatnonzero(signed):
        out[i] = atol(_as_strings(columns[:, [i]])[0])
    return out


def write_run(
    run: Run | Mapping[str, Mapping[str, float]], dest: Source, *, tag: str = "run"
) -> None:
    """Write ``qid Q0 docno rank score tag`` lines, ranked in trec_eval order per topic.

    Scores are written with ``repr`` so they read back to the same float64.
    """
    if not isinstance(run, Run):
        run = Run.from_dict(run, tag=tag)
    out: list[str] = []
    for qid in run.topics():
        s = run.topic_slice(qid)
        docnos = run.docnos[s]
        scores = run.scores[s]
        for rank, i in enumerate(trec_order(docnos, scores), 1):
            docno = docnos[i].decode("utf-8", "surrogateescape")
            out.append(f"{qid} Q0 {docno} {rank} {float(scores[i])!r} {tag}\n")
    _write_text(dest, "".join(out))
