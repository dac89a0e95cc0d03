"""Report jobs and their last results."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from workbench.store.models.base import Base, utcnow


class ReportJob(Base):
    """A report computed outside the request (services.jobs): its parameters, state, progress
    and the generation and data fingerprint of its last result (kept in ReportResult, so that
    the frequent updates of this row never rewrite a result of megabytes)."""

    __tablename__ = "report_jobs"
    __table_args__ = (UniqueConstraint("campaign_id", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(40))
    key: Mapped[str] = mapped_column(String(64))  # sha256 of kind and parameters
    params: Mapped[str] = mapped_column(Text)  # canonical JSON
    status: Mapped[str] = mapped_column(String(16), default="queued")
    generation: Mapped[int] = mapped_column(Integer, default=1)  # +1 at each (re)queue
    progress: Mapped[str] = mapped_column(String(200), default="")
    wanted: Mapped[str] = mapped_column(String(64), default="")  # fingerprint when queued
    fingerprint: Mapped[str] = mapped_column(String(64), default="")  # of the result
    result_generation: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(Text, default="")
    queued_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    runs_on: Mapped[str] = mapped_column(String(255), default="", server_default="")
    """The machine whose workers may run it ('' any): a task, which reads files saved there."""


class ReportResult(Base):
    """The last result of a report job."""

    __tablename__ = "report_results"

    job_id: Mapped[int] = mapped_column(
        ForeignKey("report_jobs.id", ondelete="CASCADE"), primary_key=True
    )
    result: Mapped[bytes] = mapped_column(LargeBinary)
