"""Query-log imports (anonymised): a log is read twice, first outside any transaction (the
users of each query are counted), so that any bad line raises before anything is written; then
the impressions of queries with at least k users are kept and written in batches, in memory
bounded by a batch and the distinct queries (`import_query_log_in_steps`: in short
transactions, the log invisible until its last one).

Impressions are matched to topics by the normalised, masked query text (`querylog.query_key`)
of the topic's title, or by an explicit mapping file (``qid<TAB>query``); impressions of other
queries are kept (they count in E(p), the expected click rate per rank over all queries) but
give no preferences. What is done with a stored log is `services.querylogs`.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import limits, processes, querylog
from workbench.services import campaigns
from workbench.services.errors import ServiceError, found
from workbench.services.querylogs import IMPORTING, READY, QueryLogSummary, summarise
from workbench.store import Store
from workbench.store.models import Campaign, QueryLog, QueryLogImpression, Topic, utcnow

PathLike = str | os.PathLike[str]
BATCH = 2000
STALE_IMPORT_S = 120.0
"""A log import whose heartbeat (one per batch) is this old is dead (its owner, when on this
machine, is checked at once)."""


@dataclass(frozen=True)
class LogSource:
    """A log file to import and how: the anonymisation key, k (`min_users`), the format
    (None: from the suffix), an optional mapping file (``qid<TAB>query``) and the log's name
    (None: the file name)."""

    path: Path
    key: bytes
    min_users: int = querylog.DEFAULT_MIN_USERS
    format: str | None = None
    mapping: Path | None = None
    name: str | None = None

    @property
    def log_name(self) -> str:
        return self.name or self.path.name[: limits.FILE_NAME]


def _observed(source: LogSource) -> tuple[querylog.LogAnonymiser, dict[str, str] | None]:
    """The first pass over the log (each query's users, up to k) and the mapping file, read
    outside any transaction: a bad line is refused before anything is written."""
    try:
        anonymiser = querylog.LogAnonymiser(source.key, min_users=source.min_users)
    except ValueError as error:
        raise ServiceError(str(error)) from None
    anonymiser.observe(querylog.read_log(source.path, format=source.format))
    mapping = querylog.read_query_mapping(source.mapping) if source.mapping is not None else None
    return anonymiser, mapping


def _impression_rows(
    source: LogSource,
    anonymiser: querylog.LogAnonymiser,
    log_id: int,
    topic_of: dict[str, str],
) -> Iterator[list[dict[str, Any]]]:
    """The second pass: the kept impressions as rows of the log, BATCH at a time (memory
    holds one batch, whatever the size of the log)."""
    batch: list[dict[str, Any]] = []
    for imp in anonymiser.keep(querylog.read_log(source.path, format=source.format)):
        batch.append(
            {
                "query_log_id": log_id,
                "line": imp.line,
                "session": imp.session,
                "user_hash": imp.user,
                "query": imp.query,
                "query_key": imp.query_key,
                "qid": topic_of.get(imp.query_key),
                "time": imp.time,
                "results": list(imp.results),
                "clicks": [[c.docno, c.time] for c in imp.clicks],
            }
        )
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _topic_keys(
    session: Session, campaign: Campaign, mapping: dict[str, str] | None, source: LogSource
) -> dict[str, str]:
    """{query key: qid}: from the mapping file, else from the topics' titles."""
    topics = {
        qid: title
        for qid, title in session.execute(
            select(Topic.qid, Topic.title).where(Topic.campaign_id == campaign.id)
        )
    }
    if mapping is not None:
        unknown = sorted(set(mapping.values()) - set(topics))
        if unknown:
            name = source.mapping.name if source.mapping is not None else "the mapping"
            raise ServiceError(
                f"{name}: topics not in campaign {campaign.name!r}: " + ", ".join(unknown[:20])
            )
        return mapping
    keys: dict[str, str] = {}
    for qid in sorted(topics):
        key = querylog.query_key(topics[qid])
        if not key:
            continue
        if key in keys:
            raise ServiceError(
                f"topics {keys[key]} and {qid} have the same normalised title {key!r}: "
                "give a mapping file (qid<TAB>query) to say which query is which topic"
            )
        keys[key] = qid
    return keys


def _new_log(
    session: Session, campaign: Campaign, source: LogSource, mapping: dict[str, str] | None
) -> tuple[QueryLog, dict[str, str]]:
    """The log's row (its report still empty) and the topic of each query key; refused when
    the name is taken or too long."""
    name = source.log_name
    if len(name) > limits.QUERY_LOG_NAME:
        raise ServiceError(limits.length_error("query log name", name, limits.QUERY_LOG_NAME))
    taken = session.scalar(
        select(QueryLog.state).where(QueryLog.campaign_id == campaign.id, QueryLog.name == name)
    )
    if taken is not None:
        being = " (being imported)" if taken == IMPORTING else ""
        raise ServiceError(
            f"campaign {campaign.name!r} already has a query log named {name!r}{being}"
        )
    topic_of = _topic_keys(session, campaign, mapping, source)
    log = QueryLog(
        campaign_id=campaign.id,
        name=name,
        source=source.path.name[: limits.FILE_NAME],
        key_fingerprint=querylog.key_fingerprint(source.key),
        min_users=source.min_users,
        report={},
    )
    session.add(log)
    session.flush()
    return log, topic_of


def _finished(
    session: Session, log: QueryLog, anonymiser: querylog.LogAnonymiser
) -> QueryLogSummary:
    """Record the log's anonymisation report and make it ready (seen by readers)."""
    log.report = {"anonymisation": anonymiser.report().to_dict()}
    log.state, log.heartbeat_at = READY, None
    session.flush()
    summary = summarise(session, log)
    if summary.impressions and not summary.mapped_impressions:
        summary = _with_warning(summary, "no impression matches a topic of the campaign")
    return summary


def import_query_log(
    session: Session,
    campaign: Campaign,
    path: PathLike,
    *,
    key: bytes,
    name: str | None = None,
    min_users: int = querylog.DEFAULT_MIN_USERS,
    format: str | None = None,
    mapping: PathLike | None = None,
) -> QueryLogSummary:
    """Import a log in the caller's transaction (for large logs, and beside judging, use
    :func:`import_query_log_in_steps`): read twice (count each query's users, then keep the
    queries with at least k), the rows written BATCH at a time."""
    source = LogSource(Path(path), key, min_users, format, Path(mapping) if mapping else None, name)
    anonymiser, mapped = _observed(source)
    log, topic_of = _new_log(session, campaign, source, mapped)
    for rows in _impression_rows(source, anonymiser, log.id, topic_of):
        session.execute(insert(QueryLogImpression), rows)
    return _finished(session, log, anonymiser)


def import_query_log_in_steps(
    store: Store,
    campaign: int | str,
    source: LogSource,
    *,
    progress: Callable[[str], None] = lambda _text: None,
) -> QueryLogSummary:
    """Import a log (campaign: its id or name) in short transactions, in bounded memory: the
    log is read once to count each query's users (nothing written), then its kept
    impressions are written BATCH at a time under a log in state 'importing', which no
    reader sees, and one tiny transaction makes it 'ready' (or a failure deletes it). An
    import whose process died is deleted by the next import of the campaign."""
    with store.read_session() as session:
        campaign_id = campaigns.get_campaign(session, campaign).id
    progress("reading the log: the users of each query")
    anonymiser, mapped = _observed(source)
    clear_dead_query_log_imports(store, campaign_id)
    try:
        with store.session() as session:
            log, topic_of = _new_log(session, _campaign_row(session, campaign_id), source, mapped)
            log.state, log.owner, log.heartbeat_at = IMPORTING, processes.this_process(), utcnow()
            session.flush()
            log_id = log.id
    except IntegrityError:  # another import took the name meanwhile
        raise ServiceError(f"a query log named {source.log_name!r} is being imported") from None
    try:
        written = 0
        for rows in _impression_rows(source, anonymiser, log_id, topic_of):
            with store.batch_connection() as connection:
                connection.execute(insert(QueryLogImpression), rows)
                connection.execute(
                    update(QueryLog).where(QueryLog.id == log_id).values(heartbeat_at=utcnow())
                )
            written += len(rows)
            progress(f"{written} impressions stored")
        with store.session() as session:
            written_log = session.get(QueryLog, log_id)
            if written_log is None or written_log.state != IMPORTING:
                raise ServiceError("the query-log import was cleared as dead while it ran; retry")
            return _finished(session, written_log, anonymiser)
    except BaseException:
        with suppress(Exception):  # if this fails too, the next import clears it
            _delete_log(store, log_id)
        raise


def _campaign_row(session: Session, campaign_id: int) -> Campaign:
    return found(session.get(Campaign, campaign_id), f"campaign {campaign_id} was deleted")


def _delete_log(store: Store, log_id: int) -> None:
    """Delete a log and its impressions, BATCH rows per short transaction."""
    while True:
        with store.batch_connection() as connection:
            chunk = select(QueryLogImpression.id).where(QueryLogImpression.query_log_id == log_id)
            deleted = connection.execute(
                delete(QueryLogImpression).where(
                    QueryLogImpression.id.in_(chunk.limit(BATCH).scalar_subquery())
                )
            )
            if not deleted.rowcount:
                connection.execute(delete(QueryLog).where(QueryLog.id == log_id))
                return


def clear_dead_query_log_imports(store: Store, campaign_id: int) -> None:
    """Delete the campaign's logs still 'importing' whose process died (gone from this
    machine, or silent for STALE_IMPORT_S)."""
    horizon = utcnow() - dt.timedelta(seconds=STALE_IMPORT_S)
    with store.read_session() as session:
        importing = session.execute(
            select(QueryLog.id, QueryLog.owner, QueryLog.heartbeat_at).where(
                QueryLog.campaign_id == campaign_id, QueryLog.state == IMPORTING
            )
        ).all()
    for log_id, owner, beat in importing:
        if beat is None or beat < horizon or processes.is_dead(owner):
            _delete_log(store, log_id)


def _with_warning(summary: QueryLogSummary, warning: str) -> QueryLogSummary:
    return QueryLogSummary(**{**vars(summary), "warnings": (*summary.warnings, warning)})
