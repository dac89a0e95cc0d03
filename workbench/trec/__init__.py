"""TREC file formats: runs, qrels (and trec_eval's qrels_jg / prefs variants), topics.

Parsing follows trec_eval 10: fields are separated by spaces, tabs or carriage returns; a line
whose first field starts with ``#`` is a comment (a ``#`` inside a later field is data); blank
lines are skipped in runs.  Ids are byte strings compared with ``strcmp``; they are never assumed
to be numbers.  Every malformed line raises :class:`TrecFormatError` and nothing else.

Runs are parsed with vectorised numpy over large chunks of the file (token boundaries from a
whitespace mask), so a 7-million-line run reads in a few seconds and little memory.

The package: ``errors`` (TrecFormatError), ``scan`` (tokeniser, numbers), ``keys`` (docno
hashes, grouping by topic), ``order`` (trec_eval's ranking order, a leaf), ``runs``, ``qrels``,
``prefs`` (-R qrels_jg / prefs), ``topics``, ``jsonl``.  The names below are re-exported here
and load on first use, so that reading a run does not import the topic or JSONL readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.lazy import lazy_attributes

if TYPE_CHECKING:
    from workbench.trec.errors import UTF8, WITHOUT_NUL, TrecFormatError
    from workbench.trec.jsonl import has_nul, json_field, json_object
    from workbench.trec.keys import docno_hash, group_keys
    from workbench.trec.order import trec_order
    from workbench.trec.prefs import JudgmentGroupLine, PrefsLine, read_prefs, read_qrels_jg
    from workbench.trec.qrels import GRADE_BOUNDS, Qrels, read_qrels, write_qrels
    from workbench.trec.runs import Run, RunTopicLines, read_run, read_runs, write_run
    from workbench.trec.scan import MAX_FIELD_BYTES, Source, check_utf8, text_lines
    from workbench.trec.topics import (
        TSV_HEADERS,
        TopicStatement,
        find_elements,
        read_topics,
        strip_markup,
    )

_HOMES = {
    "UTF8": "errors",
    "WITHOUT_NUL": "errors",
    "TrecFormatError": "errors",
    "has_nul": "jsonl",
    "json_field": "jsonl",
    "json_object": "jsonl",
    "docno_hash": "keys",
    "group_keys": "keys",
    "trec_order": "order",
    "JudgmentGroupLine": "prefs",
    "PrefsLine": "prefs",
    "read_prefs": "prefs",
    "read_qrels_jg": "prefs",
    "GRADE_BOUNDS": "qrels",
    "Qrels": "qrels",
    "read_qrels": "qrels",
    "write_qrels": "qrels",
    "Run": "runs",
    "RunTopicLines": "runs",
    "read_run": "runs",
    "read_runs": "runs",
    "write_run": "runs",
    "MAX_FIELD_BYTES": "scan",
    "Source": "scan",
    "check_utf8": "scan",
    "text_lines": "scan",
    "TSV_HEADERS": "topics",
    "TopicStatement": "topics",
    "find_elements": "topics",
    "read_topics": "topics",
    "strip_markup": "topics",
}

__all__ = [
    "GRADE_BOUNDS",
    "MAX_FIELD_BYTES",
    "TSV_HEADERS",
    "UTF8",
    "WITHOUT_NUL",
    "JudgmentGroupLine",
    "PrefsLine",
    "Qrels",
    "Run",
    "RunTopicLines",
    "Source",
    "TopicStatement",
    "TrecFormatError",
    "check_utf8",
    "docno_hash",
    "find_elements",
    "group_keys",
    "has_nul",
    "json_field",
    "json_object",
    "read_prefs",
    "read_qrels",
    "read_qrels_jg",
    "read_run",
    "read_runs",
    "read_topics",
    "strip_markup",
    "text_lines",
    "trec_order",
    "write_qrels",
    "write_run",
]


__getattr__ = lazy_attributes(__name__, {name: f".{home}" for name, home in _HOMES.items()})
