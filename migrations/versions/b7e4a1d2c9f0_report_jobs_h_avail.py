"""report jobs: heavy reports computed outside the request, with their cached results

Revision ID: b7e4a1d2c9f0
Revises: q15_query_logs
Create Date: 2026-11-23 10:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "b7e4a1d2c9f0"
down_revision = "q15_query_logs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "report_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("progress", sa.String(length=200), nullable=False),
        sa.Column("wanted", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=True),
        sa.Column("result_generation", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("queued_at", sa.DateTime(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id", "key"),
    )


def downgrade() -> None:
    op.drop_table("report_jobs")
