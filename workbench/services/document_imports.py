"""Imports of documents into a campaign (JSONL or TREC SGML files).

An import writes its documents as rows of `document_rows` tagged with its `DocumentImport`,
invisible to every reader (they read the `documents` view) while the import is open; a changed
document gets a new row and a `DocumentReplacement` of its old one. One tiny transaction
commits the import (its state), which shows the new rows and hides the replaced ones at once;
the replaced rows are then deleted in short transactions and the import is done. A failed
import deletes its rows; one whose process died (its process, on this machine, is gone; or no
heartbeat for STALE_DOCUMENT_IMPORT_S) is cleared by the next import of its campaign.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import limits, processes, trec
from workbench.documents import SourceDocument, read_documents
from workbench.services import campaigns, changes
from workbench.services.errors import ServiceError
from workbench.services.import_steps import (
    DELETE_BATCH_ROWS,
    WRITE_BATCH_BYTES,
    WRITE_BATCH_ROWS,
    ImportReport,
    PathLike,
    Steps,
    caller_steps,
    store_steps,
)
from workbench.services.pools import documents_without_text, latest_pool
from workbench.services.topics import listed
from workbench.store import Store
from workbench.store.db import cast_result
from workbench.store.models import (
    Campaign,
    Document,
    DocumentImport,
    DocumentReplacement,
    DocumentRow,
    Judgement,
    Pool,
    PoolEntry,
    utcnow,
)

HEARTBEAT_S = 10.0
STALE_DOCUMENT_IMPORT_S = 12 * HEARTBEAT_S
"""A document import silent this long is dead (its owner is on another machine, or unknown)."""


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
    steps = caller_steps(session)
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
    steps = store_steps(store)
    report = _import_documents(steps, campaign_id, paths, only_pooled, format, replace, progress)
    with store.read_session() as session:
        report.warnings.extend(
            missing_text_warnings(session, campaigns.get_campaign(session, campaign_id))
        )
    return report


def _import_documents(
    steps: Steps,
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


def _open_import(steps: Steps, campaign_id: int, paths: list[PathLike]) -> int:
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
    steps: Steps,
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
    steps: Steps,
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


def _settle(steps: Steps, import_id: int) -> None:
    """Delete the rows a committed import replaced, in short transactions; then it is done."""
    _delete_rows(
        steps,
        select(DocumentReplacement.document_id).where(DocumentReplacement.import_id == import_id),
        last=lambda connection: connection.execute(
            update(DocumentImport).where(DocumentImport.id == import_id).values(state="done")
        ),
        each=lambda connection: _beat(connection, import_id),
    )


def _delete_import(steps: Steps, import_id: int) -> None:
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
    _clear_dead_imports(store_steps(store), campaign_id)


def _clear_dead_imports(steps: Steps, campaign_id: int) -> None:
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
        changes.changed(connection, campaign_id)
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
        f"{len(missing)} pooled document(s) of pool {pool.number} have neither a title nor a "
        "text in the store: " + listed(missing)
    ]
