"""h-admin: pools numbered per campaign (pools.number), campaigns.count_withdrawn (whether
judgements of withdrawn assignments count), archived_at on campaigns, runs, topics, pools, users

Revision ID: h_admin_pools_withdrawn
Revises: h_avail_staged_documents
Create Date: 2026-11-23 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_admin_pools_withdrawn"
down_revision = "h_avail_staged_documents"
branch_labels = None
depends_on = None


ARCHIVABLE = ("campaigns", "runs", "topics", "pools", "users")

# plain ALTER TABLE ADD COLUMN and CREATE INDEX: no batch copy (on SQLite, a copy drops the
# old table, and that deletes the rows that reference it through ON DELETE CASCADE)


def upgrade() -> None:
    op.add_column(
        "campaigns",
        sa.Column("count_withdrawn", sa.Boolean(), nullable=False, server_default=sa.true()),
    )
    op.add_column("pools", sa.Column("number", sa.Integer(), nullable=False, server_default="0"))
    # existing pools: numbered 1, 2, ... in creation (id) order within their campaign
    op.execute(
        "UPDATE pools SET number = (SELECT count(*) FROM pools AS earlier "
        "WHERE earlier.campaign_id = pools.campaign_id AND earlier.id <= pools.id)"
    )
    op.create_index("uq_pools_campaign_number", "pools", ["campaign_id", "number"], unique=True)
    for table in ARCHIVABLE:
        op.add_column(table, sa.Column("archived_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    for table in ARCHIVABLE:
        op.drop_column(table, "archived_at")
    op.drop_index("uq_pools_campaign_number", table_name="pools")
    op.drop_column("pools", "number")
    op.drop_column("campaigns", "count_withdrawn")
