"""Document sources: JSONL and TREC `<DOC>` SGML, read as a stream (one document at a time).

JSONL: one object per line, `{"docno": ..., "title": ..., "text": ..., ...}`; docno (a string or
an integer) is required, title and text (strings) default to "", every other key goes to `extra`.
TREC SGML: `<DOC> <DOCNO>id</DOCNO> ... <TEXT>...</TEXT> </DOC>`; the title is the first of
HEADLINE, TITLE, HEAD, HL; the text is every TEXT section joined by a blank line.
Files ending in .gz are decompressed on the fly. Bad input raises `workbench.trec.TrecFormatError`
naming the file, the line and what was expected: bytes that are not UTF-8, a NUL character,
a value of the wrong JSON type, a document larger than `SizeLimits.document_bytes`, a .gz that
is corrupt, truncated or expands beyond `SizeLimits`, and (when `limits` asks) a docno longer
than `limits.docno`.  Every reader is a scanner: its time is linear in the input on any bytes.
"""

from __future__ import annotations

import gzip
import html
import io
import os
import re
import zlib
from collections.abc import Generator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from workbench.limits import NO_LIMITS, IdLimits, at_most
from workbench.trec import (
    UTF8,
    WITHOUT_NUL,
    TrecFormatError,
    find_elements,
    json_field,
    json_object,
    strip_markup,
)

FORMATS = ("jsonl", "trec")
TITLE_TAGS = ("HEADLINE", "TITLE", "HEAD", "HL")
MIB = 1 << 20


@dataclass(frozen=True)
class SizeLimits:
    """Bounds on one document file (bytes after decompression).

    document_bytes: the largest document (a JSONL line; an SGML <DOC> ... </DOC>).
    decompressed_bytes: the most a .gz file may expand to.
    gzip_ratio: the most a .gz may expand per compressed byte, once past `RATIO_GRACE` bytes
    (real text compresses 3-10x; a gzip bomb about 1000x).
    """

    document_bytes: int = 16 * MIB
    decompressed_bytes: int = 8 << 30
    gzip_ratio: int = 30

    @classmethod
    def from_env(cls, env: os._Environ[str] | dict[str, str] = os.environ) -> SizeLimits:
        """The limits, each overridable by `WORKBENCH_MAX_DOCUMENT_BYTES`,
        `WORKBENCH_MAX_DECOMPRESSED_BYTES` and `WORKBENCH_MAX_GZIP_RATIO`."""
        default = cls()
        values = {}
        for name, variable in ENV_VARIABLES.items():
            text = env.get(variable, "").strip()
            if not text:
                values[name] = getattr(default, name)
                continue
            if not (text.isascii() and text.isdigit()) or int(text) < 1:
                raise ValueError(f"{variable} must be a positive integer; got {text!r}")
            values[name] = int(text)
        return cls(**values)


ENV_VARIABLES = {
    "document_bytes": "WORKBENCH_MAX_DOCUMENT_BYTES",
    "decompressed_bytes": "WORKBENCH_MAX_DECOMPRESSED_BYTES",
    "gzip_ratio": "WORKBENCH_MAX_GZIP_RATIO",
}
RATIO_GRACE = 16 * MIB  # a small .gz may expand more than gzip_ratio: only its time is at stake


@dataclass(frozen=True)
class SourceDocument:
    docno: str
    title: str = ""
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def read_documents(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    limits: IdLimits = NO_LIMITS,
    sizes: SizeLimits | None = None,
) -> Iterator[SourceDocument]:
    """Stream the documents of a file; `format` is 'jsonl' or 'trec' (guessed when None).

    `sizes` bounds the file (default: `SizeLimits.from_env()`).
    """
    path = Path(path)
    sizes = sizes or SizeLimits.from_env()
    lines = _lines(path, sizes)
    try:
        first = next((line for line in lines if line[1].strip()), None)
        if first is None:
            return
        fmt = format or _guess_format(path, first[1])
        readers = {"jsonl": _read_jsonl, "trec": _read_sgml}
        if fmt not in readers:
            raise ValueError(f"unknown document format {fmt!r}; expected one of {FORMATS}")
        documents = readers[fmt](chain([first], lines), str(path), sizes)
        for number, line, document in documents:
            if limits.docno is not None and len(document.docno) > limits.docno:
                raise TrecFormatError(str(path), number, line, at_most("docno", limits.docno))
            yield document
    finally:
        lines.close()


# (line number, text, its length in bytes): the text is a line with its newline, followed by
# the whitespace-only lines after it, if any
Line = tuple[int, str, int]


def _lines(path: Path, sizes: SizeLimits) -> Generator[Line, None, None]:
    """The file's lines, decoded (strict UTF-8, no NUL), each at most `sizes.document_bytes`;
    a .gz is decompressed, bounded by `sizes`, and a corrupt or truncated one is an error.

    Read in blocks, decoded and checked a block at a time; memory holds a block and at most
    one unfinished line (itself bounded).
    """
    name = str(path)
    compressed = path.suffix == ".gz"
    budget = sizes.decompressed_bytes
    if compressed:
        budget = min(budget, max(RATIO_GRACE, sizes.gzip_ratio * os.path.getsize(path)))
    with ExitStack() as stack:
        stream: io.BufferedIOBase = stack.enter_context(open(path, "rb"))
        if compressed:
            stream = stack.enter_context(gzip.GzipFile(fileobj=stream, mode="rb"))
        total = 0
        number = 0  # lines yielded so far
        rest = b""
        while True:
            try:
                block = stream.read(BLOCK_BYTES)
            except (OSError, EOFError, zlib.error) as error:
                expected = f"a complete, valid gzip file ({error or type(error).__name__})"
                raise TrecFormatError(name, number + 1, "", expected) from None
            total += len(block)
            if total > budget:
                raise TrecFormatError(name, number + 1, "", _expands_beyond(sizes, budget))
            data = rest + block if block else rest + b"\n" if rest else b""
            if not data:
                return
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if len(rest) > sizes.document_bytes:
                line = number + data.count(b"\n", 0, cut) + 1
                raise TrecFormatError(name, line, _head(rest), _document_size(sizes))
            if cut:
                yield from _block_lines(data[:cut], number, name, sizes)
                number += data.count(b"\n", 0, cut)


BLOCK_BYTES = 1 << 20


def _block_lines(chunk: bytes, number: int, name: str, sizes: SizeLimits) -> Iterator[Line]:
    """The lines of a chunk ending with a newline, after line `number`."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as error:
        start = chunk.rfind(b"\n", 0, error.start) + 1
        at = number + chunk.count(b"\n", 0, error.start) + 1
        raw = chunk[start : chunk.find(b"\n", error.start)]
        raise TrecFormatError.of_bytes(name, at, raw, UTF8) from None
    if "\x00" in text:
        at = text.index("\x00")
        shown = text[text.rfind("\n", 0, at) + 1 : text.find("\n", at)]
        raise TrecFormatError(name, number + text.count("\n", 0, at) + 1, shown, WITHOUT_NUL)
    if len(chunk) > sizes.document_bytes:  # else no line can be too long
        ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        too_long = np.flatnonzero(np.diff(ends, prepend=-1) > sizes.document_bytes)
        if len(too_long):
            k = int(too_long[0])
            start = int(ends[k - 1]) + 1 if k else 0
            shown = _head(chunk[start : int(ends[k])])
            raise TrecFormatError(name, number + k + 1, shown, _document_size(sizes))
    ascii = len(text) == len(chunk)  # then character offsets are byte offsets
    line_ends = np.zeros(0, dtype=np.int64)
    if not ascii:
        line_ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
    line = 0  # lines of the chunk before the item
    at = previous = 0  # where the item starts, in the text and in the chunk's bytes
    while at < len(text):
        end = text.index("\n", at) + 1
        count = 1
        if text[end : end + 1] in _SPACES:  # blank lines may follow: they join the item
            blank = _BLANK.match(text, end)
            assert blank is not None  # the pattern matches the empty string
            end = text.rfind("\n", end - 1, blank.end()) + 1
            count = text.count("\n", at, end)
        line += count
        stop = end if ascii else int(line_ends[line - 1]) + 1
        yield number + line - count + 1, text[at:end], stop - previous
        at, previous = end, stop


# A line and the blank (whitespace-only) lines after it make one item, so that a run of blank
# lines costs one step (a .gz of newlines expands 1000-fold).
_BLANK = re.compile(r"[ \t\r\f\v\n]*")
_SPACES = frozenset(" \t\r\f\v\n")


def _head(data: bytes) -> str:
    return data[:80].decode("utf-8", "backslashreplace") + "..."


def _expands_beyond(sizes: SizeLimits, budget: int) -> str:
    return (
        f"a .gz file expanding to at most {budget} bytes "
        f"(WORKBENCH_MAX_DECOMPRESSED_BYTES={sizes.decompressed_bytes}, "
        f"WORKBENCH_MAX_GZIP_RATIO={sizes.gzip_ratio})"
    )


def _document_size(sizes: SizeLimits) -> str:
    return f"a document of at most {sizes.document_bytes} bytes (WORKBENCH_MAX_DOCUMENT_BYTES)"


def _guess_format(path: Path, first: str) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffixes and suffixes[-1] in (".trec", ".sgml", ".xml"):
        return "trec"
    head = first.lstrip()
    if head.startswith("{"):
        return "jsonl"
    if head.startswith("<"):
        return "trec"
    raise TrecFormatError(str(path), 1, head[:80], "a JSONL object or a TREC <DOC>")


NumberedDocument = tuple[int, str, SourceDocument]  # (line number, line text, document)


def _read_jsonl(lines: Iterator[Line], path: str, sizes: SizeLimits) -> Iterator[NumberedDocument]:
    for number, raw, _ in lines:
        if raw[0] in _SPACES and raw.isspace():
            continue
        line = _first_line(raw)
        record = json_object(line, path, number)
        needed = 'a non-empty "docno"'
        docno = json_field(record, ("docno",), path, number, line, ids=True, required=needed)
        if docno is None or not docno.strip():
            raise TrecFormatError(path, number, line, 'a non-empty "docno"')
        title = json_field(record, ("title",), path, number, line) or ""
        text = json_field(record, ("text",), path, number, line) or ""
        extra = {k: v for k, v in record.items() if k not in ("docno", "title", "text")}
        yield number, line, SourceDocument(docno.strip(), title, text, extra)


def _first_line(item: str) -> str:
    return item[: item.index("\n")].rstrip("\r")


def _read_sgml(lines: Iterator[Line], path: str, sizes: SizeLimits) -> Iterator[NumberedDocument]:
    body: list[str] | None = None
    size = 0
    start = 0
    first = ""
    for number, line, n_bytes in lines:
        stripped = line.strip()
        upper = stripped[:5].upper()
        closes = stripped[-6:].upper() == "</DOC>"
        if body is None:
            if upper == "<DOC>":
                body, size, start, first = [stripped[5:]], n_bytes, number, line
                if closes:
                    yield _sgml_document(stripped[5 : -len("</DOC>")], path, start, line)
                    body = None
            elif stripped:
                raise TrecFormatError(path, number, _first_line(line), "<DOC>")
            continue
        if upper == "<DOC>":
            raise TrecFormatError(path, number, _first_line(line), "</DOC> before the next <DOC>")
        size += n_bytes
        if size > sizes.document_bytes:
            raise TrecFormatError(path, start, _first_line(first), _document_size(sizes))
        if closes:
            body.append(line.rstrip()[: -len("</DOC>")])
            yield _sgml_document("".join(body), path, start, first)
            body = None
        else:
            body.append(line)
    if body is not None:
        raise TrecFormatError(path, start, "<DOC>", "</DOC> closing this document")


def _sgml_document(body: str, path: str, line_number: int, line: str) -> NumberedDocument:
    """The document of a <DOC> body, numbered by its <DOC> line (a scan, linear in the body).

    Tags are found in an ASCII-lowered copy of the UTF-8 bytes, so offsets match the body.
    """
    data = body.encode("utf-8")
    lower = data.lower()
    docno = ""
    for _, start, end in find_elements(lower, b"docno"):
        if end >= 0:
            docno = data[start:end].decode("utf-8").strip()
        break
    if not docno:
        raise TrecFormatError(path, line_number, "<DOC>", "<DOCNO>id</DOCNO> in this document")
    title = ""
    for tag in TITLE_TAGS:
        found = next(find_elements(lower, tag.lower().encode()), None)
        if found is not None and found[2] >= 0:
            title = _clean(data[found[1] : found[2]])
            break
    sections = [_clean(data[s:e]) for _, s, e in find_elements(lower, b"text") if e >= 0]
    return line_number, _first_line(line), SourceDocument(docno, title, "\n\n".join(sections))


def _clean(fragment: bytes) -> str:
    """Inner markup removed, entities decoded, whitespace at the ends trimmed."""
    return unescape(strip_markup(fragment.decode("utf-8"))).strip()


_LONG_DECIMAL_REFERENCE = re.compile(r"&#([0-9]{8,})")


def unescape(text: str) -> str:
    """`html.unescape`, in linear time: a decimal character reference of 8 or more digits
    (leading zeros aside) is beyond Unicode, so U+FFFD, as html.unescape would make it, but
    without converting its digits (quadratic, and refused past 4,300 digits)."""

    def shorten(match: re.Match[str]) -> str:
        digits = match.group(1).lstrip("0") or "0"
        return "&#" + digits if len(digits) < 8 else "\ufffd"

    return html.unescape(_LONG_DECIMAL_REFERENCE.sub(shorten, text))
