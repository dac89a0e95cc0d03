"""The judgement logs (graded and pairwise), final labels and qrels sets."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


class Judgement(Base):
    """One judgement event (append-only). The current judgement of a key is its latest row.

    grade is None when the assessor could not judge (cannot_judge holds the reason); a row
    with neither a grade nor a reason takes a first judgement back (the key has no current
    judgement). undoes_id names the event an undo takes back (the undo row restores the
    state before it). evidence: the passages of the document's text that the assessor marked
    as making it relevant, [[start, end], ...] character offsets (None: none marked).
    client_id is the browser's idempotency key, unique per campaign and assessor: a retried
    submission is stored once.
    """

    __tablename__ = "judgements"
    __table_args__ = (
        Index("ix_judgements_key", "campaign_id", "qid", "docno", "user_id"),
        UniqueConstraint(
            "campaign_id", "user_id", "client_id", name="uq_judgements_campaign_user_client"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    grade: Mapped[int | None] = mapped_column(Integer, default=None)
    cannot_judge: Mapped[str | None] = mapped_column(Text, default=None)
    comment: Mapped[str] = mapped_column(Text, default="")
    time_spent_ms: Mapped[int] = mapped_column(Integer, default=0)
    position: Mapped[int | None] = mapped_column(Integer, default=None)
    client_id: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    evidence: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    undoes_id: Mapped[int | None] = mapped_column(Integer, default=None)


class PreferenceJudgement(Base):
    """One pairwise preference event (append-only, like Judgement): which of two documents of
    a topic is better for it. first < second (docno order) name the pair whatever its sides;
    shown_left is the docno the assessor saw on the left; outcome is 'first', 'second',
    'equal', or None when the assessor took a first preference back (undo, undoes_id)."""

    __tablename__ = "preference_judgements"
    __table_args__ = (
        Index("ix_preference_judgements_key", "campaign_id", "qid", "first", "second", "user_id"),
        UniqueConstraint(
            "campaign_id", "user_id", "client_id", name="uq_preferences_campaign_user_client"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    first: Mapped[str] = mapped_column(String(limits.DOCNO))
    second: Mapped[str] = mapped_column(String(limits.DOCNO))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    shown_left: Mapped[str] = mapped_column(String(limits.DOCNO))
    outcome: Mapped[str | None] = mapped_column(String(8), default=None)
    comment: Mapped[str] = mapped_column(Text, default="")
    time_spent_ms: Mapped[int] = mapped_column(Integer, default=0)
    position: Mapped[int | None] = mapped_column(Integer, default=None)
    client_id: Mapped[str | None] = mapped_column(String(64), default=None)
    undoes_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class QrelsSet(Base):
    """A named set of relevance labels: imported qrels, or qrels the campaign produced."""

    __tablename__ = "qrels_sets"
    __table_args__ = (UniqueConstraint("campaign_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(limits.QRELS_SET_NAME))
    source: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class QrelsEntry(Base):
    __tablename__ = "qrels_entries"
    # its index also serves lookups by qrels_set_id, its leading column
    __table_args__ = (UniqueConstraint("qrels_set_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    qrels_set_id: Mapped[int] = mapped_column(ForeignKey("qrels_sets.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    iteration: Mapped[str] = mapped_column(String(limits.QRELS_ITERATION), default="0")
    rel: Mapped[int] = mapped_column(Integer)


class FinalLabel(Base):
    """The adjudicated label of a document, with how it was reached (provenance)."""

    __tablename__ = "final_labels"
    __table_args__ = (UniqueConstraint("campaign_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    grade: Mapped[int] = mapped_column(Integer)
    rule: Mapped[str] = mapped_column(String(40))
    judges: Mapped[dict[str, Any]] = mapped_column(default=dict)
    adjudicator_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
