"""The web CLI: user, assign, demo."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from tests.read_only import forbid_write_sessions
from tests.web.conftest import World
from workbench.cli import main
from workbench.services import users as user_service
from workbench.store import open_store
from workbench.store.models import Assignment, Campaign, Document, Judgement, PoolEntry, Topic


@pytest.fixture
def run(world_url, world: World):  # type: ignore[no-untyped-def]
    """Invoke the CLI on the test world's database."""
    url = world_url[0]

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", url, *args], input=input)

    return invoke


def test_user_add_with_password_from_stdin_and_token(run, world_url) -> None:
    result = run(
        "user",
        "add",
        "dave",
        "--role",
        "admin",
        "--password-stdin",
        "--token",
        input="a long password\n",
    )
    assert result.exit_code == 0, result.output
    assert "added admin dave" in result.output
    token = result.output.split("API token (shown once): ")[1].strip()
    store = open_store(world_url[0])
    with store.session() as s:
        assert user_service.user_by_token(s, token).username == "dave"
        assert user_service.authenticate(s, "dave", "a long password") is not None
    store.dispose()
    again = run("user", "add", "dave", "--password-stdin", input="a long password\n")
    assert again.exit_code == 1 and "already exists" in again.output
    short = run("user", "add", "eve", "--password-stdin", input="short\n")
    assert short.exit_code == 1 and "too short" in short.output
    with pytest.MonkeyPatch.context() as reading:
        forbid_write_sessions(reading)
        listing = run("user", "list")
    assert "dave\tadmin\tactive" in listing.output


def test_user_role_password_and_token(run, world_url) -> None:
    assert run("user", "role", "carol", "admin").exit_code == 0
    assert (
        run("user", "password", "carol", "--password-stdin", input="brand new pw\n").exit_code == 0
    )
    token = run("user", "token", "carol").output.strip()
    store = open_store(world_url[0])
    with store.session() as s:
        carol = user_service.get_user(s, "carol")
        assert carol.role == "admin"
        assert user_service.authenticate(s, "carol", "brand new pw") is not None
        assert user_service.user_by_token(s, token).id == carol.id
    store.dispose()
    assert run("user", "role", "nobody", "admin").exit_code == 1


def test_assign_balances_judges(run, world_url, world: World) -> None:
    store = open_store(world_url[0])
    with store.session() as s:
        for a in s.scalars(select(Assignment)):
            s.delete(a)
    result = run(
        "assign", "--campaign", "c1", "--judges-per-topic", "2", "--assessors", "alice,bob,carol"
    )
    assert result.exit_code == 0, result.output
    assert "4 new assignments in pool 1" in result.output
    lines = sorted(line for line in result.output.splitlines() if "\t" in line)
    assert [int(line.split("\t")[1].split()[0]) for line in lines] in (
        [12, 6, 6],
        [6, 12, 6],
        [6, 6, 12],
    )
    with store.session() as s:
        judges = s.execute(select(Assignment.qid, func.count()).group_by(Assignment.qid)).all()
    assert sorted(judges) == [("T1", 2), ("T2", 2)]
    store.dispose()
    too_many = run("assign", "--campaign", "c1", "--judges-per-topic", "5")
    assert too_many.exit_code == 1 and "at least 5" in too_many.output
    unknown = run("assign", "--campaign", "nope", "--judges-per-topic", "1")
    assert unknown.exit_code == 1 and "no campaign" in unknown.output


def test_demo_is_created_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    first = CliRunner().invoke(main, ["--db", url, "demo", "--no-serve"])
    assert first.exit_code == 0, first.output
    assert "Demo campaign created." in first.output
    assert "alice    password demo-alice" in first.output
    second = CliRunner().invoke(main, ["--db", url, "demo", "--no-serve"])
    assert "Demo campaign already exists." in second.output
    store = open_store(url)
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Campaign)) == 1
        assert s.scalar(select(func.count()).select_from(Topic)) == 8
        assert s.scalar(select(func.count()).select_from(Document)) == 300
        topics = s.scalars(select(Topic)).all()
        assert all(t.title and t.description and t.narrative for t in topics)
        judges = s.execute(select(Assignment.qid, func.count()).group_by(Assignment.qid)).all()
        assert sorted(n for _, n in judges) == [2] * 8
        pooled = s.scalar(select(func.count()).select_from(PoolEntry))
        assert 8 * 10 <= pooled <= 8 * 10 * 5  # depth 10 over 5 runs
        assert s.scalar(select(func.count()).select_from(Judgement)) == 0
    store.dispose()
