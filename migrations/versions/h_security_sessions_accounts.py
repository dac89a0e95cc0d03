"""sessions and accounts: per-user session version, case-insensitive usernames, shared login
failure counters

Revision ID: h_security_sessions
Revises: q15_query_logs
Create Date: 2026-11-23 11:00:00

Usernames that differ only by case (or Unicode compatibility form) cannot coexist any more:
the oldest account keeps its name, each later one is renamed to `name~id` (a warning names
them), so no account is lost and each still logs in with its password under the new name.
"""

from __future__ import annotations

import logging
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "h_security_sessions"
down_revision = "a14d_adaptive"
branch_labels = None
depends_on = None

USERNAME = 80
log = logging.getLogger("alembic.runtime.migration")


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name.strip()).casefold()


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_login_failures_last_at", "login_failures", ["last_at"])
    # plain ALTER TABLE ADD COLUMN: no copy of the users table (on SQLite a batch copy would
    # drop a table that judgements reference)
    op.add_column(
        "users", sa.Column("session_version", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column(
        "users",
        sa.Column("name_key", sa.String(length=4 * USERNAME), nullable=False, server_default=""),
    )
    users = sa.table(
        "users", sa.column("id", sa.Integer), sa.column("username"), sa.column("name_key")
    )
    bind = op.get_bind()
    taken: set[str] = set()
    rows = bind.execute(sa.select(users.c.id, users.c.username).order_by(users.c.id)).all()
    for user_id, username in rows:
        name, key = username, _key(username)
        if key in taken:
            suffix = f"~{user_id}"
            name = username[: USERNAME - len(suffix)] + suffix
            key = _key(name)
            log.warning(
                "user %r (id %d) renamed to %r: usernames are unique without regard to case",
                username,
                user_id,
                name,
            )
        taken.add(key)
        bind.execute(
            users.update().where(users.c.id == user_id).values(username=name, name_key=key)
        )
    op.create_index("ix_users_name_key", "users", ["name_key"], unique=True)
    if bind.dialect.name != "sqlite":  # SQLite keeps the unused default (no table copy)
        op.alter_column("users", "name_key", server_default=None)


def downgrade() -> None:
    op.drop_index("ix_users_name_key", table_name="users")
    op.drop_column("users", "name_key")
    op.drop_column("users", "session_version")
    op.drop_index("ix_login_failures_last_at", table_name="login_failures")
    op.drop_table("login_failures")
