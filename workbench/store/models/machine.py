"""Machine judges: templates, judges, their labels and judging jobs."""

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
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


class MachineTemplate(Base):
    """A campaign's prompt template for machine judges (`workbench.judge_prompt`); a campaign
    without one uses the default template."""

    __tablename__ = "machine_templates"

    campaign_id: Mapped[int] = mapped_column(
        ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True
    )
    template: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class MachineJudge(Base):
    """A machine judge of a campaign (`machine:<model>`): the chat-completions endpoint it
    calls, the template (a copy, with its hash) and the sampling parameters it asks with.
    api_key, when set here rather than in the environment variable api_key_env, is a secret:
    never shown, exported or logged."""

    __tablename__ = "machine_judges"
    __table_args__ = (UniqueConstraint("campaign_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(limits.MACHINE_JUDGE_NAME))
    model: Mapped[str] = mapped_column(String(limits.MACHINE_MODEL))
    base_url: Mapped[str] = mapped_column(String(limits.FILE_NAME), default="")
    api_key_env: Mapped[str] = mapped_column(String(100), default="")
    api_key: Mapped[str | None] = mapped_column(Text, default=None)
    template: Mapped[str] = mapped_column(Text)
    template_hash: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class MachineJudgement(Base):
    """One machine judge's label of a (topic, document), with its provenance: the raw answer,
    the reason, tokens, latency, cost, the grade probabilities when the endpoint returned
    token log-probabilities, and the cache key (model, template, parameters, topic and
    document text). grade is None when it could not judge (cannot_judge holds why); answered
    is False when the endpoint never answered (a job may ask again)."""

    __tablename__ = "machine_judgements"
    __table_args__ = (
        UniqueConstraint("judge_id", "qid", "docno"),
        Index("ix_machine_judgements_cache", "campaign_id", "cache_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    judge_id: Mapped[int] = mapped_column(ForeignKey("machine_judges.id", ondelete="CASCADE"))
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    qid: Mapped[str] = mapped_column(String(limits.QID))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    grade: Mapped[int | None] = mapped_column(Integer, default=None)
    cannot_judge: Mapped[str | None] = mapped_column(Text, default=None)
    reason: Mapped[str] = mapped_column(Text, default="")
    raw_answer: Mapped[str] = mapped_column(Text, default="")
    answered: Mapped[bool] = mapped_column(Boolean, default=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)
    certainty: Mapped[float | None] = mapped_column(Float, default=None)
    probabilities: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    cache_key: Mapped[str] = mapped_column(String(64))
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    flags: Mapped[list[Any]] = mapped_column(default=list)
    template_hash: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[int | None] = mapped_column(
        ForeignKey("machine_jobs.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class MachineJob(Base):
    """A machine judge labelling a scope of documents (`services.machine_jobs`): its scope
    (pool, topics, only documents without a human grade), limits (concurrency, budget in calls
    or tokens), counters, and a heartbeat that tells a running job from one whose process
    died (resumable: it skips what it has judged)."""

    __tablename__ = "machine_jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    judge_id: Mapped[int] = mapped_column(ForeignKey("machine_judges.id", ondelete="CASCADE"))
    scope: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    concurrency: Mapped[int] = mapped_column(Integer, default=4)
    budget_calls: Mapped[int | None] = mapped_column(Integer, default=None)
    budget_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    total: Mapped[int] = mapped_column(Integer, default=0)
    done: Mapped[int] = mapped_column(Integer, default=0)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached: Mapped[int] = mapped_column(Integer, default=0)
    cannot_judge: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)
