"""run efficiency figures (sidecar files): the run_efficiency table

Revision ID: notes_run_efficiency
Revises: h_security_sessions
Create Date: 2026-11-23 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "notes_run_efficiency"
down_revision = "h_security_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_efficiency",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("mean_latency_ms", sa.Float(), nullable=True),
        sa.Column("throughput_qps", sa.Float(), nullable=True),
        sa.Column("index_size_bytes", sa.Float(), nullable=True),
        sa.Column("hardware", sa.String(length=200), nullable=False),
        sa.Column("cost_per_1000_queries", sa.Float(), nullable=True),
        sa.Column("per_query_latency_ms", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("run_efficiency", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_efficiency_run_id"), ["run_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("run_efficiency", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_efficiency_run_id"))
    op.drop_table("run_efficiency")
