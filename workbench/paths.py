"""Where the non-Python parts live: inside the wheel, or at the repository root in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """The folder `name` (templates, static, migrations): in the wheel, or beside the package."""
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


def alembic_ini() -> Path:
    inside = _PACKAGE / "alembic.ini"
    return inside if inside.is_file() else _PACKAGE.parent / "alembic.ini"
