"""Runs: their versions, per-topic line blobs (the `run_topics` view) and efficiency."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import VIEWS, Base, utcnow


class Run(Base):
    """A submitted run, kept whole: its lines are stored per topic in RunTopic blobs."""

    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("campaign_id", "tag"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    tag: Mapped[str] = mapped_column(String(limits.RUN_TAG))
    file_name: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    checksum: Mapped[str] = mapped_column(String(64))
    group: Mapped[str] = mapped_column(String(limits.RUN_GROUP), default="")
    contributes: Mapped[bool] = mapped_column(Boolean, default=True)
    line_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    # the YAML of the file's ir_metadata block (workbench.trec.run_metadata), None without one
    ir_metadata: Mapped[str | None] = mapped_column(Text, default=None)


class RunVersion(Base):
    """One writing of a run's lines (`services.run_imports`): its RunTopicRow rows are what
    readers see of the run while state is 'live' (at most one live version per run). An
    import writes a new version 'open' (invisible; run_id is None for a run not stored yet),
    then one tiny transaction makes it 'live' and the version it replaces 'dead'; dead
    versions are deleted in short transactions. heartbeat_at tells an open version of a
    live import from one whose process died (cleared by the next import)."""

    __tablename__ = "run_versions"
    __table_args__ = (
        Index(
            "uq_run_versions_live",
            "run_id",
            unique=True,
            sqlite_where=sql_text("state = 'live'"),
            postgresql_where=sql_text("state = 'live'"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True, default=None
    )
    state: Mapped[str] = mapped_column(String(16), default="open")
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class RunTopicRow(Base):
    """The lines of one run version for one topic: the table behind the `run_topics` view.
    Only `services.run_imports` reads or writes it; everything else reads `RunTopic`."""

    __tablename__ = "run_topic_rows"
    __table_args__ = (UniqueConstraint("version_id", "qid"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("run_versions.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    n_lines: Mapped[int] = mapped_column(Integer)
    docnos: Mapped[bytes] = mapped_column(LargeBinary)
    scores: Mapped[bytes] = mapped_column(LargeBinary)
    ranks: Mapped[bytes] = mapped_column(LargeBinary)


class RunTopic(Base):
    """The lines of one run for one topic, in file order, as compact blobs: the `run_topics`
    view (read-only) of the RunTopicRow rows of each run's live version, so that a run
    written by an import appears (or is replaced) all at once, at the import's commit.

    docnos: UTF-8 docnos joined by '\\n'; scores: float64 little-endian; ranks: int64
    little-endian (the rank column as given; trec_eval ignores it). All zlib-compressed.
    """

    __table__ = Table(
        "run_topics",
        VIEWS,
        Column("id", Integer, primary_key=True),
        Column("run_id", Integer),
        Column("qid", String(limits.QID)),
        Column("n_lines", Integer),
        Column("docnos", LargeBinary),
        Column("scores", LargeBinary),
        Column("ranks", LargeBinary),
    )

    id: Mapped[int]
    run_id: Mapped[int]
    qid: Mapped[str]
    n_lines: Mapped[int]
    docnos: Mapped[bytes]
    scores: Mapped[bytes]
    ranks: Mapped[bytes]


class RunEfficiency(Base):
    """A run's efficiency figures from a sidecar file (`workbench.efficiency`); None = not given.

    per_query_latency_ms maps a qid to milliseconds.
    """

    __tablename__ = "run_efficiency"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), unique=True, index=True
    )
    mean_latency_ms: Mapped[float | None] = mapped_column(Float, default=None)
    throughput_qps: Mapped[float | None] = mapped_column(Float, default=None)
    index_size_bytes: Mapped[float | None] = mapped_column(Float, default=None)
    hardware: Mapped[str] = mapped_column(String(200), default="")
    cost_per_1000_queries: Mapped[float | None] = mapped_column(Float, default=None)
    per_query_latency_ms: Mapped[dict[str, Any]] = mapped_column(default=dict)
    source: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
