"""Runs in the store: the RunTopic blob codec and bulk inserts.

A run is stored whole, one RunTopic row per run and topic (read through the `run_topics`
view of each run's live version; `services.run_imports` writes them), whose blobs are zlib
streams of the topic's docnos ('\\n'-joined UTF-8), scores (float64 LE) and ranks (int64 LE),
in file order (`run_topic_rows`, `load_run`). Ranks that are the lines' positions 1..n (most
runs' rank column) are stored as an empty stream (`ranks_blob`): rows written before read the
same, but a version before this encoding reads such a topic as having no ranks.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence

import numpy as np
from sqlalchemy import Connection, Table, select
from sqlalchemy.orm import Session

from workbench import trec
from workbench.store.models import Run, RunTopic

ZLIB_LEVEL = 1
SCORES_ZLIB_LEVEL = 0  # float64 scores hardly compress (~30 %) and cost most of the time


def bulk_insert(
    db: Session | Connection, table: Table, columns: Sequence[str], rows: list[tuple]
) -> None:
    """Insert many rows through the driver's executemany, in the transaction of `db`.

    SQLAlchemy's own executemany prepares every row's parameters in Python; for the hundreds
    of thousands of rows of a pool or a run collection this is the dominant cost.
    """
    if not rows:
        return
    connection = db if isinstance(db, Connection) else db.connection()
    marker = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(connection.dialect.paramstyle)
    if marker is None:  # a driver with named parameters: let SQLAlchemy bind them
        db.execute(table.insert(), [dict(zip(columns, row, strict=True)) for row in rows])
        return
    quote = connection.dialect.identifier_preparer.quote
    statement = (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join([marker] * len(columns))})"
    )
    connection.exec_driver_sql(statement, rows)


RUN_TOPIC_ROW_COLUMNS = ("version_id", "qid", "n_lines", "docnos", "scores", "ranks")


def run_topic_rows(run: trec.Run) -> Iterator[tuple]:
    """One RunTopicRow row per topic (RUN_TOPIC_ROW_COLUMNS after version_id): zlib streams of
    the docnos ('\\n'-joined UTF-8), scores (float64 LE) and ranks (int64 LE), in file order.

    Scores are stored as a level-0 (uncompressed) zlib stream: same format, no CPU spent.
    """
    for qid in run.topics():
        lines = run.topic_slice(qid)
        yield (
            qid,
            lines.stop - lines.start,
            zlib.compress(b"\n".join(run.docnos[lines].tolist()), ZLIB_LEVEL),
            zlib.compress(_little(run.scores[lines], "<f8"), SCORES_ZLIB_LEVEL),
            ranks_blob(run.ranks[lines]),
        )


NUMBERED_RANKS = zlib.compress(b"", ZLIB_LEVEL)
"""The ranks stream of a topic whose ranks are its lines' positions 1..n."""


def ranks_blob(ranks: np.ndarray) -> bytes:
    """A topic's ranks as stored: NUMBERED_RANKS when they are 1..n (nothing to compress,
    about a tenth of a run's import), else their int64 LE stream."""
    if np.array_equal(ranks, np.arange(1, len(ranks) + 1)):
        return NUMBERED_RANKS
    return zlib.compress(_little(ranks, "<i8"), ZLIB_LEVEL)


def decode_ranks(blob: bytes, n_lines: int) -> np.ndarray:
    """A RunTopic row's ranks (int64), in file order (`ranks_blob`'s inverse)."""
    stored = zlib.decompress(blob)
    if not stored:
        return np.arange(1, n_lines + 1, dtype=np.int64)
    return np.frombuffer(stored, dtype="<i8").astype(np.int64)


def _little(values: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(values, dtype=dtype).tobytes()


def decode_scores(blob: bytes) -> np.ndarray:
    """A RunTopic row's scores (float64), in file order."""
    return np.frombuffer(zlib.decompress(blob), dtype="<f8").astype(np.float64)


def decode_docnos_head(blob: bytes, count: int) -> list[bytes]:
    """The first ``count`` docnos (UTF-8 bytes) of a RunTopic row's docnos blob (all of them
    when it has fewer), inflating only as much of the stream as they take."""
    inflate = zlib.decompressobj()
    step = 32 * count + 64  # enough for a typical docno; doubled while short
    text = inflate.decompress(blob, step)
    while text.count(b"\n") < count and not inflate.eof:
        if not inflate.unconsumed_tail:
            text += inflate.flush()
            break
        step *= 2
        text += inflate.decompress(inflate.unconsumed_tail, step)
    return text.split(b"\n", count)[:count] if text else []


def load_run(session: Session, run_model: Run) -> trec.Run:
    """The parsed run rebuilt from its RunTopic blobs: same topics, lines, order and ranks."""
    columns = (RunTopic.qid, RunTopic.n_lines, RunTopic.docnos, RunTopic.scores, RunTopic.ranks)
    rows = session.execute(
        select(*columns).where(RunTopic.run_id == run_model.id).order_by(RunTopic.id)
    )  # the columns' rows, not ORM objects: a TREC run has a row per topic
    topics: list[str] = []
    counts: list[int] = []
    texts: list[bytes] = []
    scores: list[np.ndarray] = []
    ranks: list[np.ndarray] = []
    for row in rows:
        topics.append(row.qid)
        counts.append(row.n_lines)
        if row.n_lines:
            texts.append(zlib.decompress(row.docnos))
        scores.append(decode_scores(row.scores))
        ranks.append(decode_ranks(row.ranks, row.n_lines))
    return trec.Run(
        topics,
        np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).astype(np.int64),
        _docnos_array(b"\n".join(texts), sum(counts)),
        np.concatenate(scores) if scores else np.zeros(0, dtype=np.float64),
        np.concatenate(ranks) if ranks else np.zeros(0, dtype=np.int64),
        run_model.tag,
        n_lines=run_model.line_count,
    )


def _docnos_array(text: bytes, n: int) -> np.ndarray:
    """The `n` '\\n'-separated docnos of `text` as one fixed-width bytes array, as
    ``np.array(text.split(b"\\n"), dtype=bytes)`` gives it (no docnos: 'S1'). Docnos of one
    length (a collection's usual naming) are the text's bytes reshaped, without a bytes
    object per docno."""
    if not n:
        return np.zeros(0, dtype="S1")
    width, extra = divmod(len(text) + 1, n)
    if not extra and width > 1:
        rows = np.frombuffer(text + b"\n", dtype=np.uint8).reshape(n, width)
        newline = ord("\n")
        if (rows[:, -1] == newline).all() and not (rows[:, :-1] == newline).any():
            return rows[:, :-1].copy().view(f"S{width - 1}").ravel()
    docnos = text.split(b"\n")
    if len(docnos) != n:
        raise ValueError(f"a run's docnos blob holds {len(docnos)} docnos, not {n}")
    return np.array(docnos, dtype=bytes)
