"""Document sources: JSONL and TREC `<DOC>` SGML, read as a stream (one document at a time).

JSONL: one object per line, `{"docno": ..., "title": ..., "text": ..., ...}`; docno is required,
title and text default to "", every other key goes to `extra`.
TREC SGML: `<DOC> <DOCNO>id</DOCNO> ... <TEXT>...</TEXT> </DOC>`; the title is the first of
HEADLINE, TITLE, HEAD, HL; the text is every TEXT section joined by a blank line.
Files ending in .gz are decompressed on the fly. Bad input raises `workbench.trec.TrecFormatError`
naming the file, the line and what was expected: a NUL character anywhere, and (when `limits` asks)
a docno longer than `limits.docno`, are bad input.
"""

from __future__ import annotations

import gzip
import html
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from workbench.limits import NO_LIMITS, IdLimits, at_most
from workbench.trec import WITHOUT_NUL, TrecFormatError, has_nul

FORMATS = ("jsonl", "trec")
TITLE_TAGS = ("HEADLINE", "TITLE", "HEAD", "HL")
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_TEXT = re.compile(r"<TEXT>(.*?)</TEXT>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class SourceDocument:
    docno: str
    title: str = ""
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def read_documents(
    path: str | os.PathLike[str], *, format: str | None = None, limits: IdLimits = NO_LIMITS
) -> Iterator[SourceDocument]:
    """Stream the documents of a file; `format` is 'jsonl' or 'trec' (guessed when None)."""
    path = Path(path)
    with _open_text(path) as stream:
        fmt = format or _guess_format(path, stream)
        if fmt == "jsonl":
            documents = _read_jsonl(stream, str(path))
        elif fmt == "trec":
            documents = _read_sgml(stream, str(path))
        else:
            raise ValueError(f"unknown document format {fmt!r}; expected one of {FORMATS}")
        for number, line, document in documents:
            if limits.docno is not None and len(document.docno) > limits.docno:
                raise TrecFormatError(str(path), number, line, at_most("docno", limits.docno))
            yield document


def _open_text(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _guess_format(path: Path, stream: TextIO) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffixes and suffixes[-1] in (".trec", ".sgml", ".xml"):
        return "trec"
    position = stream.tell()
    head = stream.read(4096).lstrip()
    stream.seek(position)
    if head.startswith("{"):
        return "jsonl"
    if head.startswith("<"):
        return "trec"
    raise TrecFormatError(str(path), 1, head[:80], "a JSONL object or a TREC <DOC>")


NumberedDocument = tuple[int, str, SourceDocument]  # (line number, line text, document)


def _read_jsonl(stream: TextIO, path: str) -> Iterator[NumberedDocument]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise TrecFormatError(
                path, number, line.rstrip("\n"), f"a JSON object ({error.msg})"
            ) from None
        if not isinstance(record, dict):
            raise TrecFormatError(path, number, line.rstrip("\n"), "a JSON object")
        if has_nul(record):
            raise TrecFormatError(path, number, line.rstrip("\n"), WITHOUT_NUL)
        docno = record.pop("docno", None)
        if not isinstance(docno, str | int) or not str(docno).strip():
            raise TrecFormatError(path, number, line.rstrip("\n"), 'a non-empty "docno"')
        title, text = record.pop("title", ""), record.pop("text", "")
        document = SourceDocument(str(docno).strip(), str(title or ""), str(text or ""), record)
        yield number, line.rstrip("\n"), document


def _read_sgml(stream: TextIO, path: str) -> Iterator[NumberedDocument]:
    body: list[str] | None = None
    start = 0
    for number, line in enumerate(stream, start=1):
        if "\x00" in line:
            raise TrecFormatError(path, number, line.rstrip("\n"), WITHOUT_NUL)
        stripped = line.strip()
        upper = stripped.upper()
        if body is None:
            if upper.startswith("<DOC>"):
                body, start, first = [stripped[5:]], number, line
                if upper.endswith("</DOC>"):
                    yield _sgml_document(stripped[5 : -len("</DOC>")], path, start, line)
                    body = None
            elif stripped:
                raise TrecFormatError(path, number, line.rstrip("\n"), "<DOC>")
            continue
        if upper.startswith("<DOC>"):
            raise TrecFormatError(path, number, line.rstrip("\n"), "</DOC> before the next <DOC>")
        if upper.endswith("</DOC>"):
            body.append(line.rstrip()[: -len("</DOC>")])
            yield _sgml_document("".join(body), path, start, first)
            body = None
        else:
            body.append(line)
    if body is not None:
        raise TrecFormatError(path, start, "<DOC>", "</DOC> closing this document")


def _sgml_document(body: str, path: str, line_number: int, line: str) -> NumberedDocument:
    """The document of a <DOC> body, numbered by its <DOC> line."""
    match = _DOCNO.search(body)
    if match is None or not match.group(1):
        raise TrecFormatError(path, line_number, "<DOC>", "<DOCNO>id</DOCNO> in this document")
    title = ""
    for tag in TITLE_TAGS:
        found = re.search(rf"<{tag}>(.*?)</{tag}>", body, re.S | re.I)
        if found:
            title = _clean(found.group(1))
            break
    text = "\n\n".join(_clean(section) for section in _TEXT.findall(body))
    return line_number, line.rstrip("\n"), SourceDocument(match.group(1), title, text)


def _clean(fragment: str) -> str:
    """Inner markup removed, entities decoded, whitespace at the ends trimmed."""
    return html.unescape(_TAG.sub("", fragment)).strip()
