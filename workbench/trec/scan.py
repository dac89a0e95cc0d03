"""Tokenising TREC-style text: large newline-terminated chunks, token boundaries from a
whitespace mask, fields gathered into fixed-width bytes arrays, numbers parsed vectorised.

Fields are separated by spaces, tabs or carriage returns; a line whose first field starts with
``#`` is a comment (a ``#`` inside a later field is data); blank lines are skipped.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NamedTuple, TextIO, cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from workbench.limits import at_most
from workbench.trec.errors import UTF8, WITHOUT_NUL, TrecFormatError

Source = str | os.PathLike | BinaryIO | TextIO  # a text stream must be an io.TextIOBase

_CHUNK_BYTES = 1 << 23
_HASH = ord("#")
_PADDING = bytes(64)


def chunk_bytes() -> int:
    """The size of each read of a file (a block of whole lines is cut from it)."""
    return _CHUNK_BYTES


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
    return cast(BinaryIO, source), False


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
    width: int = 0  # when every line has this many fields: token k of line i is i * width + k

    def bounds(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Start and end offsets of field k (0-based) of every line."""
        if self.width:  # strided views, no gather
            return self.starts[k :: self.width], self.ends[k :: self.width]
        tokens = self.first + k
        return self.starts[tokens], self.ends[tokens]


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
    # separators (space, \t to \r), with a virtual one before the chunk
    space = np.empty(n + 1, dtype=np.bool_)
    space[0] = True
    np.less_equal(body - np.uint8(9), 4, out=space[1:])
    space[1:] |= body == 32
    edges = np.flatnonzero(space[1:] != space[:-1])  # token starts and ends alternate
    starts = edges[0::2]
    ends = edges[1::2]
    newlines = _newlines(body, ends, width)
    nul = chunk.find(b"\0")
    if nul >= 0:
        i = int(np.searchsorted(newlines, nul))
        start = int(newlines[i - 1]) + 1 if i else 0
        raw = chunk[start : int(newlines[i])]
        raise TrecFormatError.of_bytes(path, first_line_number + i, raw, WITHOUT_NUL)
    n_lines = len(newlines)
    line_offsets = np.empty(n_lines, dtype=np.int64)
    line_offsets[0] = 0
    line_offsets[1:] = newlines[:-1] + 1
    numbers = np.arange(first_line_number, first_line_number + n_lines)
    if width and len(starts) == width * n_lines:
        line_starts = starts[::width]
        if (
            np.all(line_starts >= line_offsets)
            and np.all(ends[width - 1 :: width] <= newlines)
            and not np.any(buf[line_starts] == _HASH)
        ):
            counts = np.full(n_lines, width, dtype=np.int64)
            first = np.arange(0, len(starts), width)
            lines = _Lines(buf, numbers, counts, first, starts, ends, line_offsets, newlines, width)
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


def _newlines(body: np.ndarray, ends: np.ndarray, width: int) -> np.ndarray:
    """Offsets of the newlines; when each line's last field ends at its newline (the usual
    case: as many newlines as lines of ``width`` fields), they follow from the token ends."""
    n_newlines = int(np.count_nonzero(body == 10))
    if width and len(ends) == width * n_newlines:
        last = ends[width - 1 :: width]
        if np.all(body[last] == 10):
            return last.copy()
    return np.flatnonzero(body == 10)


def check_utf8(data: bytes, path: str, first_line_number: int = 1) -> None:
    """Refuse bytes that are not UTF-8, naming the line (data starts at that line number)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        start = data.rfind(b"\n", 0, error.start) + 1
        end = data.find(b"\n", error.start)
        number = first_line_number + data.count(b"\n", 0, error.start)
        raw = data[start : end if end >= 0 else len(data)]
        raise TrecFormatError.of_bytes(path, number, raw, UTF8) from None


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
    raw = lines.buf[lines.line_offsets[i] : lines.line_ends[i]].tobytes()
    return TrecFormatError.of_bytes(path, int(lines.line_numbers[i]), raw, expected)


def _columns(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens [starts, ends) of a zero-padded buf as a (width, n) uint8 array, zero-filled."""
    lengths = ends - starts
    width = max(int(lengths.max()) if len(lengths) else 1, 1)
    if width > len(_PADDING):
        buf = np.concatenate((buf, np.zeros(width, dtype=np.uint8)))
    if width > 4:  # wide tokens: copy each token's bytes at once (a row of a window view)
        tokens = sliding_window_view(buf, width)[starts]
        tokens *= np.arange(width) < lengths[:, None]
        return tokens.T
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
    return _columns(lines.buf, *lines.bounds(k))


def _field(lines: _Lines, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    if rows is None:
        return _gather(lines.buf, *lines.bounds(k))
    tokens = lines.first[rows] + k
    return _gather(lines.buf, lines.starts[tokens], lines.ends[tokens])


_INTEGER = re.compile(rb"[+-]?[0-9]+")
_POW10 = np.array([float(10**k) for k in range(23)])


def _fast_decimal(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, exact, has_dot) for tokens ``[+-]digits[.digits]``.

    value = mantissa / 10^k, correctly rounded (as strtod) when the mantissa has at most 15
    digits and k <= 22; other tokens (exponents, inf, junk) are not ``exact``.
    """
    columns = np.ascontiguousarray(columns)  # rows: one byte position of every token
    n = columns.shape[1]
    mantissa = np.zeros(n, dtype=np.int64)
    n_digits = np.zeros(n, dtype=np.int32)
    n_dots = np.zeros(n, dtype=np.int32)
    fraction = np.zeros(n, dtype=np.int32)
    bad = np.zeros(n, dtype=bool)
    negative = columns[0] == 45
    for j, column in enumerate(columns):
        value = column - np.uint8(48)  # uint8: the bytes below "0" wrap to above 9
        digit = value <= 9
        np.multiply(mantissa, 10, out=mantissa, where=digit)
        np.add(mantissa, value, out=mantissa, where=digit)
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
        slow = slow_floats(
            strings, lambda j: _fail(path, lines, int(rest[j]), f"{kind} as field {k + 1} ({what})")
        )
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


def slow_floats(strings: np.ndarray, fail: Callable[[int], TrecFormatError]) -> np.ndarray:
    """The numbers that are not plain decimals (exponents, inf, nan ...), as float64;
    ``fail(i)`` is the error for the first token ``i`` that is not a number."""
    try:
        return strings.astype(np.float64)
    except ValueError:
        for i, token in enumerate(strings):
            try:
                float(token)
            except ValueError:
                raise fail(i) from None
        raise


def atol(token: bytes) -> int:
    """C's ``atol`` of a rank: its leading ``[+-]digits`` (0 without), saturated to 64 bits."""
    digits = re.match(rb"[+-]?\d+", token)
    if not digits:
        return 0
    return max(-(2**63), min(int(digits.group()), 2**63 - 1))


def _concat(parts: list[np.ndarray], dtype: str = "S1") -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.concatenate(parts)


def _check_fields(lines: _Lines, path: str, n: int, exact: bool, layout: str) -> None:
    bad = lines.n_fields != n if exact else lines.n_fields < n
    if bad.any():
        raise _fail(path, lines, int(np.argmax(bad)), _layout_error(n, exact, layout))


def _layout_error(n: int, exact: bool, layout: str) -> str:
    return f"{'exactly' if exact else 'at least'} {n} fields ({layout})"


def _checked_scan(
    source: Source, path: str, layout: str, *, strict: bool, exact: bool
) -> Iterator[_Lines]:
    """The non-empty chunks of :func:`_scan` over lines of the fields ``layout`` names, their
    number checked (``exact``, else at least as many) and, when ``strict`` (imports), the bytes
    UTF-8 and each field at most :data:`MAX_FIELD_BYTES` long."""
    width = len(layout.split())
    for lines in _scan(source, width, path, utf8=strict):
        if not len(lines.n_fields):
            continue
        _check_fields(lines, path, width, exact, layout)
        if strict:
            _check_token_bytes(lines, path)
        yield lines


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
    starts, ends = lines.bounds(k)
    for i in np.flatnonzero(ends - starts > limit):
        if len(_decode([bytes(values[i])])[0]) > limit:
            raise _fail(path, lines, int(i), f"{at_most(what, limit)} as field {k + 1}")


def _decode(values: Iterable[bytes]) -> list[str]:
    return [v.decode("utf-8", "surrogateescape") for v in values]


def _encode(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


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


def _write_text(dest: Source, text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    if isinstance(dest, str | os.PathLike):
        with open(dest, "wb") as f:
            f.write(data)
    elif isinstance(dest, io.TextIOBase):
        dest.write(text)
    else:
        cast(BinaryIO, dest).write(data)


def text_lines(source: Source) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, text, fields) of each non-blank, non-comment line."""
    for lines in _scan(source):
        for i in range(len(lines.n_fields)):
            text = _line_text(lines, i)
            yield int(lines.line_numbers[i]), text, text.split()
