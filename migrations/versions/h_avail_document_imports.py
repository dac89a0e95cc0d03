"""document imports: documents written in short transactions, visible at one flip

The documents move to `document_rows`, each row tagged with the import that wrote it
(`document_imports`); `documents` becomes a view showing the rows of committed imports
except those a committed import replaced (`document_replacements`), so that an import is
committed by one tiny UPDATE of its state. The staging table goes. The documents stored so
far become one done import per campaign.

Revision ID: h_avail_document_imports
Revises: g12j_guidelines
Create Date: 2026-11-23 17:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_avail_document_imports"
down_revision = "g12j_guidelines"
branch_labels = None
depends_on = None

DOCUMENTS_VIEW = """
CREATE VIEW documents AS
SELECT d.id, d.campaign_id, d.docno, d.title, d.text, d.extra
FROM document_rows AS d
WHERE d.import_id IN (SELECT i.id FROM document_imports AS i WHERE i.state <> 'open')
  AND d.id NOT IN (
    SELECT r.document_id
    FROM document_replacements AS r
    JOIN document_imports AS i ON i.id = r.import_id
    WHERE i.state = 'committed'
  )
"""


def upgrade() -> None:
    op.create_table(
        "document_imports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("files", sa.Text(), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("updated", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.Column("committed_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "uq_document_imports_active",
        "document_imports",
        ["campaign_id"],
        unique=True,
        sqlite_where=sa.text("state <> 'done'"),
        postgresql_where=sa.text("state <> 'done'"),
    )
    op.create_table(
        "document_rows",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("docno", sa.String(length=200), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["import_id"], ["document_imports.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id", "docno", "import_id"),
    )
    op.create_index("ix_document_rows_import_id", "document_rows", ["import_id"])
    op.create_table(
        "document_replacements",
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["document_rows.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["import_id"], ["document_imports.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("import_id", "document_id"),
    )
    op.create_index(
        "ix_document_replacements_document_id", "document_replacements", ["document_id"]
    )
    op.execute(
        "INSERT INTO document_imports "
        "(campaign_id, state, files, added, updated, started_at, heartbeat_at, committed_at) "
        "SELECT campaign_id, 'done', '', COUNT(*), 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, "
        "CURRENT_TIMESTAMP FROM documents GROUP BY campaign_id"
    )
    op.execute(
        "INSERT INTO document_rows (id, campaign_id, docno, import_id, title, text, extra) "
        "SELECT d.id, d.campaign_id, d.docno, i.id, d.title, d.text, d.extra "
        "FROM documents AS d JOIN document_imports AS i ON i.campaign_id = d.campaign_id"
    )
    if op.get_bind().dialect.name == "postgresql":  # the ids were copied: move the sequence on
        op.execute(
            "SELECT setval(pg_get_serial_sequence('document_rows', 'id'), "
            "COALESCE(MAX(id), 0) + 1, false) FROM document_rows"
        )
    op.drop_table("documents")
    op.drop_table("staged_documents")
    op.execute(DOCUMENTS_VIEW)


def downgrade() -> None:
    op.execute("CREATE TABLE documents_visible AS SELECT * FROM documents")
    op.execute("DROP VIEW documents")
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("docno", sa.String(length=200), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id", "docno"),
    )
    op.execute(
        "INSERT INTO documents (id, campaign_id, docno, title, text, extra) "
        "SELECT id, campaign_id, docno, title, text, extra FROM documents_visible"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('documents', 'id'), "
            "COALESCE(MAX(id), 0) + 1, false) FROM documents"
        )
    op.drop_table("documents_visible")
    op.drop_table("document_replacements")
    op.drop_table("document_rows")
    op.drop_index("uq_document_imports_active", table_name="document_imports")
    op.drop_table("document_imports")
    op.create_table(
        "staged_documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("batch", sa.String(length=32), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("docno", sa.String(length=200), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column("staged_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch", "docno"),
    )
