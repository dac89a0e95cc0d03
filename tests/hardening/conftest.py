"""Fixtures for the hardening tests: the web tests' world, and the load generator's pieces."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.web.conftest import (  # noqa: F401 - fixtures re-exported for this folder
    app,
    as_user,
    csrf_app,
    world,
    world_template,
    world_url,
)
from workbench.store.models import Base

REPO = Path(__file__).resolve().parents[2]


def row_counts(session: Session) -> dict[str, int]:
    """Rows of every table of the store."""
    return {
        table.name: session.scalar(select(func.count()).select_from(table)) or 0
        for table in Base.metadata.sorted_tables
    }


def load_benchmark(stem: str) -> ModuleType:
    """benchmarks/load/<stem>.py as a module (benchmarks is not a package)."""
    name = f"workbench_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REPO / "benchmarks" / "load" / f"{stem}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_generator() -> ModuleType:
    """benchmarks/load/run_load.py as a module."""
    return load_benchmark("run_load")
