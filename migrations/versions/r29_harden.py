"""imports record their process; query logs are imported in short transactions

An import whose process was killed (kill -9) refused every new import of its campaign until
its heartbeat was 10 minutes old. `document_imports.owner` names the importing process (host,
pid, start time), so the next import on the same machine sees that it is gone.

An upload's import task reads files saved on the machine that took the upload: with several
app servers on several machines, `report_jobs.runs_on` keeps it to that machine's workers.

Rate limits (judgement submits, password changes) were kept per process: with several app
servers each held its own. `rate_buckets` holds them in the store (an UNLOGGED table on
PostgreSQL: no WAL, nothing to flush; SQLite processes keep their own buckets).

A query log was imported in one transaction holding every impression in memory. Its rows are
now written in short transactions under a log in `state` 'importing' (invisible to readers),
which one tiny transaction makes 'ready'; `owner` and `heartbeat_at` tell a dead import.

Revision ID: r29_harden
Revises: r25_ui_evidence_modes
Create Date: 2026-11-28 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r29_harden"
down_revision = "r25_ui_evidence_modes"
branch_labels = None
depends_on = None


# ALTER TABLE in place (SQLite >= 3.35 adds and drops columns itself): a batch rebuild of the
# table would break the `documents` view that reads it.


def upgrade() -> None:
    op.add_column(
        "document_imports", sa.Column("owner", sa.String(300), nullable=False, server_default="")
    )
    op.add_column(
        "query_logs", sa.Column("state", sa.String(16), nullable=False, server_default="ready")
    )
    op.add_column(
        "query_logs", sa.Column("owner", sa.String(300), nullable=False, server_default="")
    )
    op.add_column("query_logs", sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
    op.add_column(
        "report_jobs", sa.Column("runs_on", sa.String(255), nullable=False, server_default="")
    )
    unlogged = ["UNLOGGED"] if op.get_bind().dialect.name == "postgresql" else []
    op.create_table(
        "rate_buckets",
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("granted", sa.Boolean(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("action", "user_id"),
        prefixes=unlogged,
    )


def downgrade() -> None:
    op.drop_table("rate_buckets")
    op.execute("ALTER TABLE report_jobs DROP COLUMN runs_on")
    op.execute("DELETE FROM query_logs WHERE state <> 'ready'")
    for column in ("heartbeat_at", "owner", "state"):
        op.execute(f"ALTER TABLE query_logs DROP COLUMN {column}")
    op.execute("ALTER TABLE document_imports DROP COLUMN owner")
