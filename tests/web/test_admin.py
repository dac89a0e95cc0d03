"""Admin pages: campaigns, uploads (bad files change nothing), pools, assignments, progress,
downloads and users, driven through the forms."""

from __future__ import annotations

import io
from pathlib import Path

from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import World, get_store_of, login
from workbench.services import assignments as assignment_service
from workbench.store.models import Assignment, Campaign, Pool, Run, Topic, User


def count(app: Flask, model, **where) -> int:  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as s:
        query = select(func.count()).select_from(model)
        for name, value in where.items():
            query = query.where(getattr(model, name) == value)
        return s.scalar(query) or 0


def upload(client, campaign_id: int, kind: str, filename: str, content: str, **fields):  # type: ignore[no-untyped-def]
    data = {"files": (io.BytesIO(content.encode()), filename), **fields}
    return client.post(
        f"/admin/campaigns/{campaign_id}/upload/{kind}",
        data=data,
        content_type="multipart/form-data",
        follow_redirects=True,
    )


def test_create_campaign_with_a_scale(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    page = admin.post(
        "/admin/campaigns",
        data={"name": "news", "scale": "0:No:a,1:Yes:b,3:Vital:v", "relevance_level": "1"},
        follow_redirects=True,
    )
    assert "Campaign &#39;news&#39; created." in page.text
    with get_store_of(app).session() as s:
        campaign = s.scalar(select(Campaign).where(Campaign.name == "news"))
        assert [(g.value, g.label, g.key) for g in campaign.grades] == [
            (0, "No", "a"),
            (1, "Yes", "b"),
            (3, "Vital", "v"),
        ]
    listing = admin.get("/admin/").text
    assert "news" in listing and "Vital" in listing


def test_bad_campaign_requests_show_the_message(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    for data, message in [
        ({"name": "x", "scale": "0:No,0:Again"}, "unique"),
        ({"name": "x", "scale": "0:No:0,1:Yes:1", "relevance_level": "5"}, "relevance level 5"),
        ({"name": "c1"}, "already exists"),
        ({"name": "x", "relevance_level": "high"}, "integer"),
    ]:
        page = admin.post("/admin/campaigns", data=data, follow_redirects=True)
        assert message in page.text, data
    assert count(app, Campaign) == 1


def test_bad_topic_file_changes_nothing_and_names_the_line(app: Flask, as_user, world) -> None:
    before = count(app, Topic)
    page = upload(
        as_user("admin"),
        world.campaign_id,
        "topics",
        "new-topics.jsonl",
        '{"qid": "T9", "title": "ok"}\nnot json\n',
    )
    assert "new-topics.jsonl:2" in page.text
    assert "/tmp" not in page.text  # the temporary upload folder is not shown
    assert count(app, Topic) == before


def test_bad_run_changes_nothing(app: Flask, as_user, world: World) -> None:
    page = upload(
        as_user("admin"),
        world.campaign_id,
        "runs",
        "bad.run",
        "T1 Q0 D1 1 2.0 runC\nT1 Q0 D2 2 high runC\n",
    )
    assert "bad.run:2" in page.text
    unknown = upload(
        as_user("admin"), world.campaign_id, "runs", "other.run", "T7 Q0 D1 1 2.0 runC\n"
    )
    assert "T7" in unknown.text
    assert count(app, Run) == 2


def test_uploads_import_and_report(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    page = upload(admin, world.campaign_id, "topics", "more.tsv", "T3\tthird topic\n")
    assert "topics: 1 added" in page.text
    page = upload(
        admin,
        world.campaign_id,
        "runs",
        "c.run",
        "T1 Q0 D4 1 5.0 runC\nT1 Q0 D5 2 4.0 runC\n",
        group="g1",
    )
    assert "runs: 1 added" in page.text
    page = upload(
        admin,
        world.campaign_id,
        "documents",
        "d.jsonl",
        '{"docno": "D9", "title": "Nine", "text": "nine"}\n',
    )
    assert "documents: 1 added" in page.text
    page = upload(admin, world.campaign_id, "qrels", "ref.qrels", "T1 0 D1 2\n", name="ref")
    assert "qrels" in page.text and "1 added" in page.text
    assert count(app, Topic) == 3 and count(app, Run) == 2 + 1
    assert (
        "Choose at least one file"
        in admin.post(
            f"/admin/campaigns/{world.campaign_id}/upload/runs", follow_redirects=True
        ).text
    )
    assert admin.post(f"/admin/campaigns/{world.campaign_id}/upload/other").status_code == 404


def test_build_and_extend_a_pool(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    page = admin.post(
        f"/admin/campaigns/{cid}/pools",
        data={"strategy": "depth", "depth": "2", "seed": "5", "runs": ["runA"]},
        follow_redirects=True,
    )
    assert "Pool 2 built (depth): depth 2." in page.text
    assert "4 documents (4 to judge) over 2 topics" in page.text  # runA top 2 for T1, T2
    upload(admin, cid, "runs", "c.run", "T1 Q0 D5 1 5.0 runC\nT1 Q0 D1 2 4.0 runC\n")
    page = admin.post(
        f"/admin/campaigns/{cid}/pools/2/extend", data={"runs": ["runC"]}, follow_redirects=True
    )
    assert "Pool 2 extended by 1 document." in page.text  # D5 is new, D1 was pooled
    bad = admin.post(
        f"/admin/campaigns/{cid}/pools",
        data={"strategy": "take", "budget": ""},
        follow_redirects=True,
    )
    assert "budget" in bad.text
    assert count(app, Pool) == 2
    assert admin.post(f"/admin/campaigns/{cid}/pools/99/extend").status_code == 404


def test_automatic_assignment_balances_and_reassign(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    with get_store_of(app).session() as s:  # start from no assignments
        for a in s.scalars(select(Assignment)):
            s.delete(a)
    page = admin.post(
        f"/admin/campaigns/{cid}/assignments/auto",
        data={"judges_per_topic": "2", "order": "random"},
        follow_redirects=True,
    )
    assert "4 assignments created." in page.text
    with get_store_of(app).session() as s:
        rows = list(s.scalars(select(Assignment)))
        per_topic = sorted((a.qid, a.user_id) for a in rows)
        assert [q for q, _ in per_topic] == ["T1", "T1", "T2", "T2"]
        loads: dict[int, int] = {}
        for a in rows:
            loads[a.user_id] = loads.get(a.user_id, 0) + 6  # both topics pool 6 documents
        assert sorted(loads.values()) == [6, 6, 12]  # 24 documents over 3 assessors, LPT
        target = rows[0]
        holder = s.get(User, target.user_id).username
        free = next(
            u
            for u in ("alice", "bob", "carol")
            if u != holder
            and all(
                not (a.qid == target.qid and s.get(User, a.user_id).username == u) for a in rows
            )
        )
    page = admin.post(
        f"/admin/campaigns/{cid}/assignments/{target.id}/reassign",
        data={"user": free},
        follow_redirects=True,
    )
    assert "Topic reassigned." in page.text
    with get_store_of(app).session() as s:
        active = [
            (a.qid, s.get(User, a.user_id).username)
            for a in s.scalars(select(Assignment).where(Assignment.active.is_(True)))
        ]
    assert (target.qid, free) in active and (target.qid, holder) not in active
    too_many = admin.post(
        f"/admin/campaigns/{cid}/assignments/auto",
        data={"judges_per_topic": "4"},
        follow_redirects=True,
    )
    assert "at least 4 active assessors" in too_many.text


def test_manual_assignment(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    page = admin.post(
        f"/admin/campaigns/{cid}/assignments",
        data={"user": "carol", "qids": ["T2"], "order": "priority"},
        follow_redirects=True,
    )
    assert "Assigned 1 topic to carol." in page.text
    assert count(app, Assignment, user_id=world.users["carol"]) == 1
    bad = admin.post(
        f"/admin/campaigns/{cid}/assignments",
        data={"user": "carol", "qids": ["T9"]},
        follow_redirects=True,
    )
    assert "T9" in bad.text
    nobody = admin.post(
        f"/admin/campaigns/{cid}/assignments",
        data={"user": "zed", "qids": ["T1"]},
        follow_redirects=True,
    )
    assert "no user" in nobody.text


def test_progress_page(app: Flask, as_user, world: World) -> None:
    alice = as_user("alice")
    alice.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D1", "grade": 2, "time_spent_ms": 90_000},
    )
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}/progress").text
    assert "1 / 24" in page
    assert "1.5 min" in page
    assert "90 s" in page  # per document for alice


def test_downloads(app: Flask, as_user, world: World) -> None:
    cid = world.campaign_id
    for who, qid, docno, grade in [
        ("alice", "T1", "D1", 2),
        ("bob", "T1", "D1", 0),
        ("alice", "T2", "D3", 1),
    ]:
        as_user(who).post(
            f"/api/v1/assignments/{world.assignment[who, qid]}/judgements",
            json={"docno": docno, "grade": grade},
        )
    admin = as_user("admin")
    pool = admin.get(f"/admin/campaigns/{cid}/download/pool")
    assert pool.headers["Content-Disposition"].startswith("attachment; filename=c1.pool1.txt")
    assert pool.data.decode().splitlines()[:2] == ["T1 D1", "T1 D2"]
    assert len(pool.data.decode().splitlines()) == 12
    unfinished = admin.get(f"/admin/campaigns/{cid}/download/qrels?assessor=alice")
    assert unfinished.status_code == 303  # refused: alice judged 2 of her 12 documents
    page = admin.get(unfinished.headers["Location"]).text
    assert "10 of the 12 pooled or judged documents lack a grade by alice" in page
    assert 'name="allow_incomplete" value="1"' in page  # the explicit choice is offered
    alice = admin.get(f"/admin/campaigns/{cid}/download/qrels?assessor=alice&allow_incomplete=1")
    assert "c1.alice.graded.incomplete.qrels" in alice.headers["Content-Disposition"]
    assert alice.data.decode().splitlines() == ["T1 0 D1 2", "T2 0 D3 1"]  # plain qrels
    binary = admin.get(
        f"/admin/campaigns/{cid}/download/qrels?assessor=bob&binary_level=1&allow_incomplete=1"
    )
    assert binary.data.decode().splitlines() == ["T1 0 D1 0"]
    overview = admin.get(f"/admin/campaigns/{cid}").text  # the page says what a download is
    assert "The qrels cannot be written yet" in overview and "more than one judge" in overview
    shared = admin.get(f"/admin/campaigns/{cid}/download/qrels", follow_redirects=True)
    assert "more than one judge" in shared.text
    log = admin.get(f"/admin/campaigns/{cid}/download/log?format=csv").data.decode()
    assert log.splitlines()[0].startswith("id,assessor,qid,docno,grade")
    assert len(log.splitlines()) == 4
    assert admin.get(f"/admin/campaigns/{cid}/download/log?format=json").json
    bad = admin.get(f"/admin/campaigns/{cid}/download/log?format=xml", follow_redirects=True)
    assert "csv or json" in bad.text


def test_users_page(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    page = admin.post(
        "/admin/users",
        data={"username": "dave", "password": "long enough", "role": "assessor"},
        follow_redirects=True,
    )
    assert "User &#39;dave&#39; added." in page.text
    short = admin.post(
        "/admin/users", data={"username": "eve", "password": "short"}, follow_redirects=True
    )
    assert "too short" in short.text
    with get_store_of(app).session() as s:
        dave = s.scalar(select(User).where(User.username == "dave")).id
    admin.post(f"/admin/users/{dave}", data={"action": "role", "role": "admin"})
    admin.post(f"/admin/users/{dave}", data={"action": "password", "password": "new password"})
    client = app.test_client()
    assert login(client, "dave", "new password").status_code == 302
    assert client.get("/admin/").status_code == 200  # dave is an admin now
    shown = admin.post(f"/admin/users/{dave}", data={"action": "token"})
    token = shown.text.split('id="new-token">')[1].split("<")[0]
    assert (
        app.test_client()
        .get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        .json["username"]
        == "dave"
    )
    assert token not in admin.get("/admin/users").text  # shown once
    admin.post(f"/admin/users/{dave}", data={"action": "active", "active": "0"})
    assert login(app.test_client(), "dave", "new password").status_code == 401
    assert (
        admin.post(
            f"/admin/users/{dave}", data={"action": "fly"}, follow_redirects=True
        ).text.count("unknown action")
        == 1
    )
    assert admin.post("/admin/users/999", data={"action": "role"}).status_code == 404


def test_assignment_service_balances_uneven_topics(app: Flask, world: World, tmp_path: Path):
    """Topics of sizes 6 and 6 with J=1 over two assessors: one topic each."""
    with get_store_of(app).session() as s:
        for a in s.scalars(select(Assignment)):
            s.delete(a)
        s.flush()
        pool = s.get(Pool, world.pool_id)
        users = [s.scalar(select(User).where(User.username == n)) for n in ("alice", "bob")]
        made = assignment_service.auto_assign(s, pool, judges_per_topic=1, assessors=users)
        assert sorted((a.qid, a.user_id) for a in made) == [
            ("T1", users[0].id),
            ("T2", users[1].id),
        ]
        again = assignment_service.auto_assign(s, pool, judges_per_topic=1, assessors=users)
        assert again == []  # already satisfied
