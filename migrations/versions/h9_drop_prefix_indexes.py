"""drop two indexes that repeat the prefix of a unique constraint's index

`ix_pool_entries_pool_qid` (pool_id, qid) is the prefix of the unique (pool_id, qid, docno),
and `ix_qrels_entries_qrels_set_id` (qrels_set_id) the prefix of the unique (qrels_set_id,
qid, docno): every lookup, join and cascading delete they served, the unique index serves
(SQLite and PostgreSQL both search a multi-column index by its leading columns). Each was
written on every pool entry and qrels line: SQLite's executemany of W-adhoc's depth-100
pool (274,000 entries) took 2.06 s of CPU instead of 2.64 s, the whole pool build 4.94 s
instead of 5.57 s (medians of five alternating runs).

Revision ID: h9_drop_prefix_indexes
Revises: h8_pages_campaign_versions
Create Date: 2026-11-28 04:00:00
"""

from __future__ import annotations

from alembic import op

revision = "h9_drop_prefix_indexes"
down_revision = "h8_pages_campaign_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_pool_entries_pool_qid", table_name="pool_entries")
    op.drop_index("ix_qrels_entries_qrels_set_id", table_name="qrels_entries")


def downgrade() -> None:
    op.create_index("ix_qrels_entries_qrels_set_id", "qrels_entries", ["qrels_set_id"])
    op.create_index("ix_pool_entries_pool_qid", "pool_entries", ["pool_id", "qid"])
