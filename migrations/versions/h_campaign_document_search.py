"""documents' text index: SQLite FTS5 kept by triggers, a PostgreSQL GIN full-text index

The browse page's document search reads this index instead of scanning every text with LIKE
(`workbench.store.search` queries it). SQLite: a contentless FTS5 table whose rowid is
documents.id, filled here and kept in sync by three triggers. PostgreSQL: a GIN index on the
expression the queries repeat. Both index the title and the first 100,000 characters.

A later SQLite migration that rebuilds `documents` in batch mode drops its triggers: it must
create them again (`_TRIGGERS`), or the index goes stale.

Revision ID: h_campaign_document_search
Revises: g12j_guidelines
Create Date: 2026-11-23 17:15:00
"""

from __future__ import annotations

from alembic import op

revision = "h_campaign_document_search"
down_revision = "g12j_guidelines"
branch_labels = None
depends_on = None

INDEXED = "substr({row}.title || ' ' || {row}.text, 1, 100000)"
_TRIGGERS = {
    "documents_fts_insert": (
        "AFTER INSERT ON documents BEGIN "
        f"INSERT INTO documents_fts(rowid, body) VALUES (new.id, {INDEXED.format(row='new')}); "
        "END"
    ),
    "documents_fts_delete": (
        "AFTER DELETE ON documents BEGIN "
        "INSERT INTO documents_fts(documents_fts, rowid, body) "
        f"VALUES ('delete', old.id, {INDEXED.format(row='old')}); END"
    ),
    "documents_fts_update": (
        "AFTER UPDATE OF id, title, text ON documents BEGIN "
        "INSERT INTO documents_fts(documents_fts, rowid, body) "
        f"VALUES ('delete', old.id, {INDEXED.format(row='old')}); "
        f"INSERT INTO documents_fts(rowid, body) VALUES (new.id, {INDEXED.format(row='new')}); "
        "END"
    ),
}


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE documents_fts USING fts5(body, content='', columnsize=0, "
            "tokenize='unicode61 remove_diacritics 0')"
        )
        op.execute(
            "INSERT INTO documents_fts(rowid, body) "
            f"SELECT id, {INDEXED.format(row='documents')} FROM documents"
        )
        for name, body in _TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {body}")
    elif dialect == "postgresql":
        op.execute(
            "CREATE INDEX ix_documents_text_search ON documents USING gin "
            "(to_tsvector('simple'::regconfig, left(title || ' ' || text, 100000)))"
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in _TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS documents_fts")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_documents_text_search")
