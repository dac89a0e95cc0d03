"""campaigns.count_withdrawn: whether judgements of withdrawn assignments count (h-admin)

Revision ID: h_admin_withdrawn_choice
Revises: notes_run_efficiency
Create Date: 2026-11-23 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_admin_withdrawn_choice"
down_revision = "notes_run_efficiency"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("count_withdrawn", sa.Boolean(), nullable=False, server_default=sa.true())
        )


def downgrade() -> None:
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.drop_column("count_withdrawn")
