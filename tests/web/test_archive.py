"""Archive (hidden, read-only, restorable) and delete (only what nothing judged depends on)
for campaigns, runs, topics, pools and users."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import World, get_store_of, login
from workbench.services import assignments as assignment_service
from workbench.services import campaigns, pools
from workbench.store.models import (
    Assignment,
    Campaign,
    Judgement,
    Pool,
    PoolEntry,
    Run,
    Topic,
    User,
)


def _judge(as_user, world: World, who: str = "alice", qid: str = "T1") -> None:
    response = as_user(who).post(
        f"/api/v1/assignments/{world.assignment[who, qid]}/judgements",
        json={"docno": "D1", "grade": 1},
    )
    assert response.status_code in (200, 201), response.text


def _archive(admin, kind: str, object_id: int, archived: bool = True):  # type: ignore[no-untyped-def]
    return admin.post(
        f"/admin/archive/{kind}/{object_id}",
        data={"archived": "1" if archived else "0"},
        follow_redirects=True,
    ).text


def test_an_archived_campaign_is_hidden_and_read_only(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    assert "c1" in as_user("alice").get("/assess/").text
    page = _archive(admin, "campaign", cid)
    assert "Campaign &#39;c1&#39; archived." in page
    listing = admin.get("/admin/").text
    assert 'id="archived-campaigns"' in listing
    assert listing.split('id="archived-campaigns"')[0].count(f'/admin/campaigns/{cid}"') == 0
    assert "<td>c1</td>" not in as_user("alice").get("/assess/").text  # hidden from assessors
    refused = admin.post(
        f"/admin/campaigns/{cid}/pools", data={"strategy": "depth"}, follow_redirects=True
    ).text
    assert "campaign &#39;c1&#39; is archived: restore it to change it" in refused
    with get_store_of(app).session() as s:
        assert s.scalar(select(func.count()).select_from(Pool)) == 1
    assert "This campaign is archived" in admin.get(f"/admin/campaigns/{cid}").text
    _archive(admin, "campaign", cid, archived=False)
    assert "c1" in as_user("alice").get("/assess/").text
    assert 'id="archived-campaigns"' not in admin.get("/admin/").text


def test_delete_shows_dependents_and_never_deletes_judgements(
    app: Flask, as_user, world: World
) -> None:
    admin = as_user("admin")
    _judge(as_user, world)
    page = admin.get(f"/admin/delete/campaign/{world.campaign_id}").text
    assert "1 judgement, 2 topics, 8 documents, 2 runs, 1 pool, 4 assignments" in page
    assert 'id="not-deletable"' in page and 'id="delete-form"' not in page
    refused = admin.post(f"/admin/delete/campaign/{world.campaign_id}", follow_redirects=True).text
    assert "campaign &#39;c1&#39; cannot be deleted while it has 1 judgement" in refused
    with get_store_of(app).session() as s:
        assert s.get(Campaign, world.campaign_id) is not None
        empty = campaigns.create_campaign(s, "mistake").id
    page = admin.get(f"/admin/delete/campaign/{empty}").text
    assert "Depends on it: nothing." in page and 'id="delete-form"' in page
    done = admin.post(f"/admin/delete/campaign/{empty}", follow_redirects=True).text
    assert "Campaign &#39;mistake&#39; deleted." in done
    with get_store_of(app).session() as s:
        assert s.get(Campaign, empty) is None
    assert admin.get("/admin/delete/run/999").status_code == 404
    assert admin.get("/admin/delete/judgement/1").status_code == 404


def test_archived_runs_and_topics_stay_out_of_new_pools(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    with get_store_of(app).session() as s:
        run_b = s.scalar(select(Run).where(Run.tag == "runB")).id
        t2 = s.scalar(select(Topic).where(Topic.qid == "T2")).id
    _archive(admin, "run", run_b)
    _archive(admin, "topic", t2)
    page = admin.post(
        f"/admin/campaigns/{cid}/pools", data={"strategy": "depth", "depth": "2"},
        follow_redirects=True,
    ).text  # fmt: skip
    assert "Pool 2 built (depth): depth 2; 1 chosen topic." in page
    with get_store_of(app).session() as s:
        pool = pools.get_pool(s, s.get(Campaign, cid), 2)
        assert pool.params["runs"] == ["runA"] and pool.params["topics"] == ["T1"]
    named = admin.post(
        f"/admin/campaigns/{cid}/pools", data={"strategy": "depth", "runs": ["runB"]},
        follow_redirects=True,
    ).text  # fmt: skip
    assert "run(s) runB are archived: restore them to pool them" in named
    # runB is in pool 1 (and T2 pooled there): neither can be deleted, only archived
    assert "It cannot be deleted" in admin.get(f"/admin/delete/run/{run_b}").text
    assert "1 pool." in admin.get(f"/admin/delete/run/{run_b}").text
    assert "12 pooled documents" not in admin.get(f"/admin/delete/topic/{t2}").text
    assert "It cannot be deleted" in admin.get(f"/admin/delete/topic/{t2}").text
    _archive(admin, "run", run_b, archived=False)
    assert 'value="runB"' in admin.get(f"/admin/campaigns/{cid}").text.split('id="build-pool"')[1]


def test_an_archived_pool_is_kept_but_out_of_use(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    _archive(admin, "pool", world.pool_id)
    assert "<td>c1</td>" not in as_user("alice").get("/assess/").text  # assignments hidden
    with get_store_of(app).session() as s:
        c = s.get(Campaign, cid)
        assert pools.latest_pool(s, c) is None
        assert [p.number for p in pools.list_pools(s, c, archived=True)] == [1]
    refused = admin.post(
        f"/admin/campaigns/{cid}/pools/1/extend", data={"runs": ["runA"]}, follow_redirects=True
    ).text
    assert "pool 1 is archived: restore it to extend it" in refused
    _archive(admin, "pool", world.pool_id, archived=False)
    # a pool nobody judged in can be deleted, with its entries and assignments
    _judge(as_user, world)
    assert "It cannot be deleted" in admin.get(f"/admin/delete/pool/{world.pool_id}").text
    admin.post(f"/admin/campaigns/{cid}/pools", data={"strategy": "depth", "depth": "1"})
    with get_store_of(app).session() as s:
        second = pools.get_pool(s, s.get(Campaign, cid), 2)
        assignment_service.assign(s, second, "T2", s.get(User, world.users["carol"]))
        second_id = second.id
    page = admin.get(f"/admin/delete/pool/{second_id}").text
    assert "1 assignment, 4 pooled documents" in page and 'id="delete-form"' in page
    admin.post(f"/admin/delete/pool/{second_id}")
    with get_store_of(app).session() as s:
        assert s.get(Pool, second_id) is None
        assert s.scalar(select(func.count()).where(PoolEntry.pool_id == second_id)) == 0
        assert s.scalar(select(func.count()).where(Assignment.pool_id == second_id)) == 0
        assert s.scalar(select(func.count()).select_from(Judgement)) == 1  # kept


def test_users_archive_and_delete(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    _judge(as_user, world)
    page = _archive(admin, "user", world.users["bob"])
    assert "User &#39;bob&#39; archived." in page and 'id="archived-users"' in page
    assert login(app.test_client(), "bob").status_code == 401
    _archive(admin, "user", world.users["bob"], archived=False)
    assert login(app.test_client(), "bob").status_code == 302
    refused = _archive(admin, "user", world.users["admin"])
    assert "last active admin" in refused
    assert "It cannot be deleted" in admin.get(f"/admin/delete/user/{world.users['alice']}").text
    page = admin.get(f"/admin/delete/user/{world.users['carol']}").text
    assert "Depends on it: nothing." in page
    admin.post(f"/admin/delete/user/{world.users['carol']}")
    with get_store_of(app).session() as s:
        assert s.get(User, world.users["carol"]) is None
        assert s.get(User, world.users["admin"]).archived_at is None


def test_cli_archive_restore_and_delete(app: Flask, world_url, world: World, as_user) -> None:
    from click.testing import CliRunner

    from workbench.cli import main

    def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", world_url[0], *args], input=input)

    archived = run("archive", "run", "runB", "--campaign", "c1")
    assert archived.exit_code == 0 and "run 'runB' archived" in archived.output
    with get_store_of(app).session() as s:
        assert s.scalar(select(Run).where(Run.tag == "runB")).archived_at is not None
    assert run("archive", "run", "runB", "--campaign", "c1", "--restore").exit_code == 0
    assert run("archive", "pool", "1", "--campaign", "c1").output == "pool 1 archived\n"
    assert run("archive", "pool", "1", "--campaign", "c1", "--restore").exit_code == 0
    assert run("archive", "campaign", "c1").exit_code == 0
    assert run("campaign", "list").output.rstrip().endswith("level 1\tarchived")
    assert run("archive", "campaign", "c1", "--restore").exit_code == 0
    assert run("archive", "pool", "one", "--campaign", "c1").exit_code == 1
    assert "name the campaign" in run("archive", "topic", "T1").output
    assert "last active admin" in run("archive", "user", "admin").output
    _judge(as_user, world)
    refused = run("delete", "user", "alice", "--yes")
    assert refused.exit_code == 1
    assert "depends on it: 1 judgement, 2 assignments" in refused.output
    assert "cannot be deleted while it has 1 judgement" in refused.output
    kept = run("delete", "user", "carol", input="n\n")
    assert kept.exit_code == 1 and "Depends" not in kept.output  # aborted at the question
    gone = run("delete", "user", "carol", input="y\n")
    assert gone.exit_code == 0 and "user 'carol' deleted" in gone.output
    with get_store_of(app).session() as s:
        assert s.get(User, world.users["carol"]) is None
