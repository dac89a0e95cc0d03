"""A dataset of ir_datasets (MacAvaney et al., "Simplified Data Wrangling with ir_datasets",
SIGIR 2021) written, record by record, as the files the importers read: topics (JSONL),
documents (JSONL), qrels and its scored documents as a run (TREC formats).

Each part is streamed from ir_datasets' iterators to a file (memory holds one record), with a
progress callback ``progress(part, done, total)`` (total from the dataset's metadata, None when
it has none; a last call with ``done == total`` once the part is written).  The importers then
check the files as they check any file: nothing about the dataset is trusted that a file would
not be.  What cannot be written without guessing is
refused here: an id with white space (a TREC file's fields are separated by it), a grade that is
not an integer.  The scored documents become one run tagged ``run_tag`` (default: the
dataset's id), its rank column counting each topic's documents in the dataset's order (ranks
are not used: a run is ordered by score, as trec_eval orders it).  ir_datasets is the optional
extra ``ir_datasets``; it downloads a dataset's files on first use (into ``~/.ir_datasets``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

PARTS = ("topics", "documents", "qrels", "run")
Progress = Callable[[str, int, int | None], None]
_EVERY = 10_000  # records between progress calls


class DatasetError(ValueError):
    """A dataset that cannot be loaded, or a record that cannot be written as a file says."""


class DatasetFiles(NamedTuple):
    """The files written for each part asked for that the dataset has (None otherwise), the
    parts asked for that it lacks, the run's tag and the records written per part."""

    dataset: str
    topics: Path | None
    documents: Path | None
    qrels: Path | None
    run: Path | None
    lacking: tuple[str, ...]
    run_tag: str
    counts: dict[str, int]


def load(dataset_id: str) -> Any:
    """``ir_datasets.load(dataset_id)``, with clear refusals (not installed, unknown id)."""
    try:
        import ir_datasets
    except ImportError:
        raise DatasetError(
            "reading ir_datasets needs the ir_datasets package: "
            "pip install 'workbench-ir[ir_datasets]'"
        ) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise DatasetError(
            f"ir_datasets has no dataset {dataset_id!r} (ids as on ir-datasets.com, e.g. "
            "msmarco-passage/trec-dl-2019/judged)"
        ) from None


def write_files(
    dataset_id: str,
    folder: Path,
    *,
    parts: Iterable[str] = PARTS,
    run_tag: str | None = None,
    progress: Progress | None = None,
) -> DatasetFiles:
    """Write the asked ``parts`` of the dataset into ``folder``."""
    wanted = list(parts)
    unknown = sorted(set(wanted) - set(PARTS))
    if unknown:
        raise DatasetError(f"unknown parts {', '.join(unknown)}; expected {', '.join(PARTS)}")
    dataset = load(dataset_id)
    tag = run_tag or dataset_id
    _single_id(tag, "run tag")
    has = {
        "topics": dataset.has_queries(),
        "documents": dataset.has_docs(),
        "qrels": dataset.has_qrels(),
        "run": dataset.has_scoreddocs(),
    }
    writers: dict[str, tuple[str, Callable[[Any], str], str]] = {  # ir_datasets' names
        "topics": ("queries", _topic_line, "topics.jsonl"),
        "documents": ("docs", _document_line, "docs.jsonl"),
        "qrels": ("qrels", _qrels_line, "qrels.txt"),
        "run": ("scoreddocs", _RunLines(tag), "run.txt"),
    }
    paths: dict[str, Path | None] = dict.fromkeys(PARTS)
    counts: dict[str, int] = {}
    for part in PARTS:
        if part not in wanted or not has[part]:
            continue
        kind, line, name = writers[part]
        records = getattr(dataset, f"{kind}_iter")()
        total = _total(getattr(dataset, f"{kind}_count", None))
        path = paths[part] = folder / name
        counts[part] = _write(path, part, records, line, total, progress)
    lacking = tuple(part for part in wanted if not has[part])
    return DatasetFiles(
        dataset_id,
        paths["topics"],
        paths["documents"],
        paths["qrels"],
        paths["run"],
        lacking,
        tag,
        counts,
    )


def _write(
    path: Path,
    part: str,
    records: Iterator[Any],
    line: Callable[[Any], str],
    total: int | None,
    progress: Progress | None,
) -> int:
    done = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for done, record in enumerate(records, 1):
            out.write(line(record))
            if progress is not None and done % _EVERY == 0:
                progress(part, done, total)
    if progress is not None:
        progress(part, done, done)  # written: the count is known now
    return done


def _total(count: Callable[[], Any] | None) -> int | None:
    """The dataset's record count from its metadata (None when it has none)."""
    if count is None:
        return None
    try:
        value = count()
    except Exception:  # ir_datasets raises various errors for missing metadata
        return None
    return value if isinstance(value, int) else None


def _single_id(value: Any, what: str) -> str:
    """An id as a TREC file's field: non-empty text without white space."""
    text = str(value)
    if not text or len(text.split()) != 1 or text != text.strip():
        raise DatasetError(f"{what} {text!r} has white space: a TREC file cannot hold it")
    return text


def _text(record: Any, *names: str) -> str:
    for name in names:
        value = getattr(record, name, None)
        if isinstance(value, str):
            return value
    return ""


def _topic_line(query: Any) -> str:
    """``{"qid", "title", "description", "narrative", ...}``: the title is the query's
    ``title``, else its ``text`` (or its default text); its other text fields are kept."""
    title = _text(query, "title", "text") or query.default_text()
    fields = {"qid": _single_id(query.query_id, "query id"), "title": title}
    for name in ("description", "narrative"):
        if _text(query, name):
            fields[name] = _text(query, name)
    taken = ("query_id", "title", "text", "description", "narrative")
    for name, value in query._asdict().items():
        if name not in taken and isinstance(value, str | int | float | bool):
            fields[name] = value
    return json.dumps(fields, ensure_ascii=False) + "\n"


def _document_line(doc: Any) -> str:
    """``{"docno", "title", "text"}``: the document's ``title`` and ``text`` fields (its
    default text when it has no ``text``)."""
    text = _text(doc, "text") or doc.default_text()
    docno = _single_id(doc.doc_id, "document id")
    fields = {"docno": docno, "title": _text(doc, "title"), "text": text}
    return json.dumps(fields, ensure_ascii=False) + "\n"


def _qrels_line(qrel: Any) -> str:
    relevance = qrel.relevance
    if isinstance(relevance, bool) or not isinstance(relevance, int):
        raise DatasetError(f"a relevance grade {relevance!r} that is not an integer")
    iteration = _single_id(getattr(qrel, "iteration", "0") or "0", "iteration")
    qid = _single_id(qrel.query_id, "query id")
    return f"{qid} {iteration} {_single_id(qrel.doc_id, 'document id')} {relevance}\n"


class _RunLines:
    """Scored documents as run lines: ranks counted per topic in the dataset's order, the
    score written with repr (read back to the same float)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.ranks: dict[str, int] = {}

    def __call__(self, scored: Any) -> str:
        qid = _single_id(scored.query_id, "query id")
        rank = self.ranks[qid] = self.ranks.get(qid, 0) + 1
        docno = _single_id(scored.doc_id, "document id")
        return f"{qid} Q0 {docno} {rank} {float(scored.score)!r} {self.tag}\n"
