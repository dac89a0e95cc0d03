"""Issue 12's small things: /next says when a queue is done, the API takes a campaign's name,
`--db` after the subcommand, `-o -`, `demo --no-serve` wording, log timestamps with zone."""

from __future__ import annotations

import logging
import logging.config
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask

from tests.web.conftest import World
from workbench.cli import db_option_first, main
from workbench.cli.web_commands import log_config


def test_next_says_done_when_every_document_is_judged(as_user, world: World) -> None:
    client = as_user("alice")
    base = f"/api/v1/assignments/{world.assignment['alice', 'T1']}"
    first = client.get(base + "/next").json
    assert (first["done"], first["judged"], first["total"], first["position"]) == (False, 0, 6, 0)
    for docno in ("D1", "D2", "D3", "D6", "D7"):
        client.post(base + "/judgements", json={"docno": docno, "grade": 1})
    almost = client.get(base + "/next").json
    assert (almost["done"], almost["judged"], almost["docno"]) == (False, 5, "D8")
    client.post(base + "/judgements", json={"docno": "D8", "grade": 0})
    finished = client.get(base + "/next").json
    assert (finished["done"], finished["judged"], finished["total"]) == (True, 6, 6)


def test_the_admin_api_takes_a_campaign_name_or_id(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    by_id = admin.get(f"/api/v1/campaigns/{world.campaign_id}/progress").json
    by_name = admin.get("/api/v1/campaigns/c1/progress").json
    assert by_id == by_name and by_name["campaign"] == "c1"
    export = admin.get("/api/v1/campaigns/c1/export/pool")
    assert (
        export.status_code == 200
        and "filename=c1.pool1.txt" in export.headers["Content-Disposition"]
    )
    missing = admin.get("/api/v1/campaigns/nope/progress")
    assert missing.status_code == 404 and missing.json == {"error": "no campaign 'nope'"}


@pytest.fixture
def url(world_url, world: World) -> str:
    return world_url[0]


def test_db_after_the_subcommand(url: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a default store here would be ./instance
    listed = CliRunner().invoke(main, ["campaign", "list", "--db", url])
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("1\tc1\t")
    equals = CliRunner().invoke(main, ["pool", "stats", "--campaign", "c1", f"--db={url}"])
    assert equals.exit_code == 0 and equals.output.startswith("pool 1 (depth: depth 3")
    assert not (tmp_path / "instance").exists()
    assert db_option_first(["trec-eval", "--db", "x"]) == ["trec-eval", "--db", "x"]
    assert db_option_first(["a", "--", "--db", "x"]) == ["a", "--", "--db", "x"]


def test_export_to_standard_output_with_a_dash(url: str) -> None:
    args = ["--db", url, "export", "pool", "--campaign", "c1", "-o", "-"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == ["T1 D1", "T1 D2"]  # the count goes to stderr
    assert not Path("-").exists()


def test_demo_no_serve_does_not_say_it_serves(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    result = CliRunner().invoke(main, ["--db", url, "demo", "--no-serve"])
    assert result.exit_code == 0, result.output
    assert "Open http" not in result.output
    assert "Serve it with `workbench serve`" in result.output


def test_log_lines_carry_a_timestamp_with_its_zone(capsys) -> None:
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "generic"}},
        **log_config(),
    }
    logging.config.dictConfig(config)
    try:
        logging.getLogger("workbench.test").warning("hello")
        line = capsys.readouterr().err.strip()
    finally:
        logging.getLogger().handlers.clear()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4} WARNING workbench\.test: hello", line
    ), line
