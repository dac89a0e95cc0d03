"""Several pools per campaign in the admin pages and the CLI: every pool listed, numbered per
campaign, chosen to view, extend, assign from and download; readable parameters and a plot;
the strategy registry generates the CLI options and the web form."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench import pooling
from workbench.cli import main
from workbench.cli.pool_commands import pool_strategy_options
from workbench.services import campaigns, pools, topic_imports
from workbench.store.models import Assignment, Pool


@pytest.fixture
def run_cli(world_url, world: World):  # type: ignore[no-untyped-def]
    url = world_url[0]
    return lambda *args: CliRunner().invoke(main, ["--db", url, *args])


def _build(admin, cid: int, **data: Any):  # type: ignore[no-untyped-def]
    return admin.post(f"/admin/campaigns/{cid}/pools", data=data, follow_redirects=True)


def test_every_pool_is_listed_numbered_and_chosen(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    page = _build(admin, cid, strategy="take", budget="2", fair="1", seed="3", name="take two").text
    assert "Pool 2 built (take): budget 2, fair run order." in page
    # the new pool is shown in full: readable parameters, no raw JSON or checksums
    card = page.split('id="pool-card"')[1]
    assert "Pool 2 “take two”: take" in card
    assert "budget 2, fair run order; seed 3" in card
    assert "checksums" not in card and "{&#34;" not in card and '{"' not in card
    listing = page.split('id="pools"')[1].split("</section>")[0]
    assert "2 pools" in listing
    assert "depth: depth 3" in listing and "take: budget 2, fair run order" in listing
    assert f"/admin/campaigns/{cid}/?pool=1" not in listing  # links carry the number
    assert f"/admin/campaigns/{cid}?pool=1#pool-card" in listing
    # view pool 1 again: its card, its extend form and its download
    first = admin.get(f"/admin/campaigns/{cid}?pool=1").text
    assert "Pool 1: depth" in first and "depth 3; seed 7" in first
    assert f"/admin/campaigns/{cid}/pools/1/extend" in first
    assert admin.get(f"/admin/campaigns/{cid}?pool=9").status_code == 404
    one = admin.get(f"/admin/campaigns/{cid}/download/pool?pool=1")
    two = admin.get(f"/admin/campaigns/{cid}/download/pool?pool=2")
    assert "filename=c1.pool1.txt" in one.headers["Content-Disposition"]
    assert "filename=c1.pool2.txt" in two.headers["Content-Disposition"]
    assert len(one.data.decode().splitlines()) == 12  # depth 3 over two topics
    assert len(two.data.decode().splitlines()) == 4  # budget 2 over two topics
    # the size-by-depth plot is an SVG image, not a list of numbers
    plot = first.split('id="growth-plot"')[1].split('src="')[1].split('"')[0]
    svg = base64.b64decode(plot.removeprefix("data:image/svg+xml;base64,")).decode()
    assert svg.lstrip().startswith("<?xml") and "Pool size by depth" in svg
    assert "1:" not in first.split('id="growth-plot"')[0].rsplit("<h3>", 1)[1]


def test_assign_from_the_chosen_pool(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    _build(admin, cid, strategy="depth", depth="1", seed="1")
    listing = admin.get(f"/admin/campaigns/{cid}/assignments?pool=1").text
    assert "Assigning from pool 1 (2 topics)." in listing
    assert '<input type="hidden" name="pool" value="1">' in listing
    page = admin.post(
        f"/admin/campaigns/{cid}/assignments",
        data={"user": "carol", "qids": ["T2"], "pool": "1"},
        follow_redirects=True,
    ).text
    assert "Assigned 1 topic to carol." in page
    with get_store_of(app).session() as s:
        made = s.scalar(
            select(Assignment).where(
                Assignment.user_id == world.users["carol"], Assignment.qid == "T2"
            )
        )
        assert made.pool_id == world.pool_id  # pool 1, not the latest (pool 2)
    # the default is the newest pool with assignments (pool 1), not pool 2 that nobody judges
    assert "Assigning from pool 1" in admin.get(f"/admin/campaigns/{cid}/assignments").text


def test_pools_are_numbered_per_campaign(app: Flask, as_user, world: World) -> None:
    with get_store_of(app).session() as s:
        other = campaigns.create_campaign(s, "c2")
        c1 = campaigns.get_campaign(s, "c1")
        assert pools.latest_pool(s, c1).number == 1
    admin = as_user("admin")
    _build(admin, world.campaign_id, strategy="depth", depth="2")
    with get_store_of(app).session() as s:
        numbers = sorted((p.campaign_id, p.number) for p in s.scalars(select(Pool)))
        assert numbers == [(world.campaign_id, 1), (world.campaign_id, 2)]
        assert pools.list_pools(s, s.merge(other)) == []


def test_qrels_downloads_have_distinct_names_and_list_judging_assessors(
    app: Flask, as_user, world: World
) -> None:
    cid = world.campaign_id
    as_user("alice").post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D1", "grade": 2},
    )
    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{cid}").text
    form = page.split('id="export-qrels"')[1].split("</form>")[0]
    assert 'value="assessor:alice"' in form
    assert "assessor:bob" not in form and "assessor:carol" not in form  # nothing judged
    graded = admin.get(
        f"/admin/campaigns/{cid}/download/qrels?source=assessor:alice&allow_incomplete=1"
    )
    binary = admin.get(
        f"/admin/campaigns/{cid}/download/qrels?source=assessor:alice&allow_incomplete=1"
        "&binary_level=1"
    )
    assert "c1.alice.graded.incomplete.qrels" in graded.headers["Content-Disposition"]
    assert "c1.alice.binary1.incomplete.qrels" in binary.headers["Content-Disposition"]
    assert "T1 0 D1 2" in graded.data.decode() and "T1 0 D1 1" in binary.data.decode()


def test_cli_pool_stats_and_build_are_readable(run_cli, world: World) -> None:
    stats = run_cli("pool", "stats", "--campaign", "c1")
    assert stats.exit_code == 0, stats.output
    first = stats.output.splitlines()[0]
    assert first.startswith("pool 1 (depth: depth 3, 2 runs, seed 7, created ")
    assert "{" not in stats.output
    built = run_cli(
        "pool", "build", "--campaign", "c1", "--strategy", "fusion", "--budget", "2",
        "--name", "fused", "--seed", "1",
    )  # fmt: skip
    assert built.exit_code == 0, built.output
    assert built.output.startswith("pool 2 “fused” (fusion: budget 2, fusion rrf (k = 60), 2 runs")
    again = run_cli("pool", "stats", "--campaign", "c1", "--pool", "1")
    assert again.output.startswith("pool 1 (depth")
    assert run_cli("pool", "stats", "--campaign", "c1", "--pool", "5").exit_code == 1


@dataclass(frozen=True)
class _FirstParams:
    per_run: int = field(default=1, metadata={"help": "documents per run", "minimum": 1})

    def record(self) -> dict[str, Any]:
        return {"per_run": self.per_run}

    def describe(self) -> str:
        return f"{self.per_run} per run"


def _first(rankings, p: _FirstParams, context) -> list[pooling.PooledDocument]:  # type: ignore[no-untyped-def]
    docnos = dict.fromkeys(d for r in rankings.values() for d in r.docnos[: p.per_run])
    return pooling.describe(rankings, docnos, None)


def test_a_new_strategy_reaches_the_cli_the_form_and_the_service(
    app: Flask, as_user, world: World, monkeypatch
) -> None:
    """Adding a strategy touches pooling.py only: its parameters become a CLI option, a form
    field and a validated, recorded, described pool."""
    strategy = pooling.Strategy("first", _FirstParams, _first, "each run's first documents")
    monkeypatch.setitem(pooling.STRATEGIES, "first", strategy)

    command = pool_strategy_options(click.command()(lambda **values: None))
    option = next(p for p in command.params if p.name == "per_run")
    assert option.opts == ["--per-run"] and "Documents per run (first)" in (option.help or "")

    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{world.campaign_id}").text
    assert '<option value="first" title="each run&#39;s first documents">' in page
    assert 'name="per_run"' in page and "Documents per run (first)" in page
    built = _build(admin, world.campaign_id, strategy="first", per_run="2", seed="1").text
    assert "Pool 2 built (first): 2 per run." in built
    assert "8 documents (8 to judge) over 2 topics" in built  # D1 D2 D8 D7 per topic
    bad = _build(admin, world.campaign_id, strategy="first", per_run="0").text
    assert "per_run must be a positive integer; got 0" in bad


def test_the_registry_declares_each_parameter_once() -> None:
    fields = {f.name: f for f in pooling.option_fields()}
    assert list(fields) == ["depth", "budget", "fair", "fusion", "strata"]
    assert fields["budget"].strategies == ("take", "fusion", "prior")
    assert fields["depth"].strategies == ("depth", "prior")
    assert fields["fusion"].choices == pooling.FUSION_METHODS
    assert pooling.get_strategy("stratified").describe({"strata": [[10, 1.0], [30, 0.2]]}) == (
        "strata ranks ≤ 10: 100%, ranks ≤ 30: 20%"
    )


def test_counts_use_the_singular_for_one(app: Flask, as_user, world: World) -> None:
    with get_store_of(app).session() as s:
        campaign = campaigns.create_campaign(s, "tiny")
        path = Path(app.instance_path) / "one.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("1\tone topic\n")
        topic_imports.import_topics(s, campaign, path)
        cid = campaign.id
    page = as_user("admin").get(f"/admin/campaigns/{cid}").text
    counts = page.split('id="counts">')[1].split("</p>")[0]
    assert "<strong>1</strong> topic ·" in counts
    assert "<strong>0</strong> qrels sets" in counts and "<strong>0</strong> pools" in counts
