"""An archived campaign is read-only on the pages, API routes and commands of the machine
judges, adaptive pools, routing, gold documents and practice sets: every write is refused
with the reason and changes nothing, and its practice set is hidden from assessors like its
topics."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from tests.hardening.conftest import row_counts
from tests.web.conftest import World, get_store_of
from workbench.cli import main
from workbench.services import adaptive_pools, archive, calibration, gold, machine_judges
from workbench.store.models import Campaign, MachineJob, MachineJudgement, Pool

REFUSED = "campaign &#39;c1&#39; is archived: restore it to change it"


@pytest.fixture
def archived(app: Flask, world: World) -> dict[str, int]:
    """c1 with a machine judge (labels on pool 1, a stopped job), an adaptive pool 2, gold
    documents and a practice set; then archived. Returns the ids the routes need."""
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.add_judge(s, c, model="m", base_url="http://127.0.0.1:9/v1")
        pool1 = s.scalar(select(Pool).where(Pool.campaign_id == c.id, Pool.number == 1))
        job = MachineJob(campaign_id=c.id, judge_id=judge.id, status="stopped",
                         scope={"pool": pool1.id, "pool_number": 1, "topics": None,
                                "only_unjudged": False}, total=12, done=1)  # fmt: skip
        s.add(job)
        s.flush()
        s.add(
            MachineJudgement(
                judge_id=judge.id,
                campaign_id=c.id,
                qid="T1",
                docno="D1",
                grade=1,
                cache_key="k",
                template_hash="h",
                job_id=job.id,
            )
        )
        adaptive_pools.build_adaptive_pool(s, c, method="mm", budget=4, depth=3, batch=2,
                                           secondary_share=0.0, seed=1)  # fmt: skip
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        calibration.set_items(s, c, calibration.parse_items("T1\tD2\t1\tpartly\n"))
        archive.set_archived(s, c, True)
        return {"job": job.id}


WEB_POSTS = [
    ("/machine/{c}/template", {"template": "[user]\n{{document}} {{scale}}"}),
    ("/machine/{c}/judges", {"model": "other", "base_url": "http://127.0.0.1:9/v1"}),
    ("/machine/{c}/jobs", {"judge": "machine:m", "pool": "1"}),
    ("/machine/{c}/jobs/{job}/resume", {}),
    ("/machine/{c}/sample", {"judge": "machine:m", "pool": "1", "design": "uniform",
                             "share": "0.5"}),
    ("/machine/{c}/review", {"judge": "machine:m"}),
    ("/machine/{c}/qrels", {"judge": "machine:m", "combination": "machine", "name": "m",
                            "allow_incomplete": "1"}),
    ("/admin/campaigns/{c}/adaptive-pools", {"method": "mm", "budget": "3"}),
    ("/admin/campaigns/{c}/pools/2/adaptive/budget", {"budget": "3"}),
    ("/admin/campaigns/{c}/pools/2/adaptive/topics/T1/stop", {}),
]  # fmt: skip


@pytest.mark.parametrize(("url", "form"), WEB_POSTS, ids=[u for u, _ in WEB_POSTS])
def test_the_new_forms_refuse_to_change_an_archived_campaign(
    app: Flask, as_user, world: World, archived, url: str, form: dict
) -> None:
    launched: list[int] = []
    app.config["MACHINE_JOB_RUNNER"] = lambda store, job_id: launched.append(job_id)
    with get_store_of(app).read_session() as s:
        before = row_counts(s)
        pools_before = {p.id: (p.params, p.revision) for p in s.scalars(select(Pool))}
    target = url.format(c=world.campaign_id, **archived)
    response = as_user("admin").post(target, data=form, follow_redirects=True)
    assert response.status_code in (200, 400), response.status_code
    assert REFUSED in response.text, response.text[-3000:]
    assert launched == []
    with get_store_of(app).read_session() as s:
        assert row_counts(s) == before
        assert {p.id: (p.params, p.revision) for p in s.scalars(select(Pool))} == pools_before


API_POSTS = [
    ("/api/v1/campaigns/{c}/assignments", {"policy": "topics", "pool": 1}),
    ("/api/v1/campaigns/{c}/remainder", {"assessor": "alice", "confirm": True}),
    ("/api/v1/campaigns/{c}/pools/2/adaptive/budget", {"budget": 3}),
    ("/api/v1/campaigns/{c}/pools/2/adaptive/topics/T1/stop", {"stopped": True}),
]


@pytest.mark.parametrize(("url", "body"), API_POSTS, ids=[u for u, _ in API_POSTS])
def test_the_new_api_routes_refuse_to_change_an_archived_campaign(
    app: Flask, as_user, world: World, archived, url: str, body: dict
) -> None:
    with get_store_of(app).read_session() as s:
        before = row_counts(s)
    response = as_user("admin").post(url.format(c=world.campaign_id), json=body)
    assert response.status_code == 400, (response.status_code, response.text)
    assert "is archived" in response.json["error"]
    with get_store_of(app).read_session() as s:
        assert row_counts(s) == before


CLI = [
    ("machine", "add", "--campaign", "c1", "--model", "x"),
    ("machine", "template", "set", "--campaign", "c1", "--default"),
    ("gold", "settings", "--campaign", "c1", "--share", "0.1"),
    ("gold", "remove", "--campaign", "c1"),
    ("practice", "clear", "--campaign", "c1"),
    ("pool", "adaptive", "budget", "--campaign", "c1", "--pool", "2", "--budget", "3"),
    ("assign", "--campaign", "c1", "--pool", "1", "--policy", "topics"),
    ("remainder", "--campaign", "c1", "--assessor", "alice", "--yes"),
]


@pytest.mark.parametrize("args", CLI, ids=[" ".join(a[:3]) for a in CLI])
def test_the_new_commands_refuse_to_change_an_archived_campaign(
    app: Flask, world_url, archived, args: tuple[str, ...]
) -> None:
    with get_store_of(app).read_session() as s:
        before = row_counts(s)
    result = CliRunner().invoke(main, ["--db", world_url[0], *args])
    assert result.exit_code != 0, result.output
    assert "archived" in result.output and "Traceback" not in result.output, result.output
    with get_store_of(app).read_session() as s:
        assert row_counts(s) == before


def test_an_archived_campaigns_practice_set_is_hidden_from_assessors(
    app: Flask, as_user, world: World, archived
) -> None:
    alice = as_user("alice")
    assert alice.get(f"/assess/campaigns/{world.campaign_id}/practice").status_code == 404
