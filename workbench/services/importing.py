"""Imports of topics, documents, runs and qrels into a campaign.

Each function works inside the caller's session and transaction: it raises on the first problem
(a `TrecFormatError` naming file and line, or a `ServiceError`), and the caller's
`with store.session()` rolls everything back, so a failed import leaves the store as it was.
Runs are stored whole as RunTopic blobs (one row per run and topic, bulk-inserted).

Large inputs are read before that transaction, so that it (the store's write lock, on SQLite)
is short: `prepare_runs` parses and encodes run files in memory; `stage_documents` writes
documents to a staging table in short transactions, which the import's transaction copies
in SQL (the documents become visible at once, at its commit, or never).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import uuid
from collections import deque
from collections.abc import Collection, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import (
    Connection,
    CursorResult,
    and_,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from workbench import limits, trec
from workbench.documents import read_documents
from workbench.services.errors import ServiceError
from workbench.services.pools import documents_without_text, latest_pool
from workbench.services.topics import campaign_qids, chosen_topics, listed
from workbench.store import Store
from workbench.store.models import (
    Campaign,
    Document,
    Judgement,
    Pool,
    PoolEntry,
    QrelsEntry,
    QrelsSet,
    Run,
    RunTopic,
    StagedDocument,
    Topic,
    utcnow,
)
from workbench.store.runs import RUN_TOPIC_COLUMNS, bulk_insert, run_topic_rows

PathLike = str | os.PathLike[str]
DOCUMENT_BATCH = 2000
STAGE_BATCH_BYTES = 1 << 20
"""At most this much document text is staged per transaction (a short hold of the write lock)."""
STAGE_DELETE_ROWS = 2000
STAGED_TTL_S = 86_400.0
PARSE_AHEAD = 2  # run files parsed ahead of the inserts, on worker threads


@dataclass
class ImportReport:
    """What an import did: rows added/updated/skipped, lines read, and warnings for the user."""

    kind: str
    files: int = 0
    added: int = 0
    updated: int = 0
    skipped: int = 0
    lines: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.kind}: {self.added} added"]
        if self.updated:
            parts.append(f"{self.updated} updated")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        if self.lines:
            parts.append(f"{self.lines} {'read' if self.kind == 'documents' else 'lines'}")
        return ", ".join(parts) + f" from {self.files} file(s)"


# ---------------------------------------------------------------- topics


def import_topics(
    session: Session, campaign: Campaign, path: PathLike, *, format: str | None = None
) -> ImportReport:
    """Add the topics of a file; topics already in the campaign get the file's statements."""
    notes: list[str] = []
    statements = trec.read_topics(path, format=format, limits=limits.STORE_LIMITS, notes=notes)
    existing = {
        topic.qid: topic
        for topic in session.scalars(select(Topic).where(Topic.campaign_id == campaign.id))
    }
    report = ImportReport("topics", files=1, warnings=notes)
    for statement in statements:
        fields = {
            "title": statement.title,
            "description": statement.description,
            "narrative": statement.narrative,
            "extra": dict(statement.extra),
        }
        topic = existing.get(statement.qid)
        if topic is None:
            session.add(Topic(campaign_id=campaign.id, qid=statement.qid, **fields))
            report.added += 1
        else:
            for name, value in fields.items():
                setattr(topic, name, value)
            report.updated += 1
    session.flush()
    return report


# ---------------------------------------------------------------- documents


def import_documents(
    session: Session,
    campaign: Campaign,
    source: Iterable[PathLike] | StagedDocuments,
    *,
    only_pooled: bool = False,
    format: str | None = None,
    replace: bool = False,
) -> ImportReport:
    """Make documents (JSONL or TREC SGML) the campaign's, in the caller's transaction.

    `source` is staged by `stage_documents` (read and written in short transactions before
    this one, which then only copies the staged rows in SQL), or files, staged here in the
    caller's transaction. A docno already stored gets the new title/text; only_pooled keeps
    just the documents some pool of the campaign holds. A new title or text for a document
    someone has judged is refused unless replace=True; then each current judgement of it gets
    a log event saying so (same grade, its comment noting the file). Warns about pooled
    documents still without text.
    """
    if isinstance(source, StagedDocuments):
        staged = source
    else:
        staged = _stage(session.connection(), source, format)
    try:
        return _publish(session, campaign, staged, only_pooled=only_pooled, replace=replace)
    finally:
        if staged is not source:
            session.execute(delete(StagedDocument).where(StagedDocument.batch == staged.batch))


@dataclass(frozen=True)
class StagedDocuments:
    """Document files read, checked and written to `staged_documents` under `batch`, not yet
    visible (`stage_documents`); `lines` documents read, `duplicates` docnos repeated."""

    batch: str
    files: int
    lines: int
    duplicates: int


def stage_documents(
    store: Store, paths: Iterable[PathLike], *, format: str | None = None
) -> StagedDocuments:
    """Read and check every document file and write its documents to the staging table in
    transactions of at most STAGE_BATCH_BYTES each, so that no write lock is held for long and
    none while a file is parsed. The documents stay invisible until `import_documents`;
    discard them with `discard_staged` (`staged_documents` does both). A bad file raises (as
    `import_documents` would) after its staged rows are deleted: nothing is left."""
    _discard_stale(store)
    batch = uuid.uuid4().hex
    try:
        return _stage(store, paths, format, batch=batch)
    except BaseException:
        discard_staged(store, batch)
        raise


@contextmanager
def staged_documents(
    store: Store, paths: Iterable[PathLike], *, format: str | None = None
) -> Iterator[StagedDocuments]:
    """`stage_documents`, and the staged rows deleted afterwards, imported or not."""
    staged = stage_documents(store, paths, format=format)
    try:
        yield staged
    finally:
        discard_staged(store, staged.batch)


def discard_staged(store: Store, batch: str) -> None:
    """Delete the staged rows of `batch`, in short transactions."""
    while True:
        with store.connection() as connection:
            ids = select(StagedDocument.id).where(StagedDocument.batch == batch)
            deleted = connection.execute(
                delete(StagedDocument).where(
                    StagedDocument.id.in_(ids.limit(STAGE_DELETE_ROWS).scalar_subquery())
                )
            )
            if not deleted.rowcount:
                return


def _discard_stale(store: Store) -> None:
    """Delete what imports that died (a killed process) left in the staging table."""
    horizon = utcnow() - dt.timedelta(seconds=STAGED_TTL_S)
    with store.read_session() as session:
        stale = list(
            session.scalars(
                select(StagedDocument.batch).where(StagedDocument.staged_at < horizon).distinct()
            )
        )
    for batch in stale:
        discard_staged(store, batch)


def _stage(
    target: Store | Connection,
    paths: Iterable[PathLike],
    format: str | None,
    *,
    batch: str | None = None,
) -> StagedDocuments:
    """Write the documents of `paths` (first of each docno kept) under a batch: in short
    transactions of the store, or all in the given connection's transaction."""
    batch = batch or uuid.uuid4().hex
    rows: list[dict[str, Any]] = []
    size = files = lines = duplicates = 0
    seen: set[str] = set()

    def write() -> None:
        if not rows:
            return
        if isinstance(target, Connection):
            target.execute(insert(StagedDocument), rows)
        else:
            with target.connection() as connection:
                connection.execute(insert(StagedDocument), rows)
        rows.clear()

    now = utcnow()
    for path in paths:
        files += 1
        source = Path(path).name[: limits.FILE_NAME]
        for document in read_documents(path, format=format, limits=limits.STORE_LIMITS):
            lines += 1
            if document.docno in seen:
                duplicates += 1
                continue
            seen.add(document.docno)
            rows.append(
                {
                    "batch": batch,
                    "source": source,
                    "docno": document.docno,
                    "title": document.title,
                    "text": document.text,
                    "extra": document.extra,
                    "staged_at": now,
                }
            )
            size += len(document.title) + len(document.text) + 100
            if size >= STAGE_BATCH_BYTES or len(rows) >= DOCUMENT_BATCH:
                write()
                size = 0
    write()
    return StagedDocuments(batch, files, lines, duplicates)


def _publish(
    session: Session,
    campaign: Campaign,
    staged: StagedDocuments,
    *,
    only_pooled: bool,
    replace: bool,
) -> ImportReport:
    """Copy the staged documents into the campaign with a few set-wise statements."""
    report = ImportReport("documents", files=staged.files, lines=staged.lines)
    mine = StagedDocument.batch == staged.batch
    if only_pooled:
        pooled = (
            select(PoolEntry.docno)
            .join(Pool, Pool.id == PoolEntry.pool_id)
            .where(Pool.campaign_id == campaign.id)
        )
        outside = session.execute(
            delete(StagedDocument).where(mine, StagedDocument.docno.not_in(pooled))
        )
        report.skipped = cast_result(outside).rowcount
    same = and_(Document.campaign_id == campaign.id, Document.docno == StagedDocument.docno)
    judged = select(Judgement.docno).where(Judgement.campaign_id == campaign.id)
    changed = session.execute(
        select(StagedDocument.docno, StagedDocument.source)
        .join(Document, same)
        .where(
            mine,
            Document.docno.in_(judged),
            or_(Document.title != StagedDocument.title, Document.text != StagedDocument.text),
        )
        .order_by(StagedDocument.id)
    ).all()
    if changed and not replace:
        docno, source = changed[0]
        raise ServiceError(
            f"{source}: document {docno!r} has been judged and this file changes its title or "
            "text (ask for replacement to change it; the judgement log will record it)"
        )
    updated = session.execute(
        update(Document)
        .where(same, mine)
        .values(title=StagedDocument.title, text=StagedDocument.text, extra=StagedDocument.extra)
        .execution_options(synchronize_session=False)
    )
    report.updated = cast_result(updated).rowcount
    fresh = (
        select(
            literal(campaign.id),
            StagedDocument.docno,
            StagedDocument.title,
            StagedDocument.text,
            StagedDocument.extra,
        )
        .where(mine, ~exists().where(same))
        .order_by(StagedDocument.id)
    )
    session.execute(
        insert(Document).from_select(["campaign_id", "docno", "title", "text", "extra"], fresh)
    )
    # Every staged row updated a document or added one (an INSERT ... SELECT's rowcount is
    # not reported by every driver).
    staged_rows = session.scalar(select(func.count()).where(mine)) or 0
    report.added = staged_rows - report.updated
    if staged.duplicates:
        report.warnings.append(
            f"{staged.duplicates} document(s) appeared more than once; the first was kept"
        )
    if changed:
        replaced = {docno: source for docno, source in changed}
        events = log_replaced_documents(session, campaign, replaced)
        report.warnings.append(
            f"{len(replaced)} judged document(s) got a new title or text, recorded as "
            f"{events} judgement log event(s): {listed(sorted(replaced))}"
        )
    report.warnings.extend(missing_text_warnings(session, campaign))
    return report


def cast_result(result: Any) -> CursorResult[Any]:
    """A DML statement's result (a CursorResult, which has a rowcount)."""
    assert isinstance(result, CursorResult)
    return result


def log_replaced_documents(session: Session, campaign: Campaign, replaced: dict[str, str]) -> int:
    """Append, for each current judgement of a replaced document, an event that repeats it
    (grade, reason, comment) with a note naming the import file; returns the event count."""
    rows = session.scalars(
        select(Judgement)
        .where(Judgement.campaign_id == campaign.id, Judgement.docno.in_(list(replaced)))
        .order_by(Judgement.id)
    )
    latest: dict[tuple[str, str, int], Judgement] = {}
    for judgement in rows:
        latest[(judgement.qid, judgement.docno, judgement.user_id)] = judgement
    for (qid, docno, user_id), current in latest.items():
        note = f"[document text replaced by the import of {replaced[docno]}]"
        session.add(
            Judgement(
                campaign_id=campaign.id,
                qid=qid,
                docno=docno,
                user_id=user_id,
                grade=current.grade,
                cannot_judge=current.cannot_judge,
                comment=f"{current.comment} {note}".strip(),
                time_spent_ms=0,
                position=current.position,
            )
        )
    session.flush()
    return len(latest)


def missing_text_warnings(session: Session, campaign: Campaign) -> list[str]:
    """A warning listing the documents of the campaign's latest pool that have no text."""
    pool = latest_pool(session, campaign)
    if pool is None:
        return []
    missing = documents_without_text(session, pool)
    if not missing:
        return []
    return [
        f"{len(missing)} pooled document(s) of pool {pool.id} have no text in the store: "
        + listed(missing)
    ]


# ---------------------------------------------------------------- runs


def import_runs(
    session: Session,
    campaign: Campaign,
    paths: Iterable[PathLike | _ParsedRun],
    *,
    replace: bool = False,
    group: str = "",
    contributes: bool = True,
    split_tags: bool = False,
    topics: Collection[str] | None = None,
    skip_unknown_topics: bool = False,
) -> ImportReport:
    """Store each run whole. A tag already in the campaign is refused unless replace=True
    (the run keeps its id, so pools that name it still do).

    A file with two tags is refused unless split_tags (one run per tag). topics: keep only
    these campaign topics of every run (a judged subset); topics the campaign lacks are an
    error that lists them, unless skip_unknown_topics (they are left out and reported).
    Docnos the campaign's documents lack are imported and reported.
    """
    if len(group) > limits.RUN_GROUP:
        raise ServiceError(limits.length_error("run group", group, limits.RUN_GROUP))
    known_qids = campaign_qids(session, campaign)
    chosen = known_qids if topics is None else chosen_topics(topics, known_qids, campaign)
    stored = {
        run.tag: run for run in session.scalars(select(Run).where(Run.campaign_id == campaign.id))
    }
    report = ImportReport("runs")
    batch_tags: dict[str, str] = {}
    documents = DocnoSet(session, campaign)
    with closing(_parsed_runs(paths, split_tags)) as parsed_runs:
        for parsed in parsed_runs:
            path = parsed.path
            report.files += 1
            for run, all_rows in parsed.runs:
                report.lines += run.n_lines
                if run.tag in batch_tags:
                    raise ServiceError(
                        f"{path}: run tag {run.tag!r} is also the tag of {batch_tags[run.tag]}"
                    )
                batch_tags[run.tag] = str(path)
                rows = _kept_rows(
                    run, all_rows, path, campaign, known_qids, chosen, report, skip_unknown_topics
                )
                fields = {
                    "file_name": path.name,
                    "checksum": parsed.checksum,
                    "group": group,
                    "contributes": contributes,
                    "line_count": sum(row[1] for row in rows),
                }
                model = stored.get(run.tag)
                if model is not None:
                    if not replace:
                        raise ServiceError(
                            f"{path}: campaign {campaign.name!r} already has a run tagged "
                            f"{run.tag!r} (ask for replacement to overwrite it)"
                        )
                    for name, value in fields.items():
                        setattr(model, name, value)
                    session.execute(delete(RunTopic).where(RunTopic.run_id == model.id))
                    report.updated += 1
                else:
                    model = Run(campaign_id=campaign.id, tag=run.tag, **fields)
                    session.add(model)
                    report.added += 1
                session.flush()
                bulk_insert(
                    session,
                    RunTopic.__table__,
                    RUN_TOPIC_COLUMNS,
                    [(model.id, *row) for row in rows],
                )
                report.warnings.extend(documents.missing_warning(run, {row[0] for row in rows}))
    return report


def topic_list(text: str) -> list[str]:
    """Topics given as qids separated by commas, spaces or lines (no qid holds either)."""
    qids = text.replace(",", " ").split()
    if not qids:
        raise ServiceError("the topic list is empty")
    return list(dict.fromkeys(qids))


def _kept_rows(
    run: trec.Run,
    rows: list[tuple],
    path: Path,
    campaign: Campaign,
    known: set[str],
    chosen: set[str],
    report: ImportReport,
    skip_unknown: bool,
) -> list[tuple]:
    """The RunTopic rows of the run's chosen topics; unknown topics refused or reported."""
    unknown = [qid for qid in run.topics() if qid not in known]
    if unknown and not skip_unknown:
        raise ServiceError(
            f"{path}: run {run.tag!r} names {len(unknown)} topic(s) the campaign "
            f"{campaign.name!r} lacks: {listed(unknown)} (skip unknown topics to leave them out)"
        )
    if unknown:
        report.warnings.append(
            f"{path}: run {run.tag!r}: {len(unknown)} topic(s) the campaign lacks were "
            f"skipped: {listed(unknown)}"
        )
    outside = [qid for qid in run.topics() if qid in known and qid not in chosen]
    if outside:
        report.warnings.append(
            f"{path}: run {run.tag!r}: {len(outside)} topic(s) outside the chosen topics were "
            f"left out: {listed(outside)}"
        )
    kept = [row for row in rows if row[0] in chosen]
    if not kept:
        raise ServiceError(f"{path}: run {run.tag!r} has no line for any chosen campaign topic")
    return kept


class DocnoSet:
    """The campaign's docnos as 64-bit hashes, for counting the run docnos it lacks."""

    def __init__(self, session: Session, campaign: Campaign) -> None:
        docnos = [
            d.encode()
            for d in session.scalars(
                select(Document.docno).where(Document.campaign_id == campaign.id)
            )
        ]
        self.count = len(docnos)
        self.hashes = np.sort(trec.docno_hash(np.array(docnos, dtype=bytes))) if docnos else None

    def missing_warning(self, run: trec.Run, qids: set[str]) -> list[str]:
        """A warning counting and listing the distinct docnos of the run's topics ``qids``
        that no document of the campaign has (their pool entries will show 'no text')."""
        rows = np.concatenate(
            [np.arange(run.topic_slice(q).start, run.topic_slice(q).stop) for q in qids]
        )
        hashes = run.docno_hashes[rows]
        if self.hashes is None:
            lacking = rows
        else:
            at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
            lacking = rows[self.hashes[at] != hashes]
        if not len(lacking):
            return []
        missing = sorted(d.decode() for d in np.unique(run.docnos[lacking]).tolist())
        where = "no documents yet" if self.hashes is None else f"{self.count} documents"
        return [
            f"run {run.tag!r}: {len(missing)} docno(s) are not among the campaign's documents "
            f"({where}; pooled, they show 'no text' until imported): {listed(missing)}"
        ]


@dataclass
class _ParsedRun:
    path: Path
    checksum: str
    runs: list[tuple[trec.Run, list[tuple]]]  # each run, its RUN_TOPIC_COLUMNS without run_id


def prepare_runs(paths: Iterable[PathLike], *, split_tags: bool = False) -> list[_ParsedRun]:
    """Read, check and encode every run file without the store, so that `import_runs` of the
    result spends its write transaction (the store's write lock, on SQLite) on the writes
    alone. Raises as `import_runs` would for a bad file."""
    return list(_parsed_runs(paths, split_tags))


def _parse_run(path: PathLike | _ParsedRun, split_tags: bool) -> _ParsedRun:
    if isinstance(path, _ParsedRun):  # prepared by prepare_runs
        return path
    path = Path(path)
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    runs = trec.read_runs(path, limits=limits.STORE_LIMITS, split_tags=split_tags)
    return _ParsedRun(path, checksum, [(run, list(run_topic_rows(run))) for run in runs])


def _parsed_runs(
    paths: Iterable[PathLike | _ParsedRun], split_tags: bool
) -> Generator[_ParsedRun, None, None]:
    """The runs parsed and encoded in order, PARSE_AHEAD files ahead on worker threads
    (numpy and zlib release the GIL, so parsing overlaps the inserts); the first bad file
    raises in order."""
    pending: deque[Future[_ParsedRun]] = deque()
    with ThreadPoolExecutor(max_workers=PARSE_AHEAD) as workers:
        try:
            for path in paths:
                pending.append(workers.submit(_parse_run, path, split_tags))
                if len(pending) > PARSE_AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


# ---------------------------------------------------------------- qrels


def import_qrels(
    session: Session, campaign: Campaign, path: PathLike, *, name: str | None = None
) -> ImportReport:
    """Store a qrels file as a named QrelsSet (default name: the file name)."""
    path = Path(path)
    qrels = trec.read_qrels(path, limits=limits.STORE_LIMITS, strict=True)
    name = name or path.name
    if len(name) > limits.QRELS_SET_NAME:
        raise ServiceError(limits.length_error("qrels name", name, limits.QRELS_SET_NAME))
    exists = session.scalar(
        select(QrelsSet.id).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == name)
    )
    if exists is not None:
        raise ServiceError(f"campaign {campaign.name!r} already has qrels named {name!r}")
    qrels_set = QrelsSet(campaign_id=campaign.id, name=name, source=path.name)
    session.add(qrels_set)
    session.flush()
    rows = [
        {
            "qrels_set_id": qrels_set.id,
            "qid": qid,
            "iteration": str(iteration),
            "docno": docno,
            "rel": int(rel),
        }
        for qid, iteration, docno, rel in qrels.entries()
    ]
    if rows:
        session.execute(insert(QrelsEntry), rows)
    report = ImportReport("qrels", files=1, added=len(rows), lines=len(rows))
    unknown = sorted(set(qrels.topics()) - campaign_qids(session, campaign))
    if unknown:
        report.warnings.append(
            f"{len(unknown)} qrels topic(s) are not topics of the campaign: {listed(unknown)}"
        )
    return report
