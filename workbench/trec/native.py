"""The C accelerator (``_fastscan``, built with the package when a C compiler is there) of the
run reader and of the evaluation's inner loops: the same rows, values and errors as the numpy
code it stands in for, several times faster and in less memory.

``scan_run`` tokenises whole lines in C straight into the run's columns (see ``_fastscan.c``
for the contract); what it leaves (scores that are not plain decimals, ranks with a sign) is
finished here with the numpy reader's own helpers, so the two readers share every rule they
do not both implement.  The file is read into one reused buffer, in the numpy reader's
blocks.  :func:`repeated_hashes` finds the topics where a docno may repeat,
:func:`topic_tables` and :func:`lookup_rels` look a ranking's documents up in the qrels.
Without the compiled module, or with ``WORKBENCH_NATIVE=0``, :func:`available` is false and
numpy does it all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType
from typing import NamedTuple

import numpy as np

from workbench.trec.errors import WITHOUT_NUL, TrecFormatError
from workbench.trec.scan import Source, _layout_error, _open, atol, chunk_bytes, slow_floats

MIN_LINE_BYTES = 12  # six one-byte fields, five separators and a newline
CONTRACT_VERSION = 5  # the C module's VERSION this reader speaks to


def _load() -> ModuleType | None:
    """The compiled module, unless absent, of another contract version (a stale build), or
    turned off by ``WORKBENCH_NATIVE=0``."""
    if os.environ.get("WORKBENCH_NATIVE", "1") == "0":
        return None
    try:
        from workbench.trec import _fastscan
    except ImportError:
        return None
    return _fastscan if getattr(_fastscan, "VERSION", None) == CONTRACT_VERSION else None


_fastscan = _load()


def available() -> bool:
    return _fastscan is not None


class RunColumns(NamedTuple):
    """A run file's rows in file order: where each run of equal qids starts and its qid, the
    columns (docnos, hashes, scores, and ranks and lines when asked), the last line's tag."""

    seg_starts: list[int]
    seg_qids: list[bytes]
    columns: dict[str, np.ndarray]
    tag: bytes


class _Columns:
    """The output arrays, grown (by doubling) to hold at least a given number of rows; the
    docno column widened to the longest docno so far (so it ends as narrow as the numpy
    reader's).  Rows never written are never touched, so a generous first capacity costs
    address space, not memory."""

    def __init__(self, capacity: int, ranks: bool, line_numbers: bool) -> None:
        self.width = 1
        self.arrays: dict[str, np.ndarray] = {
            "docnos": np.empty(capacity, dtype="S1"),
            "hashes": np.empty(capacity, dtype=np.uint64),
            "scores": np.empty(capacity, dtype=np.float64),
        }
        if ranks:
            self.arrays["ranks"] = np.empty(capacity, dtype=np.int64)
        if line_numbers:
            self.arrays["lines"] = np.empty(capacity, dtype=np.int32)

    def reserve(self, rows: int, needed: int) -> None:
        capacity = len(self.arrays["scores"])
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity)
        for key, array in self.arrays.items():
            grown = np.empty(capacity, dtype=array.dtype)
            grown[:rows] = array[:rows]
            self.arrays[key] = grown

    def widen(self, rows: int, width: int) -> None:
        old = self.arrays["docnos"]
        wider = np.empty(len(old), dtype=f"S{width}")
        wider[:rows] = old[:rows]
        self.arrays["docnos"] = wider
        self.width = width


def read_columns(
    source: Source,
    path: str,
    *,
    ranks: bool,
    line_numbers: bool,
    size: int | None,
    plain: bool = False,
) -> RunColumns | None:
    """The lenient run reader's rows (``workbench trec-eval``'s reading), tokenised in C;
    ``size``: the file's size in bytes when known (the first capacity).

    ``plain`` (an import's strict reading): None as soon as a line is not in the plain form
    (``_fastscan.c``'s ``irregular``: six ASCII fields, a rank of digits, one tag), a score
    is not a plain decimal or the file is malformed: the caller then reads it with numpy,
    whose rules and errors are the strict reading's."""
    assert _fastscan is not None
    out = _Columns(size // MIN_LINE_BYTES + 1 if size else 1 << 16, ranks, line_numbers)
    seg_starts: list[int] = []
    seg_qids: list[bytes] = []
    rows = 0
    line_number = 1
    previous: bytes | None = None
    tag = b""
    for block in _blocks(source, size):
        offset = 0
        slow: list[tuple[int, bytes, int, int, int]] = []  # resolved after the whole block,
        while offset < len(block):  # so that its layout errors come first, as with numpy
            out.reserve(rows, rows + (len(block) - offset) // MIN_LINE_BYTES + 1)
            arrays = out.arrays
            (offset, n_lines, n_rows, wider, seg_rows, qids, slow_scores, slow_ranks, last_tag,
             error, irregular) = _fastscan.scan_run(
                block, offset, line_number, previous, arrays["docnos"], out.width,
                arrays["hashes"], arrays["scores"], arrays.get("ranks"), arrays.get("lines"), rows
            )  # fmt: skip
            if plain and (
                irregular
                or error is not None
                or slow_scores
                or slow_ranks
                or (last_tag is not None and tag and last_tag != tag)
            ):
                return None
            if error is not None:
                kind, number, start, end = error
                expected = WITHOUT_NUL if kind == "nul" else _layout_error(6, False, _LAYOUT)
                raise TrecFormatError.of_bytes(path, number, bytes(block[start:end]), expected)
            slow += [(rows + row, *rest) for row, *rest in slow_scores]
            for row, token in slow_ranks:
                arrays["ranks"][rows + row] = atol(token)
            seg_starts.extend(rows + row for row in seg_rows)
            seg_qids.extend(qids)
            previous = qids[-1] if qids else previous
            tag = last_tag if last_tag is not None else tag
            rows += n_rows
            line_number += n_lines
            if wider:
                out.widen(rows, wider)
        if slow:
            out.arrays["scores"][[row for row, *_ in slow]] = _slow_scores(path, block, slow)
    columns = {key: array[:rows] for key, array in out.arrays.items()}
    return RunColumns(seg_starts, seg_qids, columns, tag)


_LAYOUT = "qid Q0 docno rank score tag"


def _slow_scores(
    path: str, block: memoryview, slow: list[tuple[int, bytes, int, int, int]]
) -> np.ndarray:
    """The scores the C scanner left (not plain decimals), by the numpy reader's rule."""

    def error(i: int) -> TrecFormatError:
        _, _, number, start, end = slow[i]
        raw = bytes(block[start:end])
        return TrecFormatError.of_bytes(path, number, raw, "a number as field 5 (score)")

    return slow_floats(np.array([token for _, token, *_ in slow], dtype=bytes), error)


def _blocks(source: Source, file_size: int | None) -> Iterator[memoryview]:
    """Whole lines of the file, in the numpy reader's blocks (each read of
    :func:`chunk_bytes` bytes cut after its last newline), in one reused buffer (a new one
    only for a line longer than it, none larger than a file of known size needs); a last
    line without a newline gets one."""
    stream, owned = _open(source)
    size = chunk_bytes()
    enough = None if file_size is None else file_size + 1  # what a file of known size needs
    buffer = bytearray(size + 1 if enough is None else min(size + 1, enough))
    carry = 0
    try:
        while True:
            if len(buffer) < carry + size + 1 and (enough is None or len(buffer) < enough):
                grown = bytearray(carry + size + 1)  # views of the old one may still be held
                grown[:carry] = buffer[:carry]
                buffer = grown
            got = _read_into(stream, memoryview(buffer)[carry : min(carry + size, len(buffer) - 1)])
            if not got:
                break
            end = carry + got
            cut = buffer.rfind(b"\n", carry, end) + 1
            if cut:
                yield memoryview(buffer)[:cut]
                buffer[: end - cut] = buffer[cut:end]
                carry = end - cut
            else:
                carry = end
        if carry:
            buffer[carry : carry + 1] = b"\n"
            yield memoryview(buffer)[: carry + 1]
    finally:
        if owned:
            stream.close()


def _read_into(stream, view: memoryview) -> int:
    """Fill ``view`` from the stream as far as it goes (short only at the end)."""
    filled = 0
    readinto = getattr(stream, "readinto", None)
    while filled < len(view):
        if readinto is not None:
            got = readinto(view[filled:])
        else:
            data = stream.read(len(view) - filled)
            if isinstance(data, str):
                data = data.encode()
            got = len(data)
            view[filled : filled + got] = data
        if not got:
            break
        filled += got
    return filled


def repeated_hashes(hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """Per CSR segment of ``hashes``: whether a value occurs twice in it (None without C)."""
    if _fastscan is None:
        return None
    flags = _fastscan.repeated_hashes(
        np.ascontiguousarray(hashes, dtype=np.uint64), np.ascontiguousarray(offsets, np.int64)
    )
    return np.frombuffer(flags, dtype=np.bool_)


def topic_tables(hashes: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """One small hash table of docno hashes per qrels topic (see ``_fastscan.c``): (slots,
    starts); None without C."""
    if _fastscan is None:
        return None
    slots, starts = _fastscan.topic_tables(
        np.ascontiguousarray(hashes, dtype=np.uint64), np.ascontiguousarray(offsets, np.int64)
    )
    return np.frombuffer(slots, dtype=np.uint64), np.frombuffer(starts, dtype=np.int64)


def lookup_rels(
    tables: tuple[np.ndarray, np.ndarray],
    hashes: np.ndarray,
    docnos: np.ndarray,
    qrels_docnos: np.ndarray,
    grades: np.ndarray,
    q_topic: np.ndarray,
    offsets: np.ndarray,
    order: np.ndarray | None,
    first: int,
    last: int,
    rel: np.ndarray,
) -> None:
    """``workbench.metrics.ranked._ranked_rels``'s lookup of one block of topics in C, in the
    qrels' :func:`topic_tables`."""
    assert _fastscan is not None
    _fastscan.lookup_rels(
        *tables, hashes, docnos, docnos.dtype.itemsize, qrels_docnos, qrels_docnos.dtype.itemsize,
        np.ascontiguousarray(grades, np.int64), np.ascontiguousarray(q_topic, dtype=np.int32),
        np.ascontiguousarray(offsets, np.int64), order,
        0 if order is None else order.dtype.itemsize, rel, rel.dtype.itemsize, first, last,
    )  # fmt: skip
