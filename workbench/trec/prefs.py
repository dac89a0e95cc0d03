"""trec_eval's ``-R`` relevance variants: qrels_jg (judgment groups) and prefs lines."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.trec.errors import TrecFormatError
from workbench.trec.scan import Source, _source_name, text_lines


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
