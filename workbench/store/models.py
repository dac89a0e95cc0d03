"""The campaign store: SQLAlchemy 2 typed models.

The schema is created and changed only by the Alembic migrations in `migrations/`.
Identifiers that come from files (topic ids, document numbers, run tags) are strings and are
kept exactly as given. A judgement is keyed by (campaign, topic, docno, assessor), never by a
pool position; the judgement table is an append-only log and the current value of a key is its
latest row (highest id).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from workbench import limits


def username_key(username: str) -> str:
    """The form under which usernames are unique: NFKC-normalised and case-folded, so that
    'Alice' and 'alice' are one name."""
    return unicodedata.normalize("NFKC", username.strip()).casefold()


def _username_key_default(context: Any) -> str:
    return username_key(context.get_current_parameters()["username"])


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    __table__: ClassVar[Table]  # declarative classes here always map a Table, not a FromClause
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class User(Base):
    """A person who logs in. role is 'admin' (organiser, may adjudicate) or 'assessor'.

    name_key is the case-folded username (unique: 'Alice' and 'alice' cannot coexist);
    session_version is bumped to end every browser session of the user.
    """

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(limits.USERNAME), unique=True)
    name_key: Mapped[str] = mapped_column(
        String(limits.USERNAME_KEY), unique=True, index=True, default=_username_key_default
    )
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="assessor")
    api_token_hash: Mapped[str | None] = mapped_column(String(128), unique=True, default=None)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)


class LoginFailure(Base):
    """Recent failed logins of one throttling key (a digest of an account and address, or of
    an address), shared by every worker process. last_at is seconds since the epoch."""

    __tablename__ = "login_failures"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    last_at: Mapped[float] = mapped_column(Float, index=True)


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


class DocumentImport(Base):
    """One document import into a campaign (`services.document_imports`). state: 'open' while its
    documents are written (invisible), 'committed' once they are visible (the rows it
    replaces, hidden, are still being deleted), 'done' afterwards; an import that fails or
    dies is deleted with its rows. At most one import of a campaign is not done;
    owner (the importing process, when on the same machine) and heartbeat_at tell a live one
    from one whose process died."""

    __tablename__ = "document_imports"
    __table_args__ = (
        Index(
            "uq_document_imports_active",
            "campaign_id",
            unique=True,
            sqlite_where=sql_text("state <> 'done'"),
            postgresql_where=sql_text("state <> 'done'"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(16), default="open")
    files: Mapped[str] = mapped_column(Text, default="")  # the file names, one a line
    added: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    owner: Mapped[str] = mapped_column(String(300), default="", server_default="")
    """The importing process (`workbench.processes.this_process`): host, pid, start time."""
    committed_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)


class DocumentRow(Base):
    """A document as written by one import: the table behind the `documents` view, which
    shows the rows of committed imports except those a committed import replaced. Only
    `services.document_imports` reads or writes it; everything else reads `Document`."""

    __tablename__ = "document_rows"
    __table_args__ = (UniqueConstraint("campaign_id", "docno", "import_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    docno: Mapped[str] = mapped_column(String(limits.DOCNO))
    import_id: Mapped[int] = mapped_column(
        ForeignKey("document_imports.id", ondelete="CASCADE"), index=True
    )
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)


class DocumentReplacement(Base):
    """A visible document row that an import replaces: hidden once the import is committed,
    deleted (with this row) before the import is done."""

    __tablename__ = "document_replacements"

    import_id: Mapped[int] = mapped_column(
        ForeignKey("document_imports.id", ondelete="CASCADE"), primary_key=True
    )
    document_id: Mapped[int] = mapped_column(
        ForeignKey("document_rows.id", ondelete="CASCADE"), primary_key=True, index=True
    )


VIEWS = MetaData()
"""Views of the database (created by the migrations, left out of Base.metadata so that
autogenerate does not take them for tables)."""


class Document(Base):
    """A campaign's document as every reader sees it: the `documents` view (read-only) over
    `DocumentRow`, in which an import's documents all appear at its commit, or never."""

    __table__ = Table(
        "documents",
        VIEWS,
        Column("id", Integer, primary_key=True),
        Column("campaign_id", Integer),
        Column("docno", String(limits.DOCNO)),
        Column("title", Text),
        Column("text", Text),
        Column("extra", JSON),
    )

    id: Mapped[int]
    campaign_id: Mapped[int]
    docno: Mapped[str]
    title: Mapped[str]
    text: Mapped[str]
    extra: Mapped[dict[str, Any]]


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
    __table_args__ = (
        UniqueConstraint("pool_id", "qid", "docno"),
        Index("ix_pool_entries_pool_qid", "pool_id", "qid"),
    )

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
    __table_args__ = (UniqueConstraint("qrels_set_id", "qid", "docno"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    qrels_set_id: Mapped[int] = mapped_column(
        ForeignKey("qrels_sets.id", ondelete="CASCADE"), index=True
    )
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


class RateBucket(Base):
    """A token bucket of one action and user (`services.rate_limits`, PostgreSQL only; an
    UNLOGGED table there): tokens left at `at` (epoch seconds of the database's clock), and
    whether the last request took one."""

    __tablename__ = "rate_buckets"

    action: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tokens: Mapped[float] = mapped_column(Float)
    granted: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[float] = mapped_column(Float)


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
