"""A small campaign on disk: topics 1 and 2, runs A, B, C (the worked example of test_pooling)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from workbench.store.models import Base

RUN_LINES = {
    "A": [
        ("1", "a1", 10),
        ("1", "a2", 8),
        ("1", "a3", 6),
        ("1", "d1", 4),
        ("1", "d2", 2),
        ("2", "x1", 3),
        ("2", "x2", 2),
    ],
    "B": [("1", "d1", 5), ("1", "b2", 4), ("1", "a1", 3), ("1", "b4", 1), ("2", "x2", 9)],
    "C": [("1", "c1", 3), ("1", "d1", 2), ("1", "c3", 1)],
}


def write_run(path: Path, tag: str, lines) -> Path:
    path.write_text(
        "".join(f"{q} Q0 {d} {i} {s} {tag}\n" for i, (q, d, s) in enumerate(lines, start=1))
    )
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    paths = {
        tag: write_run(folder / f"run{tag}.txt", tag, lines) for tag, lines in RUN_LINES.items()
    }
    paths["topics"] = folder / "topics.tsv"
    paths["topics"].write_text("1\tfirst topic\n2\tsecond topic\n")
    paths["docs"] = folder / "docs.jsonl"
    paths["docs"].write_text(
        '{"docno": "a1", "title": "A one", "text": "alpha"}\n'
        '{"docno": "d1", "text": "delta"}\n'
        '{"docno": "zz", "text": "never pooled"}\n'
    )
    paths["qrels"] = folder / "qrels.txt"
    paths["qrels"].write_text("1 0 a1 1\n1 0 d1 2\n2 0 x2 0\n")
    return paths


def row_counts(session) -> dict[str, int]:
    """Rows in every table: equal before and after a failed import."""
    return {
        name: session.scalar(select(func.count()).select_from(table))
        for name, table in Base.metadata.tables.items()
    }


GUARD_S = 60.0
"""How long a test waits for another thread before it fails (a hang guard, not a timing)."""


def count(store, model) -> int:
    """Rows of a table or view, as a reader sees them."""
    with store.read_session() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def in_thread(function) -> tuple[threading.Thread, list]:
    """Run `function` on a thread; the list receives its result or the error it raised."""
    outcome: list = []

    def run():
        try:
            outcome.append(function())
        except BaseException as error:  # handed to the test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome
