"""report results in their own table: a job's status, progress and heartbeat are small rows

A report's result (often megabytes) was a column of its `report_jobs` row, and SQLite rewrites
a whole row on any UPDATE: each heartbeat, progress line and claim of a job rewrote its
previous result under the write lock (holds of 0.3-2.8 s with 1 GB of documents and a 200 MB
run). The result moves to `report_results`, one row per job.

Revision ID: h_jobs_report_results
Revises: h_runs_run_versions
Create Date: 2026-11-24 00:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_jobs_report_results"
down_revision = "h_runs_run_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Held aside while report_jobs is rebuilt without the column: on SQLite the rebuild drops
    # the old table, which would cascade to rows that already referenced it.
    op.create_table(
        "report_results_moving",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.execute(
        "INSERT INTO report_results_moving (job_id, result) "
        "SELECT id, result FROM report_jobs WHERE result IS NOT NULL"
    )
    with op.batch_alter_table("report_jobs") as batch:
        batch.drop_column("result")
    op.create_table(
        "report_results",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("result", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["report_jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.execute("INSERT INTO report_results (job_id, result) SELECT job_id, result FROM report_results_moving")
    op.drop_table("report_results_moving")


def downgrade() -> None:
    op.add_column("report_jobs", sa.Column("result", sa.LargeBinary(), nullable=True))
    op.execute(
        "UPDATE report_jobs SET result = "
        "(SELECT result FROM report_results WHERE report_results.job_id = report_jobs.id)"
    )
    op.drop_table("report_results")
