"""run versions: a run's lines written in short transactions, visible at one flip

The run lines move to `run_topic_rows`, each row tagged with the run version that wrote it
(`run_versions`); `run_topics` becomes a view showing the rows of each run's live version,
so that an import writes new versions invisibly and shows them by one tiny UPDATE of their
states. Each stored run becomes one live version (of the run's id).

Revision ID: h_runs_run_versions
Revises: h_avail_document_imports
Create Date: 2026-11-23 20:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h_runs_run_versions"
down_revision = "h_avail_document_imports"
branch_labels = None
depends_on = None

RUN_TOPICS_VIEW = """
CREATE VIEW run_topics AS
SELECT t.id, v.run_id, t.qid, t.n_lines, t.docnos, t.scores, t.ranks
FROM run_topic_rows AS t
JOIN run_versions AS v ON v.id = t.version_id
WHERE v.state = 'live'
"""


def _blob_columns() -> list[sa.Column]:
    return [
        sa.Column("qid", sa.String(length=100), nullable=False),
        sa.Column("n_lines", sa.Integer(), nullable=False),
        sa.Column("docnos", sa.LargeBinary(), nullable=False),
        sa.Column("scores", sa.LargeBinary(), nullable=False),
        sa.Column("ranks", sa.LargeBinary(), nullable=False),
    ]


def _move_sequence(table: str) -> None:
    """The ids were copied: on PostgreSQL move the table's sequence past them."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"COALESCE(MAX(id), 0) + 1, false) FROM {table}"
        )


def upgrade() -> None:
    op.create_table(
        "run_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_run_versions_run_id", "run_versions", ["run_id"])
    op.create_index(
        "uq_run_versions_live",
        "run_versions",
        ["run_id"],
        unique=True,
        sqlite_where=sa.text("state = 'live'"),
        postgresql_where=sa.text("state = 'live'"),
    )
    op.create_table(
        "run_topic_rows",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        *_blob_columns(),
        sa.ForeignKeyConstraint(["version_id"], ["run_versions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("version_id", "qid"),
    )
    op.execute(
        "INSERT INTO run_versions (id, campaign_id, run_id, state, heartbeat_at) "
        "SELECT id, campaign_id, id, 'live', CURRENT_TIMESTAMP FROM runs"
    )
    op.execute(
        "INSERT INTO run_topic_rows (id, version_id, qid, n_lines, docnos, scores, ranks) "
        "SELECT id, run_id, qid, n_lines, docnos, scores, ranks FROM run_topics"
    )
    _move_sequence("run_versions")
    _move_sequence("run_topic_rows")
    op.drop_index("ix_run_topics_run_id", table_name="run_topics")
    op.drop_table("run_topics")
    op.execute(RUN_TOPICS_VIEW)


def downgrade() -> None:
    op.execute("DROP VIEW run_topics")
    op.create_table(
        "run_topics",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        *_blob_columns(),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "qid"),
    )
    op.create_index("ix_run_topics_run_id", "run_topics", ["run_id"])
    op.execute(  # the lines readers saw: each run's live version
        "INSERT INTO run_topics (id, run_id, qid, n_lines, docnos, scores, ranks) "
        "SELECT t.id, v.run_id, t.qid, t.n_lines, t.docnos, t.scores, t.ranks "
        "FROM run_topic_rows AS t JOIN run_versions AS v ON v.id = t.version_id "
        "WHERE v.state = 'live'"
    )
    _move_sequence("run_topics")
    op.drop_table("run_topic_rows")
    op.drop_index("uq_run_versions_live", table_name="run_versions")
    op.drop_index("ix_run_versions_run_id", table_name="run_versions")
    op.drop_table("run_versions")
