"""campaign versions: a change counter per campaign for the reports' fingerprint

`campaign_versions` holds a counter per campaign, in shards (campaign_id, shard), that every
transaction writing judgements, preference judgements, final labels, pool entries, qrels
entries or routing slots increments, one shard chosen at random (`services.changes`: two
judgements at once on PostgreSQL then rarely wait for each other's commit); the report
jobs' fingerprint reads the shards' sum instead of counting and summing those tables (2
million judgements: about 0.6 s on every admin page). A campaign without rows is at version
0; results cached before this revision have another fingerprint and are computed again once.

Revision ID: h8_pages_campaign_versions
Revises: h6_pages_pool_statistics
Create Date: 2026-11-27 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h8_pages_campaign_versions"
down_revision = "h6_pages_pool_statistics"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "campaign_versions",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("shard", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("campaign_id", "shard"),
    )


def downgrade() -> None:
    op.drop_table("campaign_versions")
