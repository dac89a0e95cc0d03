"""pool statistics: a pool's run contributions, kept with the pool

`pool_statistics` holds, per pool, the run contributions the campaign page shows (documents
each run contributed, only it contributed, shared pairwise, pool growth by depth) and the
signature of the pool's entries, parameters and runs they were computed from
(`services.pool_statistics`); a row whose signature is no longer the pool's is recomputed.

Revision ID: h6_pages_pool_statistics
Revises: r30_ecosystem_run_metadata
Create Date: 2026-11-27 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h6_pages_pool_statistics"
down_revision = "r30_ecosystem_run_metadata"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pool_statistics",
        sa.Column("pool_id", sa.Integer(), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("contributions", sa.JSON(), nullable=False),
        sa.Column("computed_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pool_id"),
    )


def downgrade() -> None:
    op.drop_table("pool_statistics")
