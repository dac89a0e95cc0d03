"""trec_eval's ``-R`` relevance variants: qrels_jg (judgment groups) and prefs lines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from workbench.trec.errors import TrecFormatError
from workbench.trec.scan import Source, _source_name, text_lines

R = TypeVar("R", int, float)


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


def read_qrels_jg(source: Source) -> list[JudgmentGroupLine]:
    return [
        JudgmentGroupLine(fields[0], fields[1], fields[2], rel)
        for fields, rel in _graded_lines(source, "qid jg docno rel", int, "an integer")
    ]


def read_prefs(source: Source) -> list[PrefsLine]:
    return [
        PrefsLine(fields[0], fields[1], fields[2], fields[3], rel)
        for fields, rel in _graded_lines(source, "qid jg jsg docno rel", float, "a number")
    ]


def _graded_lines(
    source: Source, layout: str, parse: Callable[[str], R], kind: str
) -> Iterator[tuple[list[str], R]]:
    """Each line's fields (exactly those ``layout`` names) and its last field, ``rel``, read by
    ``parse`` (``kind`` says what it expects)."""
    path = _source_name(source)
    count = len(layout.split())
    for number, text, fields in text_lines(source):
        if len(fields) != count:
            raise TrecFormatError(path, number, text, f"exactly {count} fields ({layout})")
        try:
            rel = parse(fields[-1])
        except ValueError:
            raise TrecFormatError(path, number, text, f"{kind} as field {count} (rel)") from None
        yield fields, rel
