"""Topic statements: TREC ``<top>`` SGML, TSV ``qid<TAB>title`` or JSONL objects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from workbench.limits import NO_LIMITS, IdLimits, at_most
from workbench.trec.errors import WITHOUT_NUL, TrecFormatError
from workbench.trec.jsonl import json_field, json_object
from workbench.trec.scan import Source, _open, _source_name, check_utf8


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
        first = data.strip().splitlines()[0]
        raise TrecFormatError.of_bytes(path, 1, first, "TREC topics (<top> ... </top>)")


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
