"""A campaign's change counter (`CampaignVersion`): the part of the report jobs' fingerprint
(`jobs.fingerprint`) that stands for the tables that grow with a campaign, so that a page
reads a few rows instead of counting millions.

Contract: every transaction that inserts, updates or deletes rows of TRACKED for a campaign
calls `changed(db, campaign_id)` (tests/web/test_changes.py checks each writer, that a
random sequence of service calls never changes those tables without the counter, and that
no service statement writes them without counting).

Concurrency: the counter is SHARDS rows per campaign; a transaction adds one to one of them,
chosen at random, in place (an upsert), so that two app servers never lose an increment (the
second waits for the first's row lock and adds to its value) and two judgements at once
rarely wait for each other's commit (one row would make every judgement of a campaign
commit one after the other on PostgreSQL: half the throughput, measured). The version is the
shards' sum: the number of committed writing transactions a snapshot sees. A later
snapshot sees every transaction an earlier one saw, so two snapshots with the same sum saw
the same transactions. The increment is each transaction's last write: a Session's comes at
its commit (`before_commit`, after its other writes are flushed; campaigns in id order), a
Connection's where the caller puts it, at the end. The row lock is so held only while the
transaction commits and is always the last lock it takes: two writers never wait for each
other in a cycle. A judgement on PostgreSQL is one autocommit statement; its increment is in
the same statement (`insert_counted`: a data-modifying WITH), so it is still one round trip.
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import Connection, Insert, Integer, Row, bindparam, event, func, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from workbench.store.models import (
    CampaignVersion,
    FinalLabel,
    Judgement,
    Pool,
    PoolEntry,
    PreferenceJudgement,
    QrelsEntry,
    QrelsSet,
    RoutingSlot,
)

TRACKED = tuple(
    model.__tablename__
    for model in (Judgement, PreferenceJudgement, FinalLabel, PoolEntry, QrelsEntry, RoutingSlot)
)
"""The tables whose writes `changed` must follow (the rest of what reports read is listed
row by row in the fingerprint)."""

SHARDS = 16
_PENDING = "workbench.changed_campaigns"  # Session.info key: campaigns to count at commit


def _upsert(module: Any) -> Any:
    """INSERT (campaign_id, shard, 1) or add 1 to that shard's existing row."""
    return module.insert(CampaignVersion).on_conflict_do_update(
        index_elements=[CampaignVersion.campaign_id, CampaignVersion.shard],
        set_={"version": CampaignVersion.version + 1},
    )


_UPSERTS = {"postgresql": _upsert(postgresql), "sqlite": _upsert(sqlite)}
"""Built once: a statement built on every judgement cost its cache key each time."""


def bump(connection: Connection, campaign_id: int) -> None:
    """Add 1 to the campaign's version now (the caller's transaction's last write)."""
    connection.execute(
        _UPSERTS[connection.dialect.name],
        {"campaign_id": campaign_id, "shard": random.randrange(SHARDS), "version": 1},
    )


def changed(db: Session | Connection, campaign_id: int) -> None:
    """Record that this transaction changed the campaign's TRACKED rows: a Session counts it
    once at its commit, a Connection at once (call it after the transaction's writes)."""
    if isinstance(db, Connection):
        bump(db, campaign_id)
        return
    db.info.setdefault(_PENDING, set()).add(int(campaign_id))


@event.listens_for(Session, "before_flush")
def _count_orm_writes(session: Session, _context: object, _instances: object) -> None:
    """A safety net: ORM rows of TRACKED tables added, changed or deleted count as `changed`
    without the writer saying so (Core statements, bulk inserts, cascades must say so)."""
    campaigns: set[int] = set()
    pool_ids: set[int] = set()
    qrels_set_ids: set[int] = set()
    for row in (*session.new, *session.dirty, *session.deleted):
        if isinstance(row, Judgement | PreferenceJudgement | FinalLabel):
            campaigns.add(row.campaign_id)
        elif isinstance(row, PoolEntry | RoutingSlot):
            pool_ids.add(row.pool_id)
        elif isinstance(row, QrelsEntry):
            qrels_set_ids.add(row.qrels_set_id)
    with session.no_autoflush:  # one query per table for the campaigns of the rest
        if pool_ids:
            campaigns.update(session.scalars(select(Pool.campaign_id).where(Pool.id.in_(pool_ids))))
        if qrels_set_ids:
            campaigns.update(
                session.scalars(select(QrelsSet.campaign_id).where(QrelsSet.id.in_(qrels_set_ids)))
            )
    for campaign_id in campaigns:
        changed(session, campaign_id)


@event.listens_for(Session, "before_commit")
def _count_at_commit(session: Session) -> None:
    session.flush()  # the transaction's own writes first: the counter's lock comes last
    pending = session.info.pop(_PENDING, None)
    if not pending:
        return
    connection = session.connection()
    for campaign_id in sorted(pending):
        bump(connection, campaign_id)


@event.listens_for(Session, "after_rollback")
def _forget_at_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)


def version(session: Session | Connection, campaign_id: int) -> int:
    """The campaign's version in this transaction's snapshot (0: never changed)."""
    found = session.execute(
        select(func.sum(CampaignVersion.version)).where(CampaignVersion.campaign_id == campaign_id)
    ).scalar()
    return int(found or 0)


_COUNTED: dict[int, tuple[Insert, Any]] = {}  # id(statement) -> (statement, counted form)


def _counted_statement(statement: Insert) -> Any:
    """PostgreSQL: `statement` (an INSERT ... RETURNING with a campaign_id column) with its
    campaign's increment in the same statement, returning the same columns."""
    entry = _COUNTED.get(id(statement))
    if entry is None:
        appended = statement.cte("appended")
        count = (
            postgresql.insert(CampaignVersion)
            .from_select(
                ["campaign_id", "shard", "version"],
                select(
                    appended.c.campaign_id, bindparam("change_shard", type_=Integer), literal(1)
                ).distinct(),
            )
            .on_conflict_do_update(
                index_elements=[CampaignVersion.campaign_id, CampaignVersion.shard],
                set_={"version": CampaignVersion.version + 1},
            )
        )
        entry = (statement, select(appended).add_cte(count.cte("counted")))
        _COUNTED[id(statement)] = entry  # holds `statement`, so that its id stays its own
    return entry[1]


def insert_counted(connection: Connection, statement: Insert, params: dict[str, Any]) -> Row | None:
    """Run `statement` (INSERT ... RETURNING ..., campaign_id; at most one row) and count the
    change of its campaign in the same transaction: on PostgreSQL in the same statement (an
    autocommit connection commits both at once), elsewhere as the next statement of the
    connection's transaction. Returns the inserted row, or None when nothing was inserted."""
    if connection.dialect.name == "postgresql":
        shard = random.randrange(SHARDS)
        return connection.execute(
            _counted_statement(statement), {**params, "change_shard": shard}
        ).first()
    row = connection.execute(statement, params).first()
    if row is not None:
        bump(connection, row.campaign_id)
    return row
