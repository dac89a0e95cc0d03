"""Imports of topics, documents, runs and qrels into a campaign.

Each function works inside the caller's session and transaction: it raises on the first problem
(a `TrecFormatError` naming file and line, or a `ServiceError`), and the caller's
`with store.session()` rolls everything back, so a failed import leaves the store as it was.
Runs are stored whole as RunTopic blobs (one row per run and topic, bulk-inserted).

Large inputs are read before that transaction, so that it (the store's write lock, on SQLite)
is short: `prepare_runs` parses and encodes run files in memory, `prepare_qrels` reads a
qrels file; `import_documents_in_steps` and `import_runs_in_steps` write in short
transactions of their own, invisible until one tiny transaction shows them all (see
"documents" and "runs" below).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import time
from collections import deque
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Connection, CursorResult, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import limits, processes, trec
from workbench.documents import SourceDocument, read_documents
from workbench.services import campaigns
from workbench.services.errors import ServiceError
from workbench.services.pools import documents_without_text, latest_pool
from workbench.services.topics import MAX_LISTED, campaign_qids, chosen_topics, listed
from workbench.store import Store
from workbench.store.models import (
    Campaign,
    Document,
    DocumentImport,
    DocumentReplacement,
    DocumentRow,
    Judgement,
    Pool,
    PoolEntry,
    QrelsEntry,
    QrelsSet,
    Run,
    RunTopicRow,
    RunVersion,
    Topic,
    utcnow,
)
from workbench.store.runs import RUN_TOPIC_ROW_COLUMNS, bulk_insert, run_topic_rows
from workbench.trec.run_metadata import metadata_of_runs, read_run_metadata

PathLike = str | os.PathLike[str]
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
    if not statements:  # as an empty run is refused
        raise trec.TrecFormatError(str(path), 1, "", "topics (TREC <top>, TSV or JSONL)")
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
#
# An import writes its documents as rows of `document_rows` tagged with its
# `DocumentImport`, invisible to every reader (they read the `documents` view) while the
# import is open; a changed document gets a new row and a `DocumentReplacement` of its old
# one. One tiny transaction commits the import (its state), which shows the new rows and
# hides the replaced ones at once; the replaced rows are then deleted in short transactions
# and the import is done. A failed import deletes its rows; one whose process died (its
# process, on this machine, is gone; or no heartbeat for STALE_DOCUMENT_IMPORT_S) is cleared
# by the next import of its campaign.

WRITE_BATCH_BYTES = 1 << 19
"""At most about this much document text is written per transaction (a short write lock)."""
WRITE_BATCH_ROWS = 1000
DELETE_BATCH_ROWS = 200
HEARTBEAT_S = 10.0
STALE_IMPORT_S = 600.0
STALE_DOCUMENT_IMPORT_S = 12 * HEARTBEAT_S
"""A document import silent this long is dead (its owner is on another machine, or unknown)."""


@dataclass(frozen=True)
class _Steps:
    """Where an import's steps run: `write()` opens the transaction of its next write step
    (a new short one of the store, or the caller's one), `read()` a transaction to read in."""

    write: Callable[[], AbstractContextManager[Connection]]
    read: Callable[[], AbstractContextManager[Connection]]
    own_transactions: bool


def _store_steps(store: Store) -> _Steps:
    """Steps each in a short transaction of the store of its own (a batch: on SQLite the
    import pauses after each one, so that the writers queued meanwhile go first)."""

    @contextmanager
    def read() -> Iterator[Connection]:
        with store.read_session() as session:
            yield session.connection()

    return _Steps(store.batch_connection, read, True)


def _caller_steps(session: Session) -> _Steps:
    """Steps all in the caller's transaction (which rolls them all back on an error)."""
    session.flush()
    connection = session.connection()
    return _Steps(lambda: nullcontext(connection), lambda: nullcontext(connection), False)


def import_documents(
    session: Session,
    campaign: Campaign,
    paths: Iterable[PathLike],
    *,
    only_pooled: bool = False,
    format: str | None = None,
    replace: bool = False,
) -> ImportReport:
    """Make the documents of JSONL or TREC SGML files the campaign's, in the caller's
    transaction (which holds the store's write lock on SQLite for the whole import: for
    large files use `import_documents_in_steps`).

    The first of each docno is kept. A docno already stored gets the new title/text/extra;
    only_pooled keeps just the documents some pool of the campaign holds. A new title or
    text for a document someone has judged is refused unless replace=True; then each current
    judgement of it gets a log event saying so (same grade, its comment noting the file).
    Warns about pooled documents still without text.
    """
    steps = _caller_steps(session)
    report = _import_documents(steps, campaign.id, paths, only_pooled, format, replace, None)
    report.warnings.extend(missing_text_warnings(session, campaign))
    return report


def import_documents_in_steps(
    store: Store,
    campaign: int | str,
    paths: Iterable[PathLike],
    *,
    only_pooled: bool = False,
    format: str | None = None,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ImportReport:
    """`import_documents` in short transactions of the store (campaign: its id or name), so
    that no write lock is held for long and none while a file is read: the documents are
    written invisible, then shown all at once by one tiny transaction (or never: a bad file
    or a refusal deletes what was written). One import of a campaign at a time."""

    with store.read_session() as session:
        campaign_id = campaigns.get_campaign(session, campaign).id
    steps = _store_steps(store)
    report = _import_documents(steps, campaign_id, paths, only_pooled, format, replace, progress)
    with store.read_session() as session:
        report.warnings.extend(
            missing_text_warnings(session, campaigns.get_campaign(session, campaign_id))
        )
    return report


def _import_documents(
    steps: _Steps,
    campaign_id: int,
    paths: Iterable[PathLike],
    only_pooled: bool,
    format: str | None,
    replace: bool,
    progress: Callable[[str], None] | None,
) -> ImportReport:
    paths = list(paths)
    _clear_dead_imports(steps, campaign_id)
    import_id = _open_import(steps, campaign_id, paths)
    try:
        report = _write_documents(
            steps, campaign_id, import_id, paths, only_pooled, format, replace, progress
        )
    except BaseException:
        if steps.own_transactions:  # else the caller's transaction rolls it all back
            with suppress(Exception):  # if this fails too, the next import clears it
                _delete_import(steps, import_id)
        raise
    _settle(steps, import_id)
    return report


def _open_import(steps: _Steps, campaign_id: int, paths: list[PathLike]) -> int:
    """A new open import of the campaign; refused while another one is under way."""
    files = "\n".join(Path(path).name[: limits.FILE_NAME] for path in paths)
    now = utcnow()
    started, last = now, now
    try:
        with steps.write() as connection:
            other = connection.execute(
                select(DocumentImport.started_at, DocumentImport.heartbeat_at).where(
                    DocumentImport.campaign_id == campaign_id, DocumentImport.state != "done"
                )
            ).first()
            if other is None:
                added = connection.execute(
                    insert(DocumentImport).values(
                        campaign_id=campaign_id,
                        files=files,
                        started_at=now,
                        heartbeat_at=now,
                        owner=processes.this_process(),
                    )
                )
                key = added.inserted_primary_key
                assert key is not None
                return int(key[0])
            started, last = other
    except IntegrityError:  # another process opened one at the same moment (a server store)
        pass
    seconds = (now - last).total_seconds()
    since = f"{started:%Y-%m-%d %H:%M:%S}"
    raise ServiceError(
        f"another document import into this campaign is under way (started {since} UTC, "
        f"last active {max(0, round(seconds))} s ago); try again when it is "
        f"done (an import whose process died is cleared at once on its machine, and after "
        f"{STALE_DOCUMENT_IMPORT_S:.0f} s without a heartbeat from another)"
    )


def _write_documents(
    steps: _Steps,
    campaign_id: int,
    import_id: int,
    paths: list[PathLike],
    only_pooled: bool,
    format: str | None,
    replace: bool,
    progress: Callable[[str], None] | None,
) -> ImportReport:
    """Write the documents of `paths` invisible under the open import, then commit it."""
    report = ImportReport("documents", files=len(paths))
    with steps.read() as connection:
        pooled = _pooled_docnos(connection, campaign_id) if only_pooled else None
        judged = set(
            connection.scalars(
                select(Judgement.docno).where(Judgement.campaign_id == campaign_id).distinct()
            )
        )
        judgements_seen = connection.scalar(select(func.max(Judgement.id))) or 0
    retexted: dict[str, str] = {}  # docno -> file, of each document whose title or text changes
    replaced_judged: dict[str, str] = {}
    duplicates = 0
    for batch, read, repeated in _document_batches(paths, format, pooled, report):
        duplicates += repeated
        report.lines += read
        with steps.read() as connection:
            stored = {
                row.docno: row
                for row in connection.execute(
                    select(
                        Document.id, Document.docno, Document.title, Document.text, Document.extra
                    ).where(
                        Document.campaign_id == campaign_id,
                        Document.docno.in_([document.docno for _, document in batch]),
                    )
                )
            }
        rows: list[dict[str, Any]] = []
        replaced: list[dict[str, int]] = []
        for source, document in batch:
            old = stored.get(document.docno)
            if old is not None:
                report.updated += 1
                if (old.title, old.text, old.extra) == (
                    document.title,
                    document.text,
                    document.extra,
                ):
                    continue
                if (old.title, old.text) != (document.title, document.text):
                    retexted[document.docno] = source
                    if document.docno in judged:
                        if not replace:
                            raise _judged_refusal(source, document.docno, "")
                        replaced_judged[document.docno] = source
                replaced.append({"import_id": import_id, "document_id": old.id})
            else:
                report.added += 1
            rows.append(
                {
                    "campaign_id": campaign_id,
                    "import_id": import_id,
                    "docno": document.docno,
                    "title": document.title,
                    "text": document.text,
                    "extra": document.extra,
                }
            )
        with steps.write() as connection:
            if rows:
                connection.execute(insert(DocumentRow), rows)
            if replaced:
                connection.execute(insert(DocumentReplacement), replaced)
            _beat(connection, import_id)
        if progress is not None:
            progress(f"{report.lines} documents read")
    with steps.write() as connection:
        late = connection.scalars(
            select(Judgement.docno)
            .where(Judgement.campaign_id == campaign_id, Judgement.id > judgements_seen)
            .distinct()
        )
        for docno in sorted(set(late) & set(retexted) - set(replaced_judged)):
            if not replace:
                raise _judged_refusal(retexted[docno], docno, " while the import ran")
            replaced_judged[docno] = retexted[docno]
        events = log_replaced_documents(connection, campaign_id, replaced_judged)
        committed = connection.execute(
            update(DocumentImport)
            .where(DocumentImport.id == import_id, DocumentImport.state == "open")
            .values(
                state="committed",
                committed_at=utcnow(),
                heartbeat_at=utcnow(),
                added=report.added,
                updated=report.updated,
            )
        )
        if cast_result(committed).rowcount != 1:
            raise ServiceError("the document import was cleared as dead while it ran; retry it")
    if duplicates:
        report.warnings.append(
            f"{duplicates} document(s) appeared more than once; the first was kept"
        )
    if replaced_judged:
        report.warnings.append(
            f"{len(replaced_judged)} judged document(s) got a new title or text, recorded as "
            f"{events} judgement log event(s): {listed(sorted(replaced_judged))}"
        )
    return report


def _judged_refusal(source: str, docno: str, when: str) -> ServiceError:
    return ServiceError(
        f"{source}: document {docno!r} has been judged{when} and this file changes its title "
        "or text (ask for replacement to change it; the judgement log will record it)"
    )


def _pooled_docnos(connection: Connection, campaign_id: int) -> set[str]:
    return set(
        connection.scalars(
            select(PoolEntry.docno)
            .join(Pool, Pool.id == PoolEntry.pool_id)
            .where(Pool.campaign_id == campaign_id)
            .distinct()
        )
    )


def _document_batches(
    paths: list[PathLike], format: str | None, pooled: set[str] | None, report: ImportReport
) -> Iterator[tuple[list[tuple[str, SourceDocument]], int, int]]:
    """The documents of `paths` (first of each docno; only pooled ones when `pooled`) in
    batches of about WRITE_BATCH_BYTES, each with the documents read for it and the repeated
    docnos among them; a batch at least every HEARTBEAT_S, even an empty one."""
    batch: list[tuple[str, SourceDocument]] = []
    size = read = repeated = 0
    seen: set[str] = set()
    last = time.monotonic()
    for path in paths:
        source = Path(path).name[: limits.FILE_NAME]
        found = 0
        for document in read_documents(path, format=format, limits=limits.STORE_LIMITS):
            read += 1
            found += 1
            if document.docno in seen:
                repeated += 1
                continue
            seen.add(document.docno)
            if pooled is not None and document.docno not in pooled:
                report.skipped += 1
            else:
                batch.append((source, document))
                size += len(document.title) + len(document.text) + 100
            due = time.monotonic() - last >= HEARTBEAT_S
            if size >= WRITE_BATCH_BYTES or len(batch) >= WRITE_BATCH_ROWS or due:
                yield batch, read, repeated
                batch, size, read, repeated, last = [], 0, 0, 0, time.monotonic()
        if not found:  # as an empty run is refused
            raise trec.TrecFormatError(str(path), 1, "", "documents (JSONL or TREC <DOC>)")
    yield batch, read, repeated


def _beat(connection: Connection, import_id: int) -> None:
    connection.execute(
        update(DocumentImport).where(DocumentImport.id == import_id).values(heartbeat_at=utcnow())
    )


def _delete_rows(
    steps: _Steps,
    ids: Select[int],
    last: Callable[[Connection], object],
    each: Callable[[Connection], object] = lambda _connection: None,
) -> None:
    """Delete the document rows `ids` selects, DELETE_BATCH_ROWS per short transaction; `each`
    runs in every transaction, `last` in the one that finds none left."""
    while True:
        with steps.write() as connection:
            deleted = connection.execute(
                delete(DocumentRow).where(
                    DocumentRow.id.in_(ids.limit(DELETE_BATCH_ROWS).scalar_subquery())
                )
            )
            each(connection)
            if not cast_result(deleted).rowcount:
                last(connection)
                return


def _settle(steps: _Steps, import_id: int) -> None:
    """Delete the rows a committed import replaced, in short transactions; then it is done."""
    _delete_rows(
        steps,
        select(DocumentReplacement.document_id).where(DocumentReplacement.import_id == import_id),
        last=lambda connection: connection.execute(
            update(DocumentImport).where(DocumentImport.id == import_id).values(state="done")
        ),
        each=lambda connection: _beat(connection, import_id),
    )


def _delete_import(steps: _Steps, import_id: int) -> None:
    """Delete an import that is not committed, with its rows, in short transactions."""
    _delete_rows(
        steps,
        select(DocumentRow.id).where(DocumentRow.import_id == import_id),
        last=lambda connection: connection.execute(
            delete(DocumentImport).where(DocumentImport.id == import_id)
        ),
    )


def clear_dead_document_imports(store: Store, campaign_id: int) -> None:
    """Finish the document imports of the campaign whose process died, in short transactions
    (what the next import does first; a job whose importing child died calls it at once)."""
    _clear_dead_imports(_store_steps(store), campaign_id)


def _clear_dead_imports(steps: _Steps, campaign_id: int) -> None:
    """Finish the imports of the campaign whose process died (gone from this machine, or
    silent for STALE_DOCUMENT_IMPORT_S): committed ones are settled, open ones deleted."""
    horizon = utcnow() - dt.timedelta(seconds=STALE_DOCUMENT_IMPORT_S)
    with steps.read() as connection:
        unfinished = connection.execute(
            select(
                DocumentImport.id,
                DocumentImport.state,
                DocumentImport.heartbeat_at,
                DocumentImport.owner,
            ).where(DocumentImport.campaign_id == campaign_id, DocumentImport.state != "done")
        ).all()
    dead = [
        (import_id, state)
        for import_id, state, beat, owner in unfinished
        if beat < horizon or processes.is_dead(owner)
    ]
    for import_id, state in dead:
        if state == "committed":
            _settle(steps, import_id)
        else:
            _delete_import(steps, import_id)


def cast_result(result: Any) -> CursorResult[Any]:
    """A DML statement's result (a CursorResult, which has a rowcount)."""
    assert isinstance(result, CursorResult)
    return result


def log_replaced_documents(
    connection: Connection, campaign_id: int, replaced: dict[str, str]
) -> int:
    """Append, for each current judgement of a replaced document, an event that repeats it
    (grade, reason, comment) with a note naming the import file; returns the event count."""
    latest: dict[tuple[str, str, int], Any] = {}
    docnos = sorted(replaced)
    for at in range(0, len(docnos), WRITE_BATCH_ROWS):
        rows = connection.execute(
            select(
                Judgement.qid,
                Judgement.docno,
                Judgement.user_id,
                Judgement.grade,
                Judgement.cannot_judge,
                Judgement.comment,
                Judgement.position,
            )
            .where(
                Judgement.campaign_id == campaign_id,
                Judgement.docno.in_(docnos[at : at + WRITE_BATCH_ROWS]),
            )
            .order_by(Judgement.id)
        )
        for row in rows:
            latest[(row.qid, row.docno, row.user_id)] = row
    events = [
        {
            "campaign_id": campaign_id,
            "qid": qid,
            "docno": docno,
            "user_id": user_id,
            "grade": current.grade,
            "cannot_judge": current.cannot_judge,
            "comment": (
                f"{current.comment} [document text replaced by the import of {replaced[docno]}]"
            ).strip(),
            "time_spent_ms": 0,
            "position": current.position,
        }
        for (qid, docno, user_id), current in sorted(latest.items(), key=lambda kv: kv[0])
    ]
    if events:
        connection.execute(insert(Judgement), events)
    return len(events)


def missing_text_warnings(session: Session, campaign: Campaign) -> list[str]:
    """A warning listing the documents of the campaign's latest pool that have no text."""
    pool = latest_pool(session, campaign)
    if pool is None:
        return []
    missing = documents_without_text(session, pool)
    if not missing:
        return []
    return [
        f"{len(missing)} pooled document(s) of pool {pool.number} have no text in the store: "
        + listed(missing)
    ]


# ---------------------------------------------------------------- runs
#
# An import writes each run's lines as a new `RunVersion` ('open'), whose RunTopicRow rows
# no reader sees (readers read the `run_topics` view of live versions), in transactions of
# at most about WRITE_BATCH_BYTES. Then one tiny transaction re-checks what may have changed
# meanwhile (tags taken, topics deleted, versions cleared), stores the Run rows (a replaced
# run keeps its id and gets the new fields) and makes the new versions live and the ones
# they replace dead: every run of the import appears at once, or none. Dead versions are then
# deleted in short transactions. A failed import deletes its versions; the open versions of
# a process that died (no heartbeat for STALE_IMPORT_S) and dead versions left behind are
# cleared by the next run import of the campaign.


@dataclass(frozen=True)
class RunOptions:
    """How `import_runs` stores runs (see its docstring)."""

    replace: bool = False
    group: str = ""
    contributes: bool = True
    split_tags: bool = False
    topics: Collection[str] | None = None
    skip_unknown_topics: bool = False


@dataclass
class _WrittenRun:
    """A run written as an open version, waiting for the import's commit."""

    tag: str
    path: Path
    version_id: int
    run_id: int | None  # the stored run it replaces
    qids: frozenset[str]
    fields: dict[str, Any]


def import_runs(
    session: Session,
    campaign: Campaign,
    paths: Iterable[PathLike | _ParsedRun],
    **options: Any,
) -> ImportReport:
    """Store each run whole, in the caller's transaction (which holds the store's write lock
    on SQLite for the whole import: for large files use `import_runs_in_steps`). Options
    (`RunOptions`):

    A tag already in the campaign is refused unless replace=True (the run keeps its id, so
    pools that name it still do). group and contributes are stored with each run. A file
    with two tags is refused unless split_tags (one run per tag). topics: keep only these
    campaign topics of every run (a judged subset); topics the campaign lacks are an error
    that lists them, unless skip_unknown_topics (they are left out and reported). Docnos the
    campaign's documents lack are imported and reported.
    """
    report = _import_runs(_caller_steps(session), campaign.id, paths, RunOptions(**options))
    for run in [obj for obj in session.identity_map.values() if isinstance(obj, Run)]:
        session.expire(run)  # its fields were written without the ORM
    return report


def import_runs_in_steps(
    store: Store,
    campaign: int | str,
    paths: Iterable[PathLike | _ParsedRun],
    **options: Any,
) -> ImportReport:
    """`import_runs` in short transactions of the store (campaign: its id or name), so that
    no write lock is held for long and none while a file is read: the runs are written
    invisible, then shown all at once by one tiny transaction (or never: a bad file or a
    refusal deletes what was written)."""

    with store.read_session() as session:
        campaign_id = campaigns.get_campaign(session, campaign).id
    return _import_runs(_store_steps(store), campaign_id, paths, RunOptions(**options))


def _import_runs(
    steps: _Steps,
    campaign_id: int,
    paths: Iterable[PathLike | _ParsedRun],
    options: RunOptions,
) -> ImportReport:
    if len(options.group) > limits.RUN_GROUP:
        raise ServiceError(limits.length_error("run group", options.group, limits.RUN_GROUP))
    with steps.read() as connection, Session(connection) as session:  # before any write
        campaign = session.get_one(Campaign, campaign_id)
        name = campaign.name
        known_qids = campaign_qids(session, campaign)
        stored = _stored_runs(session, campaign_id)
        documents = DocnoSet(session, campaign)
    chosen = (
        known_qids
        if options.topics is None
        else chosen_topics(options.topics, known_qids, campaign)
    )
    _clear_dead_versions(steps, campaign_id)
    report = ImportReport("runs")
    batch_tags: dict[str, str] = {}
    written: list[_WrittenRun] = []
    versions: list[int] = []  # every version opened, written or not
    try:
        with closing(_parsed_runs(paths, options.split_tags)) as parsed_runs:
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
                        run, all_rows, path, name, known_qids, chosen, report, options
                    )
                    run_id = stored.get(run.tag)
                    if run_id is not None and not options.replace:
                        raise _tag_taken(path, name, run.tag)
                    version_id = _open_version(steps, campaign_id, run_id)
                    versions.append(version_id)
                    _write_version(steps, version_id, rows, versions)
                    fields = {
                        "file_name": path.name,
                        "checksum": parsed.checksum,
                        "group": options.group,
                        "contributes": options.contributes,
                        "line_count": sum(row[1] for row in rows),
                        "ir_metadata": parsed.metadata.get(run.tag),
                    }
                    qids = frozenset(row[0] for row in rows)
                    written.append(_WrittenRun(run.tag, path, version_id, run_id, qids, fields))
                    report.warnings.extend(documents.missing_warning(run, qids))
        try:
            _commit_runs(steps, campaign, written, options.replace, report)
        except IntegrityError:  # a server store: another import's commit at the same moment
            raise ServiceError(
                "another import stored or replaced one of these runs at the same moment; "
                "nothing was imported: retry it"
            ) from None
    except BaseException:
        if steps.own_transactions:  # else the caller's transaction rolls it all back
            with suppress(Exception):  # if this fails too, the next import clears it
                _delete_versions(steps, RunVersion.id.in_(versions))
        raise
    _delete_versions(steps, (RunVersion.campaign_id == campaign_id) & (RunVersion.state == "dead"))
    return report


def _stored_runs(db: Session | Connection, campaign_id: int) -> dict[str, int]:
    """The campaign's runs: tag -> id."""
    rows = db.execute(select(Run.tag, Run.id).where(Run.campaign_id == campaign_id))
    return {tag: run_id for tag, run_id in rows}


def _tag_taken(path: Path, campaign_name: str, tag: str) -> ServiceError:
    return ServiceError(
        f"{path}: campaign {campaign_name!r} already has a run tagged {tag!r} "
        "(ask for replacement to overwrite it)"
    )


def _open_version(steps: _Steps, campaign_id: int, run_id: int | None) -> int:
    with steps.write() as connection:
        added = connection.execute(
            insert(RunVersion).values(
                campaign_id=campaign_id, run_id=run_id, state="open", heartbeat_at=utcnow()
            )
        )
    key = added.inserted_primary_key
    assert key is not None
    return int(key[0])


def _write_version(steps: _Steps, version_id: int, rows: list[tuple], versions: list[int]) -> None:
    """Write the RunTopicRow rows of an open version, about WRITE_BATCH_BYTES of blobs per
    transaction, each beating the heartbeat of the import's open `versions`."""
    at = 0
    while at < len(rows):
        size, end = 0, at
        while end < len(rows) and (end == at or size < WRITE_BATCH_BYTES):
            size += sum(len(blob) for blob in rows[end][2:])
            end += 1
        with steps.write() as connection:
            bulk_insert(
                connection,
                RunTopicRow.__table__,
                RUN_TOPIC_ROW_COLUMNS,
                [(version_id, *row) for row in rows[at:end]],
            )
            connection.execute(
                update(RunVersion)
                .where(RunVersion.id.in_(versions), RunVersion.state == "open")
                .values(heartbeat_at=utcnow())
            )
        at = end


def _commit_runs(
    steps: _Steps,
    campaign: Campaign,
    written: list[_WrittenRun],
    replace: bool,
    report: ImportReport,
) -> None:
    """Show every written run at once: one short transaction that re-checks the refusals
    (a tag stored meanwhile, a topic deleted, a version cleared or its run deleted), stores
    the runs and makes their versions live and the replaced ones dead."""
    with steps.write() as connection, Session(connection) as session:
        ids = [w.version_id for w in written]
        still_open = connection.scalar(
            select(func.count())
            .select_from(RunVersion)
            .where(RunVersion.id.in_(ids), RunVersion.state == "open")
        )
        if still_open != len(ids):
            raise ServiceError(
                "a run or the campaign was deleted while the run import ran (or the import "
                "was cleared as dead); nothing was imported: retry it"
            )
        qids = campaign_qids(session, campaign)
        stored = _stored_runs(connection, campaign.id)
        for run in written:
            gone = sorted(run.qids - qids)
            if gone:
                raise ServiceError(
                    f"{run.path}: run {run.tag!r}: topic(s) {listed(gone)} were deleted from "
                    "the campaign while the import ran; nothing was imported"
                )
            run_id = stored.get(run.tag)
            if run_id is None:
                added = connection.execute(
                    insert(Run).values(campaign_id=campaign.id, tag=run.tag, **run.fields)
                )
                key = added.inserted_primary_key
                assert key is not None
                run_id = int(key[0])
                report.added += 1
            else:
                if run.run_id is None and not replace:
                    raise _tag_taken(run.path, campaign.name, run.tag)
                connection.execute(update(Run).where(Run.id == run_id).values(**run.fields))
                connection.execute(
                    update(RunVersion)
                    .where(RunVersion.run_id == run_id, RunVersion.state == "live")
                    .values(state="dead")
                )
                report.updated += 1
            connection.execute(
                update(RunVersion)
                .where(RunVersion.id == run.version_id)
                .values(run_id=run_id, state="live", heartbeat_at=utcnow())
            )


def _delete_versions(steps: _Steps, which: Any) -> None:
    """Delete the run versions `which` selects with their rows, DELETE_BATCH_ROWS rows per
    short transaction, then the versions themselves."""
    versions = select(RunVersion.id).where(which)
    while True:
        with steps.write() as connection:
            deleted = connection.execute(
                delete(RunTopicRow).where(
                    RunTopicRow.id.in_(
                        select(RunTopicRow.id)
                        .where(RunTopicRow.version_id.in_(versions))
                        .limit(DELETE_BATCH_ROWS)
                        .scalar_subquery()
                    )
                )
            )
            if not cast_result(deleted).rowcount:
                connection.execute(delete(RunVersion).where(which))
                return


def _clear_dead_versions(steps: _Steps, campaign_id: int) -> None:
    """Delete the campaign's dead versions and the open ones whose import died."""
    horizon = utcnow() - dt.timedelta(seconds=STALE_IMPORT_S)
    stale = (RunVersion.state == "open") & (RunVersion.heartbeat_at < horizon)
    _delete_versions(
        steps, (RunVersion.campaign_id == campaign_id) & ((RunVersion.state == "dead") | stale)
    )


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
    campaign_name: str,
    known: set[str],
    chosen: set[str],
    report: ImportReport,
    options: RunOptions,
) -> list[tuple]:
    """The RunTopic rows of the run's chosen topics; unknown topics refused or reported."""
    unknown = [qid for qid in run.topics() if qid not in known]
    if unknown and not options.skip_unknown_topics:
        raise ServiceError(
            f"{path}: run {run.tag!r} names {len(unknown)} topic(s) the campaign "
            f"{campaign_name!r} lacks: {listed(unknown)} (skip unknown topics to leave them out)"
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

    def missing_warning(self, run: trec.Run, qids: Collection[str]) -> list[str]:
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
        # distinct by hash (a uint64 sort), and only the first MAX_LISTED docnos sorted: the
        # sort of every distinct docno as text took most of a large import's time
        _, first = np.unique(run.docno_hashes[lacking], return_index=True)
        if self.hashes is None:  # nothing to list: no docno of the run has a document
            return [
                f"run {run.tag!r}: its {len(first)} docno(s) have no text: the campaign has no "
                "documents yet (pooled, they show 'no text' until imported)"
            ]
        distinct = run.docnos[lacking[first]]
        if len(distinct) > MAX_LISTED:
            distinct = np.partition(distinct, MAX_LISTED)[:MAX_LISTED]
        shown = sorted(d.decode() for d in distinct.tolist())  # UTF-8 order is text order
        more = f" and {len(first) - len(shown)} more" if len(first) > len(shown) else ""
        return [
            f"run {run.tag!r}: {len(first)} docno(s) are not among the campaign's documents "
            f"({self.count} documents; pooled, they show 'no text' until imported): "
            f"{listed(shown)}{more}"
        ]


@dataclass
class _ParsedRun:
    path: Path
    checksum: str
    runs: list[tuple[trec.Run, list[tuple]]]  # each run, its RUN_TOPIC_ROW_COLUMNS but the first
    metadata: dict[str, str] = field(default_factory=dict)  # run tag -> its ir_metadata YAML


def prepare_runs(paths: Iterable[PathLike], *, split_tags: bool = False) -> list[_ParsedRun]:
    """Read, check and encode every run file without the store, so that `import_runs` of the
    result spends its write transactions (the store's write lock, on SQLite) on the writes
    alone. Raises as `import_runs` would for a bad file."""
    return list(_parsed_runs(paths, split_tags))


def _parse_run(path: PathLike | _ParsedRun, split_tags: bool) -> _ParsedRun:
    if isinstance(path, _ParsedRun):  # prepared by prepare_runs
        return path
    path = Path(path)
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    runs = trec.read_runs(path, limits=limits.STORE_LIMITS, split_tags=split_tags)
    block = read_run_metadata(path)  # ir_metadata (PRIMAD) from the file's comment lines
    metadata = metadata_of_runs(block, [run.tag for run in runs], str(path))
    return _ParsedRun(
        path,
        checksum,
        [(run, list(run_topic_rows(run))) for run in runs],
        {tag: block.text for tag, block in metadata.items()},
    )


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


@dataclass(frozen=True)
class PreparedQrels:
    """A qrels file read and checked without the store (`prepare_qrels`): its labels as
    (qid, iteration, docno, rel) in file order."""

    path: Path
    topics: frozenset[str]
    entries: list[tuple[str, str, str, int]]


def prepare_qrels(paths: Iterable[PathLike]) -> list[PreparedQrels]:
    """Read and check qrels files before the write transaction of `import_qrels`, which then
    only writes. Raises as `import_qrels` would for a bad file."""
    prepared = []
    for path in paths:
        qrels = trec.read_qrels(path, limits=limits.STORE_LIMITS, strict=True)
        entries = [
            (qid, str(iteration), docno, int(rel)) for qid, iteration, docno, rel in qrels.entries()
        ]
        prepared.append(PreparedQrels(Path(path), frozenset(qrels.topics()), entries))
    return prepared


def import_qrels(
    session: Session,
    campaign: Campaign,
    source: PathLike | PreparedQrels,
    *,
    name: str | None = None,
) -> ImportReport:
    """Store a qrels file (read here, or by `prepare_qrels`) as a named QrelsSet (default
    name: the file name)."""
    qrels = source if isinstance(source, PreparedQrels) else prepare_qrels([source])[0]
    name = name or qrels.path.name
    if len(name) > limits.QRELS_SET_NAME:
        raise ServiceError(limits.length_error("qrels name", name, limits.QRELS_SET_NAME))
    exists = session.scalar(
        select(QrelsSet.id).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == name)
    )
    if exists is not None:
        raise ServiceError(f"campaign {campaign.name!r} already has qrels named {name!r}")
    qrels_set = QrelsSet(campaign_id=campaign.id, name=name, source=qrels.path.name)
    session.add(qrels_set)
    session.flush()
    rows = [
        {
            "qrels_set_id": qrels_set.id,
            "qid": qid,
            "iteration": iteration,
            "docno": docno,
            "rel": rel,
        }
        for qid, iteration, docno, rel in qrels.entries
    ]
    if rows:
        session.execute(insert(QrelsEntry), rows)
    report = ImportReport("qrels", files=1, added=len(rows), lines=len(rows))
    unknown = sorted(qrels.topics - campaign_qids(session, campaign))
    if unknown:
        report.warnings.append(
            f"{len(unknown)} qrels topic(s) are not topics of the campaign: {listed(unknown)}"
        )
    return report
