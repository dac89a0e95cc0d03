"""run metadata: a run's ir_metadata (PRIMAD) block, as its file gave it

`runs.ir_metadata` holds the YAML of the `# ir_metadata.start` ... `# ir_metadata.end`
comment lines that opened the run's file (the `#` taken off), or NULL for a run without them.

Revision ID: r30_ecosystem_run_metadata
Revises: r29_harden
Create Date: 2026-11-26 13:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r30_ecosystem_run_metadata"
down_revision = "r29_harden"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("ir_metadata", sa.Text(), nullable=True))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN, also on SQLite: a batch rebuild of `runs` would drop the old
    # table and so cascade to the run versions and lines that reference it
    op.drop_column("runs", "ir_metadata")
