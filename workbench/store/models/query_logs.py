"""Query logs and their anonymised impressions."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


class QueryLog(Base):
    """An imported query log, anonymised on import: ``report`` says what each rule removed
    (`workbench.querylog.AnonymisationReport`), ``key_fingerprint`` which key hashed its ids
    (the key itself stays outside the store). Readers see only logs in state 'ready'."""

    __tablename__ = "query_logs"
    __table_args__ = (UniqueConstraint("campaign_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(limits.QUERY_LOG_NAME))
    source: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    key_fingerprint: Mapped[str] = mapped_column(String(64))
    min_users: Mapped[int] = mapped_column(Integer)
    report: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    state: Mapped[str] = mapped_column(String(16), default="ready", server_default="ready")
    """'importing' while its impressions are written (no reader sees it), then 'ready'."""
    owner: Mapped[str] = mapped_column(String(300), default="", server_default="")
    """The importing process (`workbench.processes.this_process`)."""
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)


class QueryLogImpression(Base):
    """One anonymised impression: hashed session and user, masked query text and its
    normalised key, the topic it maps to (None: no topic), the docnos in rank order and the
    clicks as [docno, time or None] in time order."""

    __tablename__ = "query_log_impressions"

    id: Mapped[int] = mapped_column(primary_key=True)
    query_log_id: Mapped[int] = mapped_column(
        ForeignKey("query_logs.id", ondelete="CASCADE"), index=True
    )
    line: Mapped[int] = mapped_column(Integer)
    session: Mapped[str] = mapped_column(String(64))
    user_hash: Mapped[str] = mapped_column(String(64))
    query: Mapped[str] = mapped_column(Text)
    query_key: Mapped[str] = mapped_column(Text)
    qid: Mapped[str | None] = mapped_column(String(limits.QID), default=None)
    time: Mapped[float] = mapped_column(Float)
    results: Mapped[list[Any]] = mapped_column(default=list)
    clicks: Mapped[list[Any]] = mapped_column(default=list)
