"""The documents' text index: which words a document's title and text contain, per store.

- SQLite: an FTS5 table `documents_fts` (contentless: it holds only the index; rowid =
  documents.id) kept in sync by triggers on `documents` (migration
  h_campaign_document_search), so every import, replacement and deletion updates it in the
  same transaction.
- PostgreSQL: a GIN index `ix_documents_text_search` on the expression
  `to_tsvector('simple', left(title || ' ' || text, INDEXED_CHARS))`.

Both index the title and the first INDEXED_CHARS characters of the text (PostgreSQL cannot
index a tsvector of more than 1 MB; the bound keeps every document indexable, with the same
reach on both stores), case-insensitively, without stemming or stop words. A query is a list
of words (`words`); a document matches when it contains, for every query word, a word that
starts with it. Words are runs of letters and digits on both stores, except that PostgreSQL
keeps some compounds whole (a host name `www.example.org`, a number `3.14`), so a part of
one may not find it there.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

INDEXED_CHARS = 100_000
MAX_WORDS = 12
FTS_TABLE = "documents_fts"
PG_INDEX = "ix_documents_text_search"
# the indexed expression, in the form PostgreSQL matches against the index (same text as the
# migration's CREATE INDEX)
PG_VECTOR = (
    "to_tsvector('simple'::regconfig, left(documents.title || ' ' || documents.text, "
    f"{INDEXED_CHARS}))"
)
PG_CONDITION = f"{PG_VECTOR} @@ to_tsquery('simple'::regconfig, :match)"
_WORD = re.compile(r"[^\W_]+")


def words(query: str) -> list[str]:
    """The query's words (runs of letters and digits, lower case), at most MAX_WORDS."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:MAX_WORDS]


def is_index_object(name: str | None, type_: str, _parents: Any = None) -> bool:
    """Whether a schema object is part of this index (which the models do not declare):
    Alembic's autogenerate leaves these out (`include_name`)."""
    if name is None:
        return False
    if type_ == "table":
        return name == FTS_TABLE or name.startswith(FTS_TABLE + "_")
    return type_ == "index" and name == PG_INDEX


def include_name(name: str | None, type_: str, parents: Any) -> bool:
    """Alembic's `include_name` hook: everything but the text index's own objects."""
    return not is_index_object(name, type_, parents)


def _sqlite_match(found: list[str]) -> str:
    return " ".join(f'"{word}"*' for word in found)


def _pg_match(found: list[str]) -> str:
    return " & ".join(f"{word}:*" for word in found)


_SQLITE_IDS = (
    f"SELECT d.id FROM {FTS_TABLE} CROSS JOIN documents AS d ON d.id = {FTS_TABLE}.rowid "
    f"WHERE {FTS_TABLE} MATCH :match AND d.campaign_id = :campaign AND d.id != :exclude "
    f"ORDER BY {FTS_TABLE}.rowid"
)
_PG_IDS = (
    "SELECT documents.id FROM documents WHERE documents.campaign_id = :campaign "
    f"AND documents.id != :exclude AND {PG_CONDITION} "
    "ORDER BY documents.id"
)


def _statement(session: Session, found: list[str]) -> tuple[str, str]:
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        return _SQLITE_IDS, _sqlite_match(found)
    if dialect == "postgresql":
        return _PG_IDS, _pg_match(found)
    raise NotImplementedError(f"no document text index for {dialect}")


def matching_ids(
    session: Session,
    campaign_id: int,
    found: list[str],
    *,
    offset: int,
    limit: int,
    exclude: int = -1,
) -> list[int]:
    """Ids of the campaign's documents matching every word of `found`, in id (import) order,
    rows offset+1 .. offset+limit; `exclude` leaves one document out."""
    if not found:
        return []
    statement, match = _statement(session, found)
    values = {"match": match, "campaign": campaign_id, "exclude": exclude}
    bounded = text(f"{statement} LIMIT :limit OFFSET :offset")
    return list(session.scalars(bounded, {**values, "limit": limit, "offset": offset}))


def count_matching(
    session: Session, campaign_id: int, found: list[str], *, cap: int, exclude: int = -1
) -> int:
    """How many documents `matching_ids` would list, counted up to cap + 1 (cap + 1 means
    more than cap)."""
    if not found:
        return 0
    statement, match = _statement(session, found)
    counted = text(f"SELECT count(*) FROM ({statement} LIMIT :limit) AS found")
    values = {"match": match, "campaign": campaign_id, "exclude": exclude, "limit": cap + 1}
    return session.scalar(counted, values) or 0
