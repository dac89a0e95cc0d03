"""document imports record their process: a dead importer is known at once

An import whose process was killed (kill -9) refused every new import of its campaign until
its heartbeat was 10 minutes old. `document_imports.owner` names the importing process (host,
pid, start time), so the next import on the same machine sees that it is gone.

Revision ID: r29_harden_import_owner
Revises: h_jobs_report_results
Create Date: 2026-11-28 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r29_harden_import_owner"
down_revision = "h_jobs_report_results"
branch_labels = None
depends_on = None


# ALTER TABLE in place (SQLite >= 3.35 adds and drops columns itself): a batch rebuild of the
# table would break the `documents` view that reads it.


def upgrade() -> None:
    op.add_column(
        "document_imports", sa.Column("owner", sa.String(300), nullable=False, server_default="")
    )


def downgrade() -> None:
    op.execute("ALTER TABLE document_imports DROP COLUMN owner")
