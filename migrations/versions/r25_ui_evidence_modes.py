"""evidence passages, undo, judging modes and pairwise preferences (issue 25)

- campaigns.evidence: assessors mark the passages that make a document relevant;
- campaigns.judging_mode / judging_options: one document per screen, a list of passages, or
  pairwise preferences (workbench.judging_modes);
- judgements.evidence: the marked passages ([[start, end], ...] offsets in the text);
- judgements.undoes_id: the event an undo takes back (a row with neither grade nor reason
  takes a first judgement back);
- preference_judgements: the append-only log of pairwise preferences.

Revision ID: r25_ui_evidence_modes
Revises: r26_routing_quality
Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r25_ui_evidence_modes"
down_revision = "r26_routing_quality"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # plain ADD COLUMN (never a batch): on SQLite a batch would rebuild `campaigns` for these
    # defaults, and dropping the old table deletes every row that references it (cascade)
    op.add_column(
        "campaigns", sa.Column("evidence", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "campaigns",
        sa.Column("judging_mode", sa.String(16), nullable=False, server_default="document"),
    )
    op.add_column(
        "campaigns",
        sa.Column("judging_options", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
    )
    op.add_column("judgements", sa.Column("evidence", sa.JSON(), nullable=True))
    op.add_column("judgements", sa.Column("undoes_id", sa.Integer(), nullable=True))
    op.create_table(
        "preference_judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("qid", sa.String(100), nullable=False),
        sa.Column("first", sa.String(200), nullable=False),
        sa.Column("second", sa.String(200), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("shown_left", sa.String(200), nullable=False),
        sa.Column("outcome", sa.String(8), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("time_spent_ms", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("client_id", sa.String(64), nullable=True),
        sa.Column("undoes_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "campaign_id", "user_id", "client_id", name="uq_preferences_campaign_user_client"
        ),
    )
    op.create_index(
        "ix_preference_judgements_key",
        "preference_judgements",
        ["campaign_id", "qid", "first", "second", "user_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_preference_judgements_key", table_name="preference_judgements")
    op.drop_table("preference_judgements")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): no rebuild, no cascade
    for table, column in [
        ("judgements", "undoes_id"),
        ("judgements", "evidence"),
        ("campaigns", "judging_options"),
        ("campaigns", "judging_mode"),
        ("campaigns", "evidence"),
    ]:
        op.drop_column(table, column)
