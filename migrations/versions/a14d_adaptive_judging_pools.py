"""adaptive judging pools: a revision per pool and per-topic budgets

A pool whose queue a judging strategy decides online (`workbench.adaptive`) reveals its
documents a few at a time; `pools.revision` changes with every reveal so that the cached
presentation orders (keyed by the pool's signature) are recomputed. `adaptive_topics` holds
each topic's budget, which the organiser can raise, and whether the organiser stopped it.

Revision ID: a14d_adaptive
Revises: q15_query_logs
Create Date: 2026-11-23 11:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a14d_adaptive"
down_revision = "b7e4a1d2c9f0"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pools") as batch:
        batch.add_column(sa.Column("revision", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "adaptive_topics",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pool_id", sa.Integer(), nullable=False),
        sa.Column("qid", sa.String(length=100), nullable=False),
        sa.Column("budget", sa.Integer(), nullable=False),
        sa.Column("stopped", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pool_id", "qid"),
    )


def downgrade() -> None:
    op.drop_table("adaptive_topics")
    with op.batch_alter_table("pools") as batch:
        batch.drop_column("revision")
