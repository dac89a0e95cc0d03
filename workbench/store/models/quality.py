"""Quality checks: settings, gold documents and the practice (calibration) set."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


class QualitySettings(Base):
    """A campaign's quality checks: the share of gold documents mixed into each queue,
    whether judgements of gold documents enter agreement, adjudication and qrels, and whether
    assessors see their own gold accuracy."""

    __tablename__ = "quality_settings"

    campaign_id: Mapped[int] = mapped_column(
        ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True
    )
    gold_share: Mapped[float] = mapped_column(Float, default=0.0)
    gold_in_qrels: Mapped[bool] = mapped_column(Boolean, default=False)
    show_gold_accuracy: Mapped[bool] = mapped_column(Boolean, default=False)


class GoldDocument(Base):
    """A document of known grade (from earlier qrels, adjudicated labels or by hand), mixed
    into assessors' queues to measure their accuracy (`services.gold`)."""

    __tablename__ = "gold_documents"
    __table_args__ = (UniqueConstraint("campaign_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class CalibrationItem(Base):
    """One document of a campaign's practice set, with the expected grade and the reason the
    guidelines give (`services.calibration`); judged before an assessor's first topic."""

    __tablename__ = "calibration_items"
    __table_args__ = (UniqueConstraint("campaign_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text, default="")


class CalibrationAnswer(Base):
    """An assessor's answer to a practice item (the first one counts; None: cannot judge)."""

    __tablename__ = "calibration_answers"
    __table_args__ = (UniqueConstraint("item_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("calibration_items.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    grade: Mapped[int | None] = mapped_column(Integer, default=None)
    time_spent_ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
