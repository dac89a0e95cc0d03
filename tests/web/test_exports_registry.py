"""Exports come from one registry (services.exports.EXPORTS): an export added there is a CLI
subcommand, a download form and route on the campaign page, an API export and documented in
the OpenAPI description, with no other change; the CLI and the web write the same bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

import pytest
from click.testing import CliRunner, Result
from flask import Flask
from sqlalchemy.orm import Session

from tests.web.conftest import World
from workbench.cli import main
from workbench.services import exports, topics
from workbench.store.models import Campaign


def _write_topics(
    session: Session, campaign: Campaign, dest: TextIO, options: Mapping[str, Any]
) -> exports.Written:
    """The campaign's qids, one a line (sorted, or reversed), at most `limit` of them."""
    qids = sorted(topics.campaign_qids(session, campaign), reverse=options["reverse"])
    qids = qids[: options["limit"]] if options["limit"] is not None else qids
    dest.write("".join(f"{qid}\n" for qid in qids))
    return exports.Written(len(qids), f"{campaign.name}.{options['case']}.topics.txt")


@pytest.fixture
def topics_export(monkeypatch: pytest.MonkeyPatch) -> None:
    export = exports.Export(
        "topics",
        "Topic list",
        "The campaign's topic ids.",
        "topic(s)",
        _write_topics,
        (
            exports.ExportOption("limit", "int", "At most this many topics.", minimum=1),
            exports.ExportOption("reverse", "flag", "Last topic first."),
            exports.ExportOption("case", "choice", "A file name part.", choices=("a", "b")),
        ),
    )
    monkeypatch.setattr(exports, "EXPORTS", {**exports.EXPORTS, "topics": export})


def _cli(url: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", url, "export", *args])


def test_an_export_added_to_the_registry_is_a_cli_command(
    world_url: tuple[str, World], topics_export: None
) -> None:
    url = world_url[0]
    assert "The campaign's topic ids." in _cli(url, "--help").output
    help_text = _cli(url, "topics", "--help").output
    assert "--limit" in help_text and "--reverse" in help_text and "[a|b]" in help_text
    every = _cli(url, "topics", "--campaign", "c1")
    assert every.exit_code == 0, every.output
    assert every.stdout == "T1\nT2\n" and every.stderr == "2 topic(s) written\n"
    last = _cli(url, "topics", "--campaign", "c1", "--limit", "1", "--reverse")
    assert last.stdout == "T2\n" and last.stderr == "1 topic(s) written\n"
    refused = _cli(url, "topics", "--campaign", "c1", "--limit", "0")
    assert refused.exit_code == 2 and "0<=" not in refused.stderr and "1<=" in refused.stderr


def test_an_export_added_to_the_registry_is_on_the_web_and_in_the_api(
    app: Flask, as_user, world: World, topics_export: None
) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    page = admin.get(f"/admin/campaigns/{cid}").text
    form = page.split('id="export-topics"')[1].split("</form>")[0]
    assert "Topic list" in form and 'name="limit"' in form and 'name="reverse"' in form
    assert "<option>a</option><option>b</option>" in form
    download = admin.get(f"/admin/campaigns/{cid}/download/topics?limit=1&reverse=1&case=b")
    assert download.status_code == 200 and download.data == b"T2\n"
    assert "filename=c1.b.topics.txt" in download.headers["Content-Disposition"]
    api = admin.get("/api/v1/campaigns/c1/export/topics")
    assert (
        api.data == b"T1\nT2\n" and "filename=c1.a.topics.txt" in api.headers["Content-Disposition"]
    )
    bad = admin.get("/api/v1/campaigns/c1/export/topics?limit=0")
    assert bad.json == {"error": "limit must be at least 1; got 0"}
    bad_choice = admin.get("/api/v1/campaigns/c1/export/topics?case=c")
    assert bad_choice.json == {"error": "case must be a or b; got 'c'"}
    document = admin.get("/api/v1/openapi.json").json
    operation = document["paths"]["/api/v1/campaigns/{campaign_ref}/export/{kind}"]["get"]
    described = {p["name"]: p for p in operation["parameters"]}
    assert described["limit"]["description"] == "topics: At most this many topics."
    assert described["limit"]["schema"] == {"type": "integer"}
    assert described["reverse"]["description"] == "topics: Last topic first. (1 for yes)"


def test_an_export_gone_from_the_registry_is_gone_everywhere(
    app: Flask, as_user, world: World, world_url: tuple[str, World], monkeypatch
) -> None:
    monkeypatch.setattr(exports, "EXPORTS", {"pool": exports.EXPORTS["pool"]})
    admin = as_user("admin")
    assert admin.get("/api/v1/campaigns/c1/export/log").status_code == 404
    assert 'id="export-log"' not in admin.get(f"/admin/campaigns/{world.campaign_id}").text
    assert _cli(world_url[0], "log", "--campaign", "c1").exit_code == 2  # no such command


@pytest.mark.parametrize(
    ("cli_args", "query"),
    [
        (["pool"], ""),
        (["pool", "--pool", "1"], "pool=1"),
        (
            ["qrels", "--assessor", "alice", "--allow-incomplete"],
            "assessor=alice&allow_incomplete=1",
        ),
        (
            ["qrels", "--assessor", "bob", "--binary-level", "2", "--allow-incomplete"],
            "assessor=bob&binary_level=2&allow_incomplete=1",
        ),
        (["log"], ""),
        (["log", "--format", "json"], "format=json"),
    ],
)
def test_the_cli_and_the_web_write_the_same_bytes(
    app: Flask, as_user, world: World, world_url, cli_args: list[str], query: str
) -> None:
    base = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    as_user("alice").post(base, json={"docno": "D1", "grade": 2, "comment": 'say "hi", =1+1'})
    bob = f"/api/v1/assignments/{world.assignment['bob', 'T1']}/judgements"
    as_user("bob").post(bob, json={"docno": "D2", "grade": 1})
    kind, *options = cli_args
    web = as_user("admin").get(f"/api/v1/campaigns/c1/export/{kind}?{query}")
    assert web.status_code == 200, web.text
    cli = _cli(world_url[0], kind, "--campaign", "c1", *options)
    assert cli.exit_code == 0, cli.output
    assert cli.stdout_bytes == web.data
    assert web.data.strip()  # something was written
