"""Campaigns, their relevance scales and topics."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from workbench import limits
from workbench.store.models.base import Base, utcnow


class Campaign(Base):
    """A judging campaign: topics, documents, runs, pools, assignments, judgements and a scale.

    A grade counts as relevant when grade >= relevance_level (trec_eval's -l).
    """

    __tablename__ = "campaigns"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(limits.CAMPAIGN_NAME), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    relevance_level: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    guidelines: Mapped[str] = mapped_column(Text, default="", server_default="")  # Markdown
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    # do the judgements of withdrawn assignments count in agreement, adjudication, qrels?
    count_withdrawn: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # do assessors mark the passages that make a document relevant (Judgement.evidence)?
    evidence: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # how assessors judge (workbench.judging_modes.JUDGING_MODES) and that mode's options
    judging_mode: Mapped[str] = mapped_column(
        String(16), default="document", server_default="document"
    )
    judging_options: Mapped[dict[str, Any]] = mapped_column(
        default=dict, server_default=sql_text("'{}'")
    )

    grades: Mapped[list[Grade]] = relationship(
        back_populates="campaign", order_by="Grade.value", cascade="all, delete-orphan"
    )


class Grade(Base):
    """One point of a campaign's relevance scale: value, label and the key that gives it."""

    __tablename__ = "grades"
    __table_args__ = (
        UniqueConstraint("campaign_id", "value"),
        UniqueConstraint("campaign_id", "key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    value: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(limits.GRADE_LABEL))
    key: Mapped[str] = mapped_column(String(limits.GRADE_KEY))

    campaign: Mapped[Campaign] = relationship(back_populates="grades")


class Topic(Base):
    __tablename__ = "topics"
    __table_args__ = (UniqueConstraint("campaign_id", "qid"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    title: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    narrative: Mapped[str] = mapped_column(Text, default="")
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)


class CampaignVersion(Base):
    """A campaign's change counter, in shards: every transaction that writes the rows its
    reports grow with (judgements, preference judgements, final labels, pool entries, qrels
    entries, routing slots) adds one to one shard's `version` before it commits
    (`services.changes`), so that the reports' fingerprint reads the sum of a few rows
    instead of counting those tables. No row: 0."""

    __tablename__ = "campaign_versions"

    campaign_id: Mapped[int] = mapped_column(
        ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True
    )
    shard: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[int] = mapped_column(BigInteger, default=0)
