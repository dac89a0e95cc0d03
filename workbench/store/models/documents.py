"""Documents: the rows each import writes and the `documents` view over them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import VIEWS, Base, utcnow


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
