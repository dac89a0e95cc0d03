"""The CACM test collection in its SMART layout (cacm.all, query.text, qrels.text, common_words).

Records start with ``.I <id>``; fields with a line holding only ``.T`` (title), ``.W`` (abstract
or query text), ``.A``, ``.B``, ``.N``, ``.X``, ``.K`` or ``.C``. Docnos and qids are the record
ids without leading zeros (qrels.text writes qid 1 as ``01``). A query without a qrels line has no
relevant document; `CacmCollection.judged_topics` lists those that have one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench import baselines
from workbench.trec import TopicStatement, TrecFormatError, write_qrels, write_run

_FIELD_NAMES = {
    ".T": "title",
    ".W": "text",
    ".A": "authors",
    ".B": "published",
    ".N": "note",
    ".X": "references",
    ".K": "keywords",
    ".C": "categories",
}


@dataclass(frozen=True)
class CacmDocument:
    docno: str
    title: str
    text: str

    @property
    def body(self) -> str:
        """Title and abstract: what the rankers index and assessors read."""
        return f"{self.title}\n{self.text}".strip()


@dataclass(frozen=True)
class CacmCollection:
    documents: tuple[CacmDocument, ...]
    topics: tuple[TopicStatement, ...]
    qrels: dict[str, dict[str, int]]
    stopwords: frozenset[str]

    @property
    def judged_topics(self) -> tuple[TopicStatement, ...]:
        """The topics with at least one relevant document."""
        return tuple(t for t in self.topics if self.qrels.get(t.qid))


def _records(path: Path) -> Iterator[tuple[int, str, dict[str, str]]]:
    """(line number, id, {field: text}) per ``.I`` record; linear in the file."""
    record_id: str | None = None
    start = 0
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    with path.open(encoding="utf-8", errors="strict") as f:
        for number, line in enumerate(f, 1):
            stripped = line.rstrip("\n")
            if stripped.startswith(".I"):
                if record_id is not None:
                    yield start, record_id, {k: "\n".join(v).strip() for k, v in fields.items()}
                parts = stripped.split()
                if len(parts) != 2 or not (parts[1].isascii() and parts[1].isdigit()):
                    raise TrecFormatError(str(path), number, stripped, "'.I <number>'")
                record_id, start, fields, current = str(int(parts[1])), number, {}, None
            elif stripped.strip() in _FIELD_NAMES:
                current = fields.setdefault(_FIELD_NAMES[stripped.strip()], [])
            elif current is not None:
                current.append(stripped)
            elif stripped.strip():
                raise TrecFormatError(str(path), number, stripped, "'.I <number>' or a field line")
    if record_id is not None:
        yield start, record_id, {k: "\n".join(v).strip() for k, v in fields.items()}


def read_documents(path: Path) -> tuple[CacmDocument, ...]:
    """cacm.all: one document per record, its title (.T) and abstract (.W, often absent)."""
    return tuple(
        CacmDocument(docno, " ".join(f.get("title", "").split()), f.get("text", ""))
        for _, docno, f in _records(path)
    )


def read_queries(path: Path) -> tuple[TopicStatement, ...]:
    """query.text: the query text (.W) becomes the topic's title, with whitespace folded."""
    return tuple(
        TopicStatement(qid, " ".join(f.get("text", "").split())) for _, qid, f in _records(path)
    )


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """qrels.text: ``qid docno 0 0`` lines, each a relevant document (grade 1)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", errors="strict") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4 or not (
                parts[0].isascii()
                and parts[0].isdigit()
                and parts[1].isascii()
                and parts[1].isdigit()
            ):
                raise TrecFormatError(str(path), number, line.rstrip("\n"), "'qid docno 0 0'")
            qrels.setdefault(str(int(parts[0])), {})[str(int(parts[1]))] = 1
    return qrels


def load(folder: Path) -> CacmCollection:
    """The collection in `folder` (as shipped in ../shared/data/cacm)."""
    stopwords = frozenset((folder / "common_words").read_text(encoding="utf-8").split())
    return CacmCollection(
        documents=read_documents(folder / "cacm.all"),
        topics=read_queries(folder / "query.text"),
        qrels=read_qrels(folder / "qrels.text"),
        stopwords=stopwords,
    )


@dataclass(frozen=True)
class CampaignFiles:
    """Files that `workbench import` reads as they are."""

    topics: Path
    documents: Path
    qrels: Path
    runs: tuple[Path, ...]


def write_campaign_files(
    collection: CacmCollection,
    folder: Path,
    *,
    rankers: tuple[baselines.Ranker, ...] = baselines.DEFAULT_RANKERS,
    depth: int = 100,
) -> CampaignFiles:
    """Topics (TSV, judged topics only), documents (JSONL), the qrels and one run per ranker."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = collection.judged_topics
    topics_path = folder / "topics.tsv"
    topics_path.write_text("".join(f"{t.qid}\t{t.title}\n" for t in topics), encoding="utf-8")
    documents_path = folder / "documents.jsonl"
    with documents_path.open("w", encoding="utf-8") as f:
        for d in collection.documents:
            f.write(json.dumps({"docno": d.docno, "title": d.title, "text": d.text}) + "\n")
    qrels_path = folder / "qrels.txt"
    write_qrels({t.qid: collection.qrels[t.qid] for t in topics}, qrels_path)
    runs = baselines.rank(
        {d.docno: (d.title, d.text) for d in collection.documents},
        [(t.qid, t.title) for t in topics],
        rankers,
        depth=depth,
        stopwords=collection.stopwords,
    )
    run_paths = []
    for tag, run in runs.items():
        path = folder / f"run-{tag}.txt"
        write_run(run, path, tag=tag)
        run_paths.append(path)
    return CampaignFiles(topics_path, documents_path, qrels_path, tuple(run_paths))
