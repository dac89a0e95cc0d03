"""What the imports of topics, documents, runs and qrels share: their report, their batch
sizes and where their steps run.

Each import works inside the caller's session and transaction: it raises on the first problem
(a `TrecFormatError` naming file and line, or a `ServiceError`), and the caller's
`with store.session()` rolls everything back, so a failed import leaves the store as it was.
Large inputs are read before that transaction, so that it (the store's write lock, on SQLite)
is short: `run_imports.prepare_runs` parses and encodes run files in memory,
`qrels_imports.prepare_qrels` reads a qrels file; `document_imports.import_documents_in_steps`
and `run_imports.import_runs_in_steps` write in short transactions of their own (`Steps`),
invisible until one tiny transaction shows them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from workbench.store import Store

PathLike = str | os.PathLike[str]

WRITE_BATCH_BYTES = 1 << 19
"""At most about this much document text or run blob is written per transaction (a short write
lock)."""
WRITE_BATCH_ROWS = 1000
DELETE_BATCH_ROWS = 200


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


@dataclass(frozen=True)
class Steps:
    """Where an import's steps run: `write()` opens the transaction of its next write step
    (a new short one of the store, or the caller's one), `read()` a transaction to read in."""

    write: Callable[[], AbstractContextManager[Connection]]
    read: Callable[[], AbstractContextManager[Connection]]
    own_transactions: bool


def store_steps(store: Store) -> Steps:
    """Steps each in a short transaction of the store of its own (a batch: on SQLite the
    import pauses after each one, so that the writers queued meanwhile go first)."""

    @contextmanager
    def read() -> Iterator[Connection]:
        with store.read_session() as session:
            yield session.connection()

    return Steps(store.batch_connection, read, True)


def caller_steps(session: Session) -> Steps:
    """Steps all in the caller's transaction (which rolls them all back on an error)."""
    session.flush()
    connection = session.connection()
    return Steps(lambda: nullcontext(connection), lambda: nullcontext(connection), False)
