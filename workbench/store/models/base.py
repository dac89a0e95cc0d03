"""The declarative base, the default timestamp and the metadata of the views."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from sqlalchemy import JSON, MetaData, Table
from sqlalchemy.orm import DeclarativeBase


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    __table__: ClassVar[Table]  # declarative classes here always map a Table, not a FromClause
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


VIEWS = MetaData()
"""Views of the database (created by the migrations, left out of Base.metadata so that
autogenerate does not take them for tables)."""
