"""campaign guidelines: the Markdown text assessors read before judging

Revision ID: g12j_guidelines
Revises: h_admin_pools_withdrawn
Create Date: 2026-11-23 14:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "g12j_guidelines"
down_revision = "h_admin_pools_withdrawn"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("campaigns") as batch:
        batch.add_column(sa.Column("guidelines", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("campaigns") as batch:
        batch.drop_column("guidelines")
