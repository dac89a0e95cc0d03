"""staged documents: a document import is written in short batches, then made visible at once

Revision ID: h_avail_staged_documents
Revises: notes_run_efficiency
Create Date: 2026-11-23 13:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_avail_staged_documents"
down_revision = "notes_run_efficiency"
branch_labels = None
depends_on = None


def upgrade() -> None:
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


def downgrade() -> None:
    op.drop_table("staged_documents")
