"""Pools, their entries and runs, adaptive topics, assignments and routing slots."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


class Pool(Base):
    """A pool with every choice recorded so it can be rebuilt bit for bit."""

    __tablename__ = "pools"
    __table_args__ = (Index("uq_pools_campaign_number", "campaign_id", "number", unique=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    # 1, 2, ... within the campaign ("Pool 2")
    number: Mapped[int] = mapped_column(Integer, server_default="0")
    name: Mapped[str] = mapped_column(String(limits.POOL_NAME), default="")
    strategy: Mapped[str] = mapped_column(String(40))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    seed: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    # changes whenever an adaptive pool reveals documents (part of the pool's signature)
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class PoolStatistics(Base):
    """The run contributions of a pool (`services.pool_statistics`), kept so that the campaign
    page does not decode every run's ranked lists on each load; valid while `signature` (the
    pool's entries, parameters and runs) is the pool's current one."""

    __tablename__ = "pool_statistics"

    pool_id: Mapped[int] = mapped_column(
        ForeignKey("pools.id", ondelete="CASCADE"), primary_key=True
    )
    signature: Mapped[str] = mapped_column(String(64))
    contributions: Mapped[dict[str, Any]] = mapped_column()
    computed_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class AdaptiveTopic(Base):
    """One topic of an adaptive pool: its judging budget, whether the organiser stopped it, and
    the documents its strategy chose, in order (those of a reserved sample it picked on the
    way included: `adaptive.choose`)."""

    __tablename__ = "adaptive_topics"
    __table_args__ = (UniqueConstraint("pool_id", "qid"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    budget: Mapped[int] = mapped_column(Integer)
    stopped: Mapped[bool] = mapped_column(Boolean, default=False)
    choices: Mapped[list[Any]] = mapped_column(default=list, server_default="[]")
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class PoolRun(Base):
    """A run that contributed to a pool, and in which build (0 = the first, 1.. = extensions)."""

    __tablename__ = "pool_runs"
    __table_args__ = (UniqueConstraint("pool_id", "run_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    build: Mapped[int] = mapped_column(Integer, default=0)
    added_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class PoolEntry(Base):
    """One pooled document of one topic.

    best_rank and n_runs describe how the contributing runs ranked it (for priority ordering
    and statistics; never shown to assessors). stratum, sampled and inclusion_prob serve
    stratified pools: a pooled but unsampled document is exported as -1 in qrels.
    """

    __tablename__ = "pool_entries"
    # its index also serves lookups by (pool_id, qid) and by pool_id, its leading columns
    __table_args__ = (UniqueConstraint("pool_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    build: Mapped[int] = mapped_column(Integer, default=0)
    best_rank: Mapped[int] = mapped_column(Integer)
    n_runs: Mapped[int] = mapped_column(Integer)
    priority: Mapped[float] = mapped_column(Float, default=0.0)
    stratum: Mapped[int | None] = mapped_column(Integer, default=None)
    sampled: Mapped[bool] = mapped_column(Boolean, default=True)
    inclusion_prob: Mapped[float] = mapped_column(Float, default=1.0)


class Assignment(Base):
    """An assessor is to judge the pool of one topic. order is 'random', 'docno' or 'priority'."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("pool_id", "qid", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    order: Mapped[str] = mapped_column(String(16), default="random")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class RoutingSlot(Base):
    """One judge's place on one pooled document of a routed pool (`services.routing`).

    An assignment with slots covers those documents only; one without covers its whole topic.
    slot numbers the places of a document (0, 1, ...): two requests can never take the same
    place, and an assessor never holds a document twice (the two unique constraints). role is
    one of `workbench.routing.ROLES`.
    """

    __tablename__ = "routing_slots"
    __table_args__ = (
        UniqueConstraint("pool_id", "qid", "docno", "slot", name="uq_routing_slots_place"),
        UniqueConstraint("pool_id", "qid", "docno", "user_id", name="uq_routing_slots_judge"),
        Index("ix_routing_slots_holder", "pool_id", "qid", "user_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    slot: Mapped[int] = mapped_column(Integer)
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
