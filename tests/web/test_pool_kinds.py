"""Pooling strategies and adaptive methods are two registries with two names: `pool build
--strategy` takes the first, `--adaptive` the second, and the web's two forms the same. The old
spelling (an adaptive method as --strategy, the adaptive form's field `strategy`) still works,
with a warning; a name of one registry given for the other is refused, and the message says
where it belongs."""

from __future__ import annotations

import re

from click.testing import CliRunner
from sqlalchemy import func, select

from tests.web.conftest import get_store_of
from workbench import adaptive, pooling
from workbench.cli import main
from workbench.services import adaptive_pools, pools
from workbench.store.models import Campaign, Pool

METHODS = ", ".join(adaptive.ADAPTIVE)


def _pools(url: str) -> list[tuple[str, str | None]]:
    """(pooling strategy, stored adaptive method or None) of every pool, oldest first."""
    from workbench.store import open_store

    store = open_store(url)
    try:
        with store.read_session() as s:
            return [
                (p.strategy, (p.params.get("adaptive") or {}).get("strategy"))
                for p in s.scalars(select(Pool).order_by(Pool.id))
            ]
    finally:
        store.dispose()


def test_the_command_line_takes_each_registry_in_its_own_option(world_url, world):
    url = world_url[0]

    def run(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", url, "pool", "build", "--campaign", "c1", *args])

    before = _pools(url)
    adaptive_pool = run("--adaptive", "ts", "--budget", "3", "--depth", "6")
    assert adaptive_pool.exit_code == 0, adaptive_pool.output
    assert "adaptive ts, budget 3 per topic" in adaptive_pool.output
    assert "deprecated" not in adaptive_pool.output
    explicit_depth = run("--strategy", "depth", "--adaptive", "mm", "--budget", "3")
    assert explicit_depth.exit_code == 0 and "adaptive mm," in explicit_depth.output
    old = run("--strategy", "hedge", "--budget", "3", "--depth", "6")
    assert old.exit_code == 0, old.output
    assert old.stderr == (
        "warning: --strategy hedge is deprecated: hedge is an adaptive method, give "
        "--adaptive hedge (the old spelling will be refused in the next release)\n"
    )
    assert "adaptive hedge, budget 3 per topic" in old.stdout
    ordinary = run("--strategy", "take", "--budget", "2")
    assert ordinary.exit_code == 0 and "deprecated" not in ordinary.output
    # stored as before: the pooling strategy in the column, the method under the key strategy
    assert _pools(url)[len(before) :] == [
        ("depth", "ts"),
        ("depth", "mm"),
        ("depth", "hedge"),
        ("take", None),
    ]

    refusals = [
        (
            ["--adaptive", "depth", "--budget", "3"],
            1,
            "'depth' is a pooling strategy, not an adaptive method: build it as an ordinary "
            f"pool (the Pools form, `pool build --strategy depth`); adaptive methods: {METHODS}",
        ),
        (["--adaptive", "take", "--budget", "3"], 1, "'take' is a pooling strategy"),
        (
            ["--adaptive", "rrf", "--budget", "3"],
            1,
            "'rrf' is a fixed order of the judging simulator, not an adaptive method",
        ),
        (["--adaptive", "nope"], 1, f"unknown adaptive method 'nope'; expected one of {METHODS}"),
        (["--adaptive", "mm-ns", "--budget", "3"], 1, "is now called 'mm-discounted'"),
        (
            ["--strategy", "take", "--adaptive", "mm", "--budget", "3"],
            2,
            "an adaptive pool is a depth pool: --adaptive mm cannot go with --strategy take",
        ),
        (
            ["--strategy", "mm", "--adaptive", "ts", "--budget", "3"],
            2,
            "--strategy mm is an adaptive method and --adaptive ts another: give --adaptive only",
        ),
        (
            ["--strategy", "nope"],
            1,
            "unknown pooling strategy 'nope'; expected one of " + ", ".join(pooling.STRATEGIES),
        ),
    ]
    for args, code, message in refusals:
        refused = run(*args)
        assert refused.exit_code == code, (args, refused.output)
        assert message in " ".join(refused.output.split()), (args, refused.output)
        assert "Traceback" not in refused.output
    assert len(_pools(url)) == len(before) + 4  # nothing refused was stored


def test_the_help_offers_each_registry_once(world_url):
    shown = CliRunner().invoke(main, ["pool", "build", "--help"], terminal_width=400).output
    strategy = re.search(r"--strategy \[([^\]]*)\]", shown)
    method = re.search(r"--adaptive \[([^\]]*)\]", shown)
    assert strategy and strategy.group(1).split("|") == list(pooling.STRATEGIES)
    assert method and method.group(1).split("|") == list(adaptive.ADAPTIVE)


def test_the_web_forms_take_each_registry_in_its_own_field(app, world, as_user):
    admin = as_user("admin")
    campaign = world.campaign_id
    store = get_store_of(app)

    def count() -> int:
        with store.read_session() as s:
            return s.scalar(select(func.count()).select_from(Pool))

    page = admin.get(f"/admin/campaigns/{campaign}").text
    adaptive_select = re.search(r'<select name="method">(.*?)</select>', page, re.S)
    pooling_select = re.search(r'<select name="strategy">(.*?)</select>', page, re.S)
    assert adaptive_select and pooling_select
    assert re.findall(r"<option[^>]*>([^<]*)</option>", adaptive_select.group(1)) == list(
        adaptive.ADAPTIVE
    )
    assert re.findall(r'<option value="([^"]*)"', pooling_select.group(1)) == list(
        pooling.STRATEGIES
    )

    built = admin.post(
        f"/admin/campaigns/{campaign}/adaptive-pools",
        data={"method": "ts", "budget": "3"},
        follow_redirects=True,
    )
    assert "Pool 2 built: adaptive ts," in built.text and "is called" not in built.text
    old = admin.post(
        f"/admin/campaigns/{campaign}/adaptive-pools",
        data={"strategy": "hedge", "budget": "3"},
        follow_redirects=True,
    )
    assert "Pool 3 built: adaptive hedge," in old.text
    assert (
        "the adaptive pool&#39;s &#39;strategy&#39; is called &#39;method&#39; now (--adaptive "
        "on the command line); the old name still works in this release and will be refused "
        "in the next"
    ) in old.text
    with store.read_session() as s:
        latest = pools.latest_pool(s, s.get(Campaign, campaign))
        assert adaptive_pools.settings_of(latest).method == "hedge"

    pooling_as_adaptive = admin.post(
        f"/admin/campaigns/{campaign}/adaptive-pools",
        data={"method": "depth", "budget": "3"},
        follow_redirects=True,
    )
    assert "&#39;depth&#39; is a pooling strategy, not an adaptive method" in (
        pooling_as_adaptive.text
    )
    adaptive_as_pooling = admin.post(
        f"/admin/campaigns/{campaign}/pools", data={"strategy": "mm"}, follow_redirects=True
    )
    assert (
        "&#39;mm&#39; is an adaptive method, not a pooling strategy: build an adaptive pool "
        "(the adaptive pool form, `pool build --adaptive mm`); pooling strategies: "
        + ", ".join(pooling.STRATEGIES)
    ) in adaptive_as_pooling.text
    assert count() == 3  # the world's pool and the two adaptive ones: nothing refused stored

    api = admin.get(f"/api/v1/campaigns/{campaign}/pools/3/adaptive").get_json()
    assert api["settings"]["method"] == api["settings"]["strategy"] == "hedge"
