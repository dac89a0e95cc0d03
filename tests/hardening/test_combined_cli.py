"""Bad input to the new commands in a campaign using every feature: a clear message (no
traceback), a non-zero exit, and nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask

from tests.hardening.conftest import row_counts
from tests.web.conftest import World, get_store_of
from workbench.cli import main


@pytest.fixture
def world_url(rich_world_url: tuple[str, World]) -> tuple[str, World]:
    """This module's tests run in a copy of the campaign using every feature (`rich`)."""
    return rich_world_url


BAD = [
    ("machine", "add", "--campaign", "c1", "--model", "m"),  # the name is taken
    ("machine", "add", "--campaign", "c1", "--model", "x", "--base-url", "ftp://h"),
    ("machine", "add", "--campaign", "c1", "--model", "x", "--name", "judge-x"),
    ("machine", "run", "--campaign", "c1", "--judge", "machine:nobody"),
    ("machine", "run", "--campaign", "c1", "--judge", "machine:m", "--topics", "T9"),
    ("machine", "run", "--campaign", "c1", "--judge", "machine:m", "--pool", "99"),
    ("machine", "run", "--job", "999"),
    ("machine", "sample", "--campaign", "c1", "--judge", "machine:m", "--pool", "1",
     "--design", "uniform", "--share", "2"),
    ("machine", "sample", "--campaign", "c1", "--judge", "machine:m", "--pool", "2",
     "--design", "nope", "--share", "0.5"),
    ("machine", "review", "--campaign", "c1", "--judge", "machine:m", "--on", "nope"),
    ("machine", "save-qrels", "--campaign", "c1", "--judge", "machine:m", "--name", ""),
    ("machine", "report", "--campaign", "c1", "-m", "nonsense"),
    ("machine", "stop", "--campaign", "c1", "--job", "999"),
    ("machine", "template", "set", "--campaign", "c1", "{template}"),
    ("gold", "add", "--campaign", "c1", "T1", "D4", "7"),
    ("gold", "add", "--campaign", "c1", "T9", "D4", "1"),
    ("gold", "add", "--campaign", "c1", "T1", "NOPE", "1"),
    ("gold", "mark", "--campaign", "c1", "--from", "qrels", "--qrels", "nope"),
    ("gold", "mark", "--campaign", "c1", "--from", "final"),
    ("gold", "settings", "--campaign", "c1", "--share", "0.9"),
    ("practice", "set", "--campaign", "c1", "{practice}"),
    ("pool", "adaptive", "budget", "--campaign", "c1", "--pool", "2", "--budget", "1"),
    ("pool", "adaptive", "budget", "--campaign", "c1", "--pool", "1", "--budget", "5"),
    ("pool", "adaptive", "stop", "--campaign", "c1", "--pool", "2", "--topic", "T9"),
    ("assign", "--campaign", "c1", "--pool", "3", "--policy", "overlap"),
    ("assign", "--campaign", "c1", "--pool", "2", "--policy", "primary"),
    ("assign", "--campaign", "c1", "--pool", "1", "--policy", "overlap",
     "--judges-per-document", "9", "--assessors", "carol,nobody"),
    ("remainder", "--campaign", "c1", "--assessor", "nobody", "--yes"),
    ("remainder", "--campaign", "c1", "--assessor", "alice", "--to", "nobody", "--yes"),
    ("estimate", "--campaign", "c1", "--pool", "1", "--qrels", "alice"),
    ("estimate", "--campaign", "c1", "--pool", "2", "--qrels", "alice"),
    ("estimate", "--campaign", "c1", "--pool", "99"),
    ("assessors", "--campaign", "nope"),
]  # fmt: skip


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a[:2] + a[-2:]) for a in BAD])
def test_bad_input_to_the_new_commands_is_a_message_and_changes_nothing(
    app: Flask, world: World, world_url, rich, tmp_path: Path, args: tuple[str, ...]
) -> None:
    files = {"{template}": tmp_path / "t.txt", "{practice}": tmp_path / "p.tsv"}
    files["{template}"].write_text("[user]\nno document placeholder here\n")
    files["{practice}"].write_text("T1\tD2\tseven\treason\n")
    argv = [str(files[a]) if a in files else a for a in args]
    with get_store_of(app).read_session() as s:
        before = row_counts(s)
    result = CliRunner().invoke(main, ["--db", world_url[0], *argv])
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.output.strip(), "no message"
    with get_store_of(app).read_session() as s:
        assert row_counts(s) == before
