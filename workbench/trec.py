"""TREC file formats: runs, qrels (and trec_eval's qrels_jg / prefs variants), topics.

Parsing follows trec_eval 10: fields are separated by spaces, tabs or carriage returns; a line
whose first field starts with ``#`` is a comment (a ``#`` inside a later field is data); blank
lines are skipped in runs.  Ids are byte strings compared with ``strcmp``; they are never assumed
to be numbers.  Every malformed line raises :class:`TrecFormatError` and nothing else.

Runs are parsed with vectorised numpy over large chunks of the file (token boundaries from a
whitespace mask), so a 7-million-line run reads in a few seconds and little memory.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, BinaryIO, NamedTuple

import numpy as np

from workbench.limits import NO_LIMITS, IdLimits, at_most

Source = str | os.PathLike | BinaryIO

_CHUNK_BYTES = 1 << 23
_HASH = ord("#")
_PADDING = bytes(64)
WITHOUT_NUL = "text without NUL characters"  # what a line holding a NUL should have been


class TrecFormatError(ValueError):
    """A malformed line (or file, ``line_number`` 0) in a TREC-format input."""

    def __init__(self, path: str, line_number: int, line: str, expected: str) -> None:
        self.path = path
        self.line_number = line_number
        self.line = line
        self.expected = expected
        super().__init__(f"{path}:{line_number}: expected {expected}; got {line!r}")


# --------------------------------------------------------------------------- tokenising


def _source_name(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _open(source: Source) -> tuple[BinaryIO, bool]:
    """(binary stream, whether we opened it); ``"-"`` is standard input."""
    if isinstance(source, str | os.PathLike):
        if os.fspath(source) == "-":
            return sys.stdin.buffer, False
        return open(source, "rb"), True
    if isinstance(source, io.TextIOBase):
        return io.BytesIO(source.read().encode()), False
    return source, False


def _chunks(source: Source) -> Iterator[bytes]:
    """The file's bytes in large pieces, each ending with a newline."""
    stream, owned = _open(source)
    try:
        pending: list[bytes] = []  # blocks of a line longer than a block (joined once: linear)
        while True:
            block = stream.read(_CHUNK_BYTES)
            if isinstance(block, str):
                block = block.encode()
            if not block:
                break
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                pending.append(block)
                continue
            yield b"".join((*pending, block[:cut]))
            pending = [block[cut:]]
        if any(pending):
            yield b"".join((*pending, b"\n"))
    finally:
        if owned:
            stream.close()


class _Lines(NamedTuple):
    """The non-blank, non-comment lines of one chunk, tokenised."""

    buf: np.ndarray  # uint8 view of the chunk
    line_numbers: np.ndarray  # 1-based, per kept line
    n_fields: np.ndarray  # per kept line
    first: np.ndarray  # index of the line's first token in starts/ends
    starts: np.ndarray
    ends: np.ndarray
    line_offsets: np.ndarray  # byte offset of each kept line's start
    line_ends: np.ndarray  # byte offset of each kept line's newline


def _tokenise(
    chunk: bytes, first_line_number: int, width: int = 0, path: str = "<stream>"
) -> tuple[_Lines, int]:
    """Token boundaries of a newline-terminated chunk; returns (lines, number of lines).

    ``width``: the expected number of fields; when every line has exactly that many (the
    usual case), per-line token indices follow from a reshape instead of a search.
    """
    n = len(chunk)
    buf = np.frombuffer(chunk + _PADDING, dtype=np.uint8)
    body = buf[:n]
    space = np.empty(n + 1, dtype=bool)
    space[0] = True  # a virtual blank before the chunk
    np.logical_or(body == 32, (body >= 9) & (body <= 13), out=space[1:])
    edges = np.flatnonzero(space[1:] != space[:-1])  # token starts and ends alternate
    starts = edges[0::2]
    ends = edges[1::2]
    newlines = np.flatnonzero(body == 10)
    nul = np.flatnonzero(body == 0)
    if len(nul):
        i = int(np.searchsorted(newlines, nul[0]))
        start = int(newlines[i - 1]) + 1 if i else 0
        text = chunk[start : int(newlines[i])].decode("utf-8", "replace")
        raise TrecFormatError(path, first_line_number + i, text, WITHOUT_NUL)
    n_lines = len(newlines)
    line_offsets = np.empty(n_lines, dtype=np.int64)
    line_offsets[0] = 0
    line_offsets[1:] = newlines[:-1] + 1
    numbers = np.arange(first_line_number, first_line_number + n_lines)
    if width and len(starts) == width * n_lines:
        first = np.arange(0, len(starts), width)
        if (
            np.all(starts[first] >= line_offsets)
            and np.all(ends[first + width - 1] <= newlines)
            and not np.any(buf[starts[first]] == _HASH)
        ):
            counts = np.full(n_lines, width, dtype=np.int64)
            lines = _Lines(buf, numbers, counts, first, starts, ends, line_offsets, newlines)
            return lines, n_lines
    tokens_before = np.searchsorted(starts, newlines)
    counts = np.diff(tokens_before, prepend=0)
    first = tokens_before - counts
    has_tokens = counts > 0
    comment = np.zeros(n_lines, dtype=bool)
    comment[has_tokens] = buf[starts[first[has_tokens]]] == _HASH
    keep = np.flatnonzero(has_tokens & ~comment)
    lines = _Lines(
        buf,
        numbers[keep],
        counts[keep],
        first[keep],
        starts,
        ends,
        line_offsets[keep],
        newlines[keep],
    )
    return lines, n_lines


UTF8 = "UTF-8 text"  # what a line holding bytes that are not UTF-8 should have been


def check_utf8(data: bytes, path: str, first_line_number: int = 1) -> None:
    """Refuse bytes that are not UTF-8, naming the line (data starts at that line number)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        start = data.rfind(b"\n", 0, error.start) + 1
        end = data.find(b"\n", error.start)
        text = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
        number = first_line_number + data.count(b"\n", 0, error.start)
        raise TrecFormatError(path, number, text.rstrip("\r"), UTF8) from None


def _scan(
    source: Source, width: int = 0, path: str | None = None, *, utf8: bool = False
) -> Iterator[_Lines]:
    """Tokenised chunks; ``utf8``: refuse a line that is not UTF-8 (chunks end at newlines,
    so no character is cut)."""
    path = path or _source_name(source)
    line_number = 1
    for chunk in _chunks(source):
        if utf8:
            check_utf8(chunk, path, line_number)
        lines, n = _tokenise(chunk, line_number, width, path)
        line_number += n
        yield lines


def _line_text(lines: _Lines, i: int) -> str:
    raw = lines.buf[lines.line_offsets[i] : lines.line_ends[i]].tobytes()
    return raw.decode("utf-8", "replace").rstrip("\r")


def _fail(path: str, lines: _Lines, i: int, expected: str) -> TrecFormatError:
    return TrecFormatError(path, int(lines.line_numbers[i]), _line_text(lines, i), expected)


def _columns(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens [starts, ends) of a zero-padded buf as a (width, n) uint8 array, zero-filled."""
    lengths = ends - starts
    width = max(int(lengths.max()) if len(lengths) else 1, 1)
    if width > len(_PADDING):
        buf = np.concatenate((buf, np.zeros(width, dtype=np.uint8)))
    columns = np.empty((width, len(starts)), dtype=np.uint8)
    for j in range(width):
        column = buf[starts + j]
        column[lengths <= j] = 0
        columns[j] = column
    return columns


def _as_strings(columns: np.ndarray) -> np.ndarray:
    """(width, n) uint8 columns as an 'S' array."""
    return np.ascontiguousarray(columns.T).view(f"S{columns.shape[0]}").ravel()


def _gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The tokens [starts, ends) of buf as a fixed-width bytes ('S') array."""
    return _as_strings(_columns(buf, starts, ends))


def _field_columns(lines: _Lines, k: int) -> np.ndarray:
    tokens = lines.first + k
    return _columns(lines.buf, lines.starts[tokens], lines.ends[tokens])


def _field(lines: _Lines, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    tokens = lines.first + k if rows is None else lines.first[rows] + k
    return _gather(lines.buf, lines.starts[tokens], lines.ends[tokens])


_INTEGER = re.compile(rb"[+-]?[0-9]+")
_POW10 = np.array([float(10**k) for k in range(23)])


def _fast_decimal(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, exact, has_dot) for tokens ``[+-]digits[.digits]``.

    value = mantissa / 10^k, correctly rounded (as strtod) when the mantissa has at most 15
    digits and k <= 22; other tokens (exponents, inf, junk) are not ``exact``.
    """
    n = columns.shape[1]
    mantissa = np.zeros(n, dtype=np.int64)
    n_digits = np.zeros(n, dtype=np.int64)
    n_dots = np.zeros(n, dtype=np.int64)
    fraction = np.zeros(n, dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    negative = columns[0] == 45
    for j, column in enumerate(columns):
        value = column.astype(np.int64) - 48
        digit = (value >= 0) & (value <= 9)
        mantissa = np.where(digit, mantissa * 10 + value, mantissa)
        n_digits += digit
        dot = column == 46
        n_dots += dot
        fraction += digit & (n_dots > 0)
        allowed = digit | dot | (column == 0)
        if j == 0:
            allowed |= negative | (column == 43)
        bad |= ~allowed
    exact = ~bad & (n_dots <= 1) & (n_digits >= 1) & (n_digits <= 15) & (fraction <= 22)
    values = mantissa.astype(np.float64) / _POW10[np.minimum(fraction, 22)]
    values[negative] *= -1.0
    return values, exact, n_dots > 0


def _numbers(
    lines: _Lines,
    path: str,
    k: int,
    what: str,
    integer: bool = False,
    bounds: tuple[int, int] | None = None,
) -> np.ndarray:
    """Field k of every line as float64 (int64 when ``integer``), strictly numeric.

    ``bounds`` (integers only): the lowest and highest value accepted (else int64's range).
    """
    columns = _field_columns(lines, k)
    values, exact, has_dot = _fast_decimal(columns)
    low, high = bounds or (-(2**63), 2**63 - 1)
    if integer:
        exact &= ~has_dot
        if bounds is not None:
            exact &= (values >= low) & (values <= high)
    if exact.all():
        return values.astype(np.int64) if integer else values
    rest = np.flatnonzero(~exact)
    strings = _as_strings(columns[:, rest])
    kind, dtype = ("an integer", np.int64) if integer else ("a number", np.float64)
    if not integer:
        try:
            slow = strings.astype(dtype)
        except ValueError:
            for i, token in zip(rest, strings, strict=True):
                try:
                    float(token)
                except ValueError:
                    raise _fail(path, lines, int(i), f"{kind} as field {k + 1} ({what})") from None
            raise
    else:
        parsed: list[int] = []
        for i, token in zip(rest, strings, strict=True):
            if not _INTEGER.fullmatch(bytes(token)):
                raise _fail(path, lines, int(i), f"{kind} as field {k + 1} ({what})")
            digits = token.lstrip(b"+-").lstrip(b"0")
            value = int(token) if len(digits) <= 20 else high + 1  # no long conversion
            if not low <= value <= high:
                expected = f"an integer from {low} to {high} as field {k + 1} ({what})"
                raise _fail(path, lines, int(i), expected)
            parsed.append(value)
        slow = np.array(parsed, dtype=np.int64)
    values[rest] = 0  # inexact ones (maybe out of range) are replaced next
    out = values.astype(dtype)
    out[rest] = slow
    return out


def _concat(parts: list[np.ndarray], dtype: str = "S1") -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.concatenate(parts)


def _check_fields(lines: _Lines, path: str, n: int, exact: bool, layout: str) -> None:
    bad = lines.n_fields != n if exact else lines.n_fields < n
    if bad.any():
        i = int(np.argmax(bad))
        count = "exactly" if exact else "at least"
        raise _fail(path, lines, i, f"{count} {n} fields ({layout})")


MAX_FIELD_BYTES = 1024  # on import: above every store limit (4 bytes a character at most)


def _check_token_bytes(lines: _Lines, path: str, limit: int = MAX_FIELD_BYTES) -> None:
    """Refuse a field longer than ``limit`` bytes before any is gathered: a chunk's fields
    become fixed-width arrays, so one long field would cost its length times the lines."""
    long = np.flatnonzero(lines.ends - lines.starts > limit)
    if len(long):
        line = int(np.searchsorted(lines.first, long[0], side="right")) - 1
        field = int(long[0] - lines.first[line]) + 1
        raise _fail(path, lines, line, f"a field of at most {limit} bytes as field {field}")


def _check_lengths(
    lines: _Lines, path: str, k: int, values: np.ndarray, limit: int | None, what: str
) -> None:
    """Refuse the first value of field k longer than ``limit`` characters.

    Free when no token has more than ``limit`` bytes (the 'S' width); otherwise only tokens
    with more bytes than the limit are decoded (UTF-8: characters <= bytes).
    """
    if limit is None or values.dtype.itemsize <= limit:
        return
    tokens = lines.first + k
    for i in np.flatnonzero(lines.ends[tokens] - lines.starts[tokens] > limit):
        if len(_decode([bytes(values[i])])[0]) > limit:
            raise _fail(path, lines, int(i), f"{at_most(what, limit)} as field {k + 1}")


def docno_hash(docnos: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each bytes string of an 'S' array (vectorised FNV-style mixing).

    Independent of the array's width, so hashes of runs and qrels compare directly.
    """
    width = docnos.dtype.itemsize
    padded_width = -(-width // 8) * 8
    if padded_width != width:
        docnos = docnos.astype(f"S{padded_width}")
    words = docnos.view(np.uint64).reshape(len(docnos), padded_width // 8)
    h = np.full(len(docnos), 0xCBF29CE484222325, dtype=np.uint64)
    for j in range(words.shape[1]):
        word = words[:, j]
        mixed = h ^ word
        mixed *= np.uint64(0x100000001B3)
        mixed ^= mixed >> np.uint64(29)
        # an all-zero word is padding (docnos hold no NUL), so the hash ignores the width
        h = mixed if j == 0 else np.where(word != 0, mixed, h)
    return h


MIX = np.uint64(0x9E3779B97F4A7C15)


def _starts_of_runs(ordered: np.ndarray) -> np.ndarray:
    """Indices where a sorted array takes a new value."""
    if not len(ordered):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))


def group_keys(hashes: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """64-bit keys of (group, docno) pairs from docno hashes and integer group ids."""
    return hashes ^ (groups.astype(np.uint64) * MIX)


class KeyTable:
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
            candidates, wanted = pending[free], s[free]
            by_slot = np.argsort(wanted, kind="stable")  # np.unique would import numpy.ma
            first = by_slot[_starts_of_runs(wanted[by_slot])]
            taken_slots, winners = wanted[first], candidates[first]
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


def _first_duplicate(
    keys: Callable[[], np.ndarray], docnos: np.ndarray, group_of: Callable[[int], int]
) -> int | None:
    """Index of the first row whose (group, docno) appeared on an earlier row, or None.

    ``keys()`` gives each row's (group, docno) key; it is called again (rather than kept)
    only when two keys collide, to spare memory on large runs.
    """
    if len(docnos) < 2:
        return None
    ordered = keys()
    ordered.sort()
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    del ordered
    if not len(repeated):
        return None
    seen: set[tuple[int, bytes]] = set()
    for row in np.flatnonzero(np.isin(keys(), repeated)).tolist():
        pair = (group_of(row), bytes(docnos[row]))
        if pair in seen:
            return row
        seen.add(pair)
    return None


def _decode(values: Iterable[bytes]) -> list[str]:
    return [v.decode("utf-8", "surrogateescape") for v in values]


def _encode(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


def _group(qids: np.ndarray) -> tuple[list[str], np.ndarray | None, np.ndarray]:
    """(distinct qids in first-appearance order, stable order grouping rows or None when
    already grouped, CSR offsets)."""
    if not len(qids):
        return [], None, np.zeros(1, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(qids[1:] != qids[:-1]) + 1))
    return _group_segments(starts.tolist(), [bytes(q) for q in qids[starts]], len(qids))


def _group_segments(
    seg_starts: list[int], seg_qids: list[bytes], n: int
) -> tuple[list[str], np.ndarray | None, np.ndarray]:
    """:func:`_group` from the runs of equal qids: their first rows and qids."""
    codes: dict[bytes, int] = {}
    seg_codes = np.array([codes.setdefault(q, len(codes)) for q in seg_qids], dtype=np.int64)
    names = _decode(codes)
    seg_lengths = np.diff(np.array([*seg_starts, n], dtype=np.int64))
    if len(codes) == len(seg_qids):
        return names, None, _offsets(seg_lengths)
    row_codes = np.repeat(seg_codes, seg_lengths)
    order = np.argsort(row_codes, kind="stable")
    return names, order, _offsets(np.bincount(row_codes, minlength=len(codes)))


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


# --------------------------------------------------------------------------- runs


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
    ) -> None:
        if docno_hashes is not None:
            self.__dict__["docno_hashes"] = docno_hashes
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

    def __contains__(self, qid: str) -> bool:
        return qid in self._index

    @cached_property
    def docno_hashes(self) -> np.ndarray:
        """:func:`docno_hash` of every row (computed once; matching and duplicate checks)."""
        return docno_hash(self.docnos)

    def topic_slice(self, qid: str) -> slice:
        i = self._index[qid]
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

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
) -> Run:
    """Parse a run (``qid Q0 docno rank score tag``; extra fields ignored, as trec_eval).

    The tag is that of the last line.  A docno twice in one topic is an error (unless
    ``check_duplicates`` is false: trec_eval only fails on the topics it evaluates), and so is
    a qid, docno or tag longer than ``limits`` (by default any length, as trec_eval).
    """
    path = name or _source_name(source)
    parsed = _read_run(source, path, limits, strict=False)
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
            _offsets(counts[kept]),
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
    line_numbers: np.ndarray  # per row of the run
    tags: list[str]  # distinct tags in order of appearance (strict reading only)
    tag_codes: np.ndarray  # per row, the index of its tag in ``tags`` (strict reading only)


def _read_run(source: Source, path: str, limits: IdLimits, strict: bool) -> _ParsedRun:
    total_bytes = _source_size(source)
    columns: dict[str, _Column] = {}
    seg_starts: list[int] = []
    seg_qids: list[bytes] = []
    tag_codes: dict[bytes, int] = {}
    n_rows = 0
    previous: bytes | None = None
    last: _Lines | None = None
    for lines in _scan(source, 6, path, utf8=strict):
        if not len(lines.n_fields):
            continue
        _check_fields(lines, path, 6, strict, "qid Q0 docno rank score tag")
        if strict:
            _check_token_bytes(lines, path)
        qids = _field(lines, 0)
        _check_lengths(lines, path, 0, qids, limits.qid, "qid")
        starts = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        if bytes(qids[0]) != previous:
            starts = np.concatenate(([0], starts))
        seg_starts.extend((starts + n_rows).tolist())
        seg_qids.extend(bytes(q) for q in qids[starts])
        previous = bytes(qids[-1])
        n_rows += len(qids)
        docnos = _field(lines, 2)
        _check_lengths(lines, path, 2, docnos, limits.docno, "docno")
        chunk = {
            "docnos": docnos,
            "hashes": docno_hash(docnos),
            "scores": _numbers(lines, path, 4, "score"),
            "ranks": _numbers(lines, path, 3, "rank", integer=True) if strict else _ranks(lines),
            "lines": lines.line_numbers.astype(np.int32),
        }
        if strict:
            chunk["tags"] = _tag_codes(lines, path, limits, tag_codes)
        if not columns:
            chunk_bytes = len(lines.buf) - len(_PADDING)
            estimate = 2 * len(qids)
            if total_bytes is not None:
                estimate = int(total_bytes * len(qids) / chunk_bytes * 1.02) + 16
            columns = {key: _Column(values, estimate) for key, values in chunk.items()}
        else:
            for key, values in chunk.items():
                columns[key].append(values)
        last = lines
    tag = ""
    if last is not None:
        final = len(last.n_fields) - 1
        tag = _decode(_field(last, 5, np.array([final])))[0]
        if limits.tag is not None and len(tag) > limits.tag:
            raise _fail(path, last, final, f"{at_most('run tag', limits.tag)} as field 6")
    empty = {
        "docnos": np.zeros(0, dtype="S1"),
        "hashes": np.zeros(0, dtype=np.uint64),
        "scores": np.zeros(0),
        "ranks": np.zeros(0, dtype=np.int64),
        "lines": np.zeros(0, dtype=np.int32),
        "tags": np.zeros(0, dtype=np.int32),
    }
    kept: dict[str, np.ndarray] = {
        key: columns[key].values() if key in columns else empty[key] for key in empty
    }
    topics, order, offsets = _group_segments(seg_starts, seg_qids, n_rows)
    if order is not None:
        kept = {key: column[order] if len(column) else column for key, column in kept.items()}
    tags = _decode(tag_codes)
    if strict and tags:
        tag = tags[0] if len(tags) == 1 else tag
    run = Run(
        topics,
        offsets,
        kept["docnos"],
        kept["scores"],
        kept["ranks"],
        tag,
        docno_hashes=kept["hashes"],
    )
    return _ParsedRun(run, kept["lines"], tags, kept["tags"])


def _tag_codes(lines: _Lines, path: str, limits: IdLimits, codes: dict[bytes, int]) -> np.ndarray:
    """The index of each line's tag (field 6) in ``codes``, which gains the chunk's new tags."""
    tags = _field(lines, 5)
    if len(codes) == 1 and np.all(tags == next(iter(codes))):
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

    dup = _first_duplicate(keys, docnos, lambda row: _segment_of(offsets, row))
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
    negative = columns[0] == 45
    if negative.any() or (columns[0] == 43).any():
        for i in np.flatnonzero(negative | (columns[0] == 43)):
            digits = re.match(rb"[+-]?\d+", _as_strings(columns[:, [i]])[0])
            out[i] = int(digits.group()) if digits else 0
    return out


def _duplicate_error(
    source: Source, path: str, line_number: int, kind: str, qid: str, docno: str
) -> TrecFormatError:
    text = _nth_line(source, line_number) or f"{qid} ... {docno} ..."
    if kind == "run":
        expected = f"each docno at most once per topic (docno {docno!r} repeats in topic {qid!r})"
    else:
        expected = f"one judgment per (qid, docno) (topic {qid!r}, docno {docno!r} repeats)"
    return TrecFormatError(path, line_number, text, expected)


def _nth_line(source: Source, line_number: int) -> str:
    """Text of a line, re-reading a path (streams were consumed: the text is then unknown)."""
    if isinstance(source, str | os.PathLike) and os.fspath(source) != "-":
        with open(source, "rb") as f:
            for i, raw in enumerate(f, 1):
                if i == line_number:
                    return raw.decode("utf-8", "replace").rstrip("\r\n")
    return ""


def write_run(
    run: Run | Mapping[str, Mapping[str, float]], dest: Source, *, tag: str = "run"
) -> None:
    """Write ``qid Q0 docno rank score tag`` lines, ranked in trec_eval order per topic.

    Scores are written with ``repr`` so they read back to the same float64.
    """
    from workbench.metrics.ranking import trec_order

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


def _write_text(dest: Source, text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    if isinstance(dest, str | os.PathLike):
        with open(dest, "wb") as f:
            f.write(data)
    elif isinstance(dest, io.TextIOBase):
        dest.write(text)
    else:
        dest.write(data)


# --------------------------------------------------------------------------- qrels


class Qrels:
    """Relevance judgments: ``qid iteration docno rel`` entries in file order."""

    def __init__(
        self, qids: np.ndarray, iterations: np.ndarray, docnos: np.ndarray, rels: np.ndarray
    ) -> None:
        self.qids = qids
        self.iterations = iterations
        self.docnos = docnos
        self.rels = rels
        self._topics, order, self.offsets = _group(qids)
        self._index = {q: i for i, q in enumerate(self._topics)}
        self.grouped_docnos = docnos if order is None else docnos[order]
        self.grouped_rels = rels if order is None else rels[order]
        self.grouped_topic = np.repeat(np.arange(len(self._topics)), np.diff(self.offsets))

    @cached_property
    def match_table(self) -> KeyTable:
        """(topic index, docno) keys of the grouped entries, for matching run rows."""
        return KeyTable(group_keys(docno_hash(self.grouped_docnos), self.grouped_topic))

    def topics(self) -> list[str]:
        return list(self._topics)

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


def read_qrels(source: Source, *, limits: IdLimits = NO_LIMITS, strict: bool = False) -> Qrels:
    """Parse qrels (exactly 4 fields ``qid iteration docno rel``; rel an integer).

    A (qid, docno) judged twice is an error, as in trec_eval, and so is a qid, iteration or
    docno longer than ``limits`` (by default any length).  ``strict`` (imports): the bytes
    must be UTF-8 and every grade must fit 32 bits (:data:`GRADE_BOUNDS`).
    """
    path = _source_name(source)
    parts: list[tuple[np.ndarray, ...]] = []
    lines_seen: list[np.ndarray] = []
    bounds = GRADE_BOUNDS if strict else None
    for lines in _scan(source, 4, path, utf8=strict):
        if not len(lines.n_fields):
            continue
        _check_fields(lines, path, 4, True, "qid iteration docno rel")
        if strict:
            _check_token_bytes(lines, path)
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
    iterations = _concat([p[1] for p in parts])
    docnos = _concat([p[2] for p in parts])
    rels = _concat([p[3] for p in parts], "i8")
    codes: dict[bytes, int] = {}
    groups = np.array([codes.setdefault(q, len(codes)) for q in qids], dtype=np.int64)
    dup = _first_duplicate(
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


# --------------------------------------------------------------------------- -R variants


@dataclass(frozen=True)
class JudgmentGroupLine:
    """qrels_jg line: ``qid jg docno rel`` (field 2 is the judgment group)."""

    qid: str
    jg: str
    docno: str
    rel: int


@dataclass(frozen=True)
class PrefsLine:
    """prefs line: ``qid jg jsg docno rel`` (rel is a float preference value)."""

    qid: str
    jg: str
    jsg: str
    docno: str
    rel: float


def text_lines(source: Source) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, text, fields) of each non-blank, non-comment line."""
    for lines in _scan(source):
        for i in range(len(lines.n_fields)):
            text = _line_text(lines, i)
            yield int(lines.line_numbers[i]), text, text.split()


def read_qrels_jg(source: Source) -> list[JudgmentGroupLine]:
    path = _source_name(source)
    out: list[JudgmentGroupLine] = []
    for number, text, fields in text_lines(source):
        if len(fields) != 4:
            raise TrecFormatError(path, number, text, "exactly 4 fields (qid jg docno rel)")
        try:
            rel = int(fields[3])
        except ValueError:
            raise TrecFormatError(path, number, text, "an integer as field 4 (rel)") from None
        out.append(JudgmentGroupLine(fields[0], fields[1], fields[2], rel))
    return out


def read_prefs(source: Source) -> list[PrefsLine]:
    path = _source_name(source)
    out: list[PrefsLine] = []
    for number, text, fields in text_lines(source):
        if len(fields) != 5:
            raise TrecFormatError(path, number, text, "exactly 5 fields (qid jg jsg docno rel)")
        try:
            rel = float(fields[4])
        except ValueError:
            raise TrecFormatError(path, number, text, "a number as field 5 (rel)") from None
        out.append(PrefsLine(fields[0], fields[1], fields[2], fields[3], rel))
    return out


# --------------------------------------------------------------------------- topics


@dataclass(frozen=True)
class TopicStatement:
    qid: str
    title: str
    description: str = ""
    narrative: str = ""
    extra: dict = field(default_factory=dict)


_TOPIC_FIELDS = (b"num", b"title", b"desc", b"narr")
_LABELS = ("number:", "description:", "narrative:", "topic:")
TSV_HEADERS = ({"qid", "id", "query_id", "topic", "num"}, {"title", "query", "text"})


def read_topics(
    source: Source,
    *,
    format: str | None = None,
    limits: IdLimits = NO_LIMITS,
    notes: list[str] | None = None,
) -> list[TopicStatement]:
    """Parse topics: TREC ``<top>`` SGML, TSV ``qid<TAB>title`` or JSONL objects.

    JSONL objects need ``qid`` (or ``id``/``query_id``, a string or an integer) and ``title``
    (or ``query``/``text``, a string); ``description``/``narrative`` are optional strings and
    other keys go to ``extra``.  Bad input is an error naming its line: bytes that are not
    UTF-8, a qid twice in the file, a qid longer than ``limits.qid``, an unclosed ``<top>``.
    A first TSV line naming the columns (``qid<TAB>title``, names from :data:`TSV_HEADERS`)
    is skipped, and said so in ``notes`` when given; one whose qid is such a name and whose
    title is not is refused rather than guessed at.  Time is linear in the input on any bytes.
    """
    path = _source_name(source)
    stream, owned = _open(source)
    try:
        data = stream.read()
    finally:
        if owned:
            stream.close()
    if isinstance(data, str):
        data = data.encode()
    check_utf8(data, path)
    if b"\0" in data:
        at = data.index(b"\0")
        number, line = _line_at(data, at)
        raise TrecFormatError(path, number, line, WITHOUT_NUL)
    fmt = format or _guess_topic_format(data)
    readers = {"trec": _read_trec_topics, "tsv": _read_tsv_topics, "jsonl": _read_jsonl_topics}
    if fmt not in readers:
        raise ValueError(f"unknown topic format {fmt!r} (expected trec, tsv or jsonl)")
    topics: list[TopicStatement] = []
    first_line: dict[str, int] = {}
    for number, line, topic in readers[fmt](data, path, notes):
        if limits.qid is not None and len(topic.qid) > limits.qid:
            raise TrecFormatError(path, number, line, at_most("qid", limits.qid))
        if topic.qid in first_line:
            expected = f"each qid once (qid {topic.qid!r} is also on line {first_line[topic.qid]})"
            raise TrecFormatError(path, number, line, expected)
        first_line[topic.qid] = number
        topics.append(topic)
    return topics


def _guess_topic_format(data: bytes) -> str:
    head = data.lstrip()[:1]
    if head == b"<":
        return "trec"
    if head == b"{":
        return "jsonl"
    return "tsv"


def _line_number_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


NumberedTopic = tuple[int, str, TopicStatement]  # (line number, line text, topic)


def _line_at(data: bytes, offset: int) -> tuple[int, str]:
    """(line number, text) of the line holding byte ``offset``."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    text = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
    return _line_number_at(data, offset), text.rstrip("\r")


def find_elements(
    lower: bytes, name: bytes, start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int]]:
    """(open, content start, content end) of each ``<name>...</name>`` in ``lower[start:end]``
    (the text already lower-cased, ``name`` too); the last one may be unclosed: then its
    content end is -1 and the search stops.  Linear: each byte is looked at a bounded number
    of times, whatever the input.
    """
    end = len(lower) if end is None else end
    opener, closer = b"<" + name + b">", b"</" + name + b">"
    at = lower.find(opener, start, end)
    while at >= 0:
        body = at + len(opener)
        close = lower.find(closer, body, end)
        yield at, body, close
        if close < 0:
            return
        at = lower.find(opener, close + len(closer), end)


def strip_markup(text: str) -> str:
    """Text without its ``<...>`` tags (a ``<`` never closed is kept), in linear time."""
    out: list[str] = []
    at = 0
    while True:
        opener = text.find("<", at)
        if opener < 0:
            break
        close = text.find(">", opener + 1)
        if close < 0:
            break
        if close == opener + 1:  # "<>" is text
            out.append(text[at : close + 1])
        else:
            out.append(text[at:opener])
        at = close + 1
    out.append(text[at:])
    return "".join(out)


def _read_trec_topics(data: bytes, path: str, notes: list[str] | None) -> Iterator[NumberedTopic]:
    lower = data.lower()
    found = False
    for at, body, close in find_elements(lower, b"top"):
        if close < 0:
            number, line = _line_at(data, at)
            raise TrecFormatError(path, number, line, "</top> closing this topic")
        found = True
        parts, num_at = _topic_fields(data, lower, body, close)
        qid = parts.get("num", "")
        if not qid:
            number, line = _line_at(data, at)
            raise TrecFormatError(path, number, line, "a <num> Number: with a topic id")
        statement = TopicStatement(
            qid, parts.get("title", ""), parts.get("desc", ""), parts.get("narr", "")
        )
        yield (*_line_at(data, num_at if num_at >= 0 else at), statement)
    if not found and data.strip():
        first = data.strip().splitlines()[0].decode("utf-8", "replace")
        raise TrecFormatError(path, 1, first, "TREC topics (<top> ... </top>)")


def _topic_fields(data: bytes, lower: bytes, start: int, end: int) -> tuple[dict[str, str], int]:
    """The <num>, <title>, <desc>, <narr> fields of one topic body data[start:end] (each runs
    to the next field tag, closing tags and labels like "Number:" dropped), and where <num> is.
    """
    tags: list[tuple[int, bytes]] = []
    for name in _TOPIC_FIELDS:
        opener = b"<" + name + b">"
        at = lower.find(opener, start, end)
        while at >= 0:
            tags.append((at, name))
            at = lower.find(opener, at + len(opener), end)
    tags.sort()
    parts: dict[str, str] = {}
    num_at = -1
    for k, (at, name) in enumerate(tags):
        stop = tags[k + 1][0] if k + 1 < len(tags) else end
        text = strip_markup(data[at + len(name) + 2 : stop].decode("utf-8")).strip()
        for label in _LABELS:
            if text[: len(label)].lower() == label:
                text = text[len(label) :]
                break
        parts[name.decode()] = " ".join(text.split())
        if name == b"num":
            num_at = at
    return parts, num_at


def _read_tsv_topics(data: bytes, path: str, notes: list[str] | None) -> Iterator[NumberedTopic]:
    first = True
    for number, raw in enumerate(data.decode("utf-8").splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        qid, sep, title = line.partition("\t")
        if not sep or not qid.strip():
            raise TrecFormatError(path, number, line, "qid<TAB>title")
        if first and qid.strip().lower() in TSV_HEADERS[0]:
            if title.strip().lower() not in TSV_HEADERS[1]:
                expected = "a topic, or a header naming the columns qid<TAB>title"
                raise TrecFormatError(path, number, line, expected)
            if notes is not None:
                notes.append(f"{path}:{number}: header line {line!r} skipped")
            first = False
            continue
        first = False
        yield number, line, TopicStatement(qid.strip(), title.strip())


def has_nul(value: object) -> bool:
    """Whether a decoded JSON value holds a NUL character in any string."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def json_object(line: str, path: str, number: int) -> dict[str, Any]:
    """One JSONL line as an object, or a TrecFormatError (bad JSON, nested too deep, NUL)."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise TrecFormatError(path, number, line, f"a JSON object ({error.msg})") from None
    except RecursionError:
        raise TrecFormatError(path, number, line, "a JSON object nested less deep") from None
    if not isinstance(obj, dict):
        raise TrecFormatError(path, number, line, "a JSON object")
    if ("\x00" in line or "\\u0000" in line) and has_nul(obj):  # a NUL, raw or escaped
        raise TrecFormatError(path, number, line, WITHOUT_NUL)
    return obj


def json_field(
    obj: dict[str, Any],
    keys: tuple[str, ...],
    path: str,
    number: int,
    line: str,
    *,
    ids: bool = False,
    required: str = "",
) -> str | None:
    """The first of ``keys`` present in a JSONL object, as a string; None when absent or null
    (an error saying ``required`` is expected, when given).  A value must be a string
    (``ids``: or an integer, not a boolean); anything else is an error naming the key and
    the type found.
    """
    key = value = None
    for key in keys:
        if key in obj:
            value = obj[key]
            break
    if type(value) is str:
        return value
    if value is None:
        if required:
            raise TrecFormatError(path, number, line, required)
        return None
    if isinstance(value, str) or (ids and isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    kind = "a string or an integer" if ids else "a string"
    expected = f"{kind} as {key!r} (not {_json_type(value)})"
    raise TrecFormatError(path, number, line, expected)


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "an array"}
    return names.get(type(value), "an object")


_TOPIC_KEYS = (("qid", "id", "query_id"), ("title", "query", "text"))


def _read_jsonl_topics(data: bytes, path: str, notes: list[str] | None) -> Iterator[NumberedTopic]:
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        obj = json_object(line, path, number)
        needed = 'an object with "qid" and "title"'
        qid = json_field(obj, _TOPIC_KEYS[0], path, number, line, ids=True, required=needed)
        title = json_field(obj, _TOPIC_KEYS[1], path, number, line, required=needed)
        if not qid:
            raise TrecFormatError(path, number, line, 'a non-empty "qid"')
        description = json_field(obj, ("description",), path, number, line)
        narrative = json_field(obj, ("narrative",), path, number, line)
        known = {*_TOPIC_KEYS[0], *_TOPIC_KEYS[1], "description", "narrative"}
        statement = TopicStatement(
            qid,
            title or "",
            description or "",
            narrative or "",
            {k: v for k, v in obj.items() if k not in known},
        )
        yield number, line, statement
