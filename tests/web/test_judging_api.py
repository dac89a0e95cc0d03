"""The judging API: submit, idempotent retries, revise, validation, resume, tokens, CSRF."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from tests.web.conftest import World, client_factory, csrf_token_of, get_store_of
from workbench.services import judging
from workbench.services import users as user_service
from workbench.store.models import Judgement

T1_POOL = ["D1", "D2", "D3", "D6", "D7", "D8"]  # depth 3 of runA (D1..) and runB (D8..)
JUDGEMENT = {"docno": "D1", "grade": 1}


def url(world: World, path: str = "", owner: str = "alice", qid: str = "T1") -> str:
    return f"/api/v1/assignments/{world.assignment[owner, qid]}{path}"


def log_rows(app: Flask, user_id: int) -> list[Judgement]:
    with get_store_of(app).session() as s:
        query = select(Judgement).where(Judgement.user_id == user_id).order_by(Judgement.id)
        return list(s.scalars(query))


def test_state_gives_topic_scale_and_docno_order(as_user, world: World) -> None:
    state = as_user("alice").get(url(world)).json
    assert state["qid"] == "T1"
    assert state["topic"]["title"] == "solar panel recycling"
    assert [g["value"] for g in state["grades"]] == [0, 1, 2]
    assert state["total"] == len(T1_POOL)
    assert state["position"] == 0
    client = as_user("alice")
    docnos = [client.get(url(world, f"/documents/{i}")).json["docno"] for i in range(6)]
    assert docnos == T1_POOL  # the assignment's order is 'docno'


def test_document_text_is_returned_as_data_not_markup(as_user, world: World) -> None:
    doc = as_user("alice").get(url(world, "/documents/0")).json
    assert doc["text"].endswith("<script>alert(1)</script>")
    page = as_user("alice").get(url(world).replace("/api/v1/assignments", "/assess")).text
    assert "<script>alert" not in page
    assert "&lt;b&gt;markup&lt;/b&gt;" in page  # topic narrative escaped


def test_submit_is_idempotent_on_client_id(app: Flask, as_user, world: World) -> None:
    client = as_user("alice")
    body = {"docno": "D2", "grade": 2, "client_id": "c-1", "time_spent_ms": 4200}
    first = client.post(url(world, "/judgements"), json=body)
    again = client.post(url(world, "/judgements"), json=body)
    assert first.status_code == 201 and first.json["created"] is True
    assert again.status_code == 200 and again.json["created"] is False
    assert again.json["judgement"]["id"] == first.json["judgement"]["id"]
    rows = log_rows(app, world.users["alice"])
    assert [(r.docno, r.grade, r.time_spent_ms, r.position) for r in rows] == [("D2", 2, 4200, 1)]


def test_client_id_reused_for_another_document_is_refused(as_user, world: World) -> None:
    client = as_user("alice")
    client.post(url(world, "/judgements"), json={"docno": "D1", "grade": 1, "client_id": "k"})
    response = client.post(
        url(world, "/judgements"), json={"docno": "D2", "grade": 1, "client_id": "k"}
    )
    assert response.status_code == 400
    assert "already used" in response.json["error"]


def test_revisions_are_kept_and_the_latest_counts(app: Flask, as_user, world: World) -> None:
    client = as_user("alice")
    for grade, cid in [(0, "a"), (2, "b"), (1, "c")]:
        client.post(
            url(world, "/judgements"),
            json={"docno": "D3", "grade": grade, "client_id": cid, "comment": f"g{grade}"},
        )
    assert [r.grade for r in log_rows(app, world.users["alice"])] == [0, 2, 1]
    doc = client.get(url(world, "/documents/2")).json
    assert doc["docno"] == "D3"
    assert doc["judgement"]["grade"] == 1 and doc["judgement"]["comment"] == "g1"
    assert client.get(url(world)).json["judgements"][2]["grade"] == 1


def test_cannot_judge_needs_a_reason(app: Flask, as_user, world: World) -> None:
    client = as_user("alice")
    refused = client.post(url(world, "/judgements"), json={"docno": "D1", "grade": None})
    assert refused.status_code == 400
    assert "reason" in refused.json["error"]
    ok = client.post(
        url(world, "/judgements"),
        json={"docno": "D1", "grade": None, "cannot_judge": "  garbled text "},
    )
    assert ok.status_code == 201
    (row,) = log_rows(app, world.users["alice"])
    assert (row.grade, row.cannot_judge) == (None, "garbled text")


def test_bad_submissions_get_clear_errors_and_store_nothing(app: Flask, as_user, world):
    client = as_user("alice")
    cases = [
        ({"docno": "D1", "grade": 3}, 400, "not on the scale"),
        ({"docno": "D1", "grade": -1}, 400, "not on the scale"),
        ({"docno": "D1", "grade": "2"}, 400, "integer"),
        ({"docno": "D1", "grade": True}, 400, "integer"),
        ({"docno": "D4", "grade": 1}, 404, "not in this assignment"),
        ({"docno": "NOPE", "grade": 1}, 404, "not in this assignment"),
        ({"grade": 1}, 400, "docno"),
        ({"docno": "D1", "grade": 1, "time_spent_ms": "soon"}, 400, "time_spent_ms"),
        ({"docno": "D1", "grade": 1, "client_id": "x" * 65}, 400, "client_id"),
        ([1, 2], 400, "JSON object"),
        ({"docno": "D1", "grade": 1, "comment": "a\x00b"}, 400, "NUL"),
        ({"docno": "D1\x00", "grade": 1}, 400, "NUL"),
    ]
    for body, status, message in cases:
        response = client.post(url(world, "/judgements"), json=body)
        assert response.status_code == status, body
        assert message in response.json["error"], body
    assert client.post(url(world, "/judgements"), data="grade=1").status_code == 400
    assert log_rows(app, world.users["alice"]) == []


def test_out_of_range_positions_and_unknown_ids(as_user, world: World) -> None:
    client = as_user("alice")
    assert client.get(url(world, "/documents/6")).status_code == 404
    assert "outside" in client.get(url(world, "/documents/6")).json["error"]
    assert client.get("/api/v1/assignments/9999").status_code == 404
    admin = as_user("admin")
    assert admin.get("/api/v1/campaigns/9999/progress").status_code == 404
    assert admin.get(f"/api/v1/campaigns/{world.campaign_id}/export/nothing").status_code == 404


def test_negative_time_is_stored_as_zero(app: Flask, as_user, world: World) -> None:
    as_user("alice").post(
        url(world, "/judgements"), json={"docno": "D1", "grade": 0, "time_spent_ms": -50}
    )
    assert log_rows(app, world.users["alice"])[0].time_spent_ms == 0


def test_resume_opens_the_first_unjudged_document(as_user, world: World) -> None:
    client = as_user("alice")  # the sequence (docno order): D1 D2 D3 D6 D7 D8
    for docno in ("D1", "D2"):
        client.post(url(world, "/judgements"), json={"docno": docno, "grade": 1})
    assert client.get(url(world)).json["position"] == 2
    assert client.get(url(world, "/next")).json["docno"] == "D3"
    for docno in ("D6", "D7"):  # D3 skipped: resuming opens it, not D8 after the last save
        client.post(url(world, "/judgements"), json={"docno": docno, "grade": 1})
    assert client.get(url(world)).json["position"] == 2
    assert client.get(url(world, "/next")).json["docno"] == "D3"
    for docno in ("D8", "D3"):
        client.post(url(world, "/judgements"), json={"docno": docno, "grade": 0})
    assert client.get(url(world)).json["position"] == 2  # all judged: the one judged last


def test_a_finished_queue_resumes_on_its_own_latest_judgement(
    app: Flask, as_user, world: World
) -> None:
    """Judgements are kept per topic: an assessor with the topic in two pools, whose latest
    judgement is of a document only the other pool holds, resumes a finished queue on the
    queue's own latest judgement (found by the two-server test: a 500 on /next)."""
    from workbench.services import assignments, campaigns, pools

    store = get_store_of(app)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        wider = pools.build_pool(session, campaign, strategy="depth", depth=6, seed=2)
        alice = user_service.get_user(session, "alice")
        other = assignments.assign(session, wider, "T1", alice, order="docno").id
    client = as_user("alice")
    mine = world.assignment["alice", "T1"]
    ordered = [
        client.get(f"/api/v1/assignments/{mine}/documents/{k}").json["docno"]
        for k in range(client.get(f"/api/v1/assignments/{mine}").json["total"])
    ]
    total = client.get(f"/api/v1/assignments/{other}").json["total"]
    wider_docnos = [
        client.get(f"/api/v1/assignments/{other}/documents/{k}").json["docno"] for k in range(total)
    ]
    outside = next(d for d in wider_docnos if d not in ordered)
    for docno in [*ordered, outside]:
        url = f"/api/v1/assignments/{mine if docno in ordered else other}/judgements"
        assert client.post(url, json={"docno": docno, "grade": 1}).status_code == 201
    following = client.get(f"/api/v1/assignments/{mine}/next")
    assert following.status_code == 200
    assert following.json["done"] is True and following.json["docno"] == ordered[-1]


def test_withdrawn_assignment_can_no_longer_be_judged(as_user, world: World) -> None:
    admin = as_user("admin")
    a = world.assignment["alice", "T1"]
    admin.post(f"/admin/campaigns/{world.campaign_id}/assignments/{a}/remove")
    client = as_user("alice")
    assert client.get(url(world)).status_code == 404
    assert (
        client.post(url(world, "/judgements"), json={"docno": "D1", "grade": 1}).status_code == 404
    )


def test_progress_api_counts_judged_and_time(as_user, world: World) -> None:
    alice = as_user("alice")
    alice.post(url(world, "/judgements"), json={"docno": "D1", "grade": 1, "time_spent_ms": 1000})
    alice.post(url(world, "/judgements"), json={"docno": "D1", "grade": 2, "time_spent_ms": 500})
    alice.post(
        url(world, "/judgements", qid="T2"), json={"docno": "D2", "grade": 0, "time_spent_ms": 250}
    )
    report = as_user("admin").get(f"/api/v1/campaigns/{world.campaign_id}/progress").json
    by_name = {a["username"]: a for a in report["assessors"]}
    assert by_name["alice"] == {
        "username": "alice", "judged": 2, "total": 12, "time_ms": 1750, "percent": 100 * 2 / 12
    }  # fmt: skip
    assert by_name["bob"] == {
        "username": "bob", "judged": 0, "total": 12, "time_ms": 0, "percent": 0.0
    }  # fmt: skip
    topics = {t["qid"]: t for t in report["topics"]}
    assert (topics["T1"]["judged"], topics["T1"]["total"]) == (1, 12)
    assert topics["T1"]["assessors"] == ["alice", "bob"]
    assert report["overall"] == {"judged": 2, "total": 24, "time_ms": 1750, "percent": 100 / 12}
    assert report["pools"] == [1] and report["scope"].startswith("pool 1 (the pools with")
    mine = {a["id"]: a for a in alice.get("/api/v1/assignments").json["assignments"]}
    assert mine[world.assignment["alice", "T1"]]["progress"]["judged"] == 1


def test_token_auth_for_scripts(app: Flask, csrf_app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        token = user_service.new_api_token(s, user_service.get_user(s, "alice"))
        admin_token = user_service.new_api_token(s, user_service.get_user(s, "admin"))
    client = csrf_app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/me", headers=headers).json["username"] == "alice"
    # token requests are exempt from CSRF
    response = client.post(
        url(world, "/judgements"), json={"docno": "D1", "grade": 2}, headers=headers
    )
    assert response.status_code == 201
    bad = client.get("/api/v1/me", headers={"Authorization": "Bearer wrong"})
    assert bad.status_code == 401
    assert (
        client.get(f"/api/v1/campaigns/{world.campaign_id}/progress", headers=headers).status_code
        == 403
    )
    export = client.get(
        f"/api/v1/campaigns/{world.campaign_id}/export/qrels?assessor=alice&allow_incomplete=1",
        headers={"Authorization": f"Bearer {admin_token}"},
    )
    assert export.status_code == 200
    assert export.data.decode().splitlines() == ["T1 0 D1 2"]  # plain qrels: no # lines


def test_bearer_header_ignores_the_session_cookie(csrf_app: Flask, world: World) -> None:
    client = client_factory(csrf_app)("alice")
    response = client.get("/api/v1/me", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401


def test_session_posts_need_the_csrf_token(csrf_app: Flask, world: World) -> None:
    client = csrf_app.test_client()
    page = client.get("/login").text
    login = client.post("/login", data={"username": "alice", "password": "correct horse"})
    assert login.status_code == 303  # refused: no csrf_token field
    assert client.get("/assess/").status_code == 302
    client.post(
        "/login",
        data={"username": "alice", "password": "correct horse", "csrf_token": csrf_token_of(page)},
    )
    judge_page = client.get(url(world).replace("/api/v1/assignments", "/assess")).text
    token = csrf_token_of(judge_page)
    body = {"docno": "D1", "grade": 1}
    missing = client.post(url(world, "/judgements"), json=body)
    assert missing.status_code == 400 and "CSRF" in missing.json["error"]
    wrong = client.post(url(world, "/judgements"), json=body, headers={"X-CSRFToken": "nope"})
    assert wrong.status_code == 400
    ok = client.post(url(world, "/judgements"), json=body, headers={"X-CSRFToken": token})
    assert ok.status_code == 201
    form = client.post("/admin/users", data={"username": "x"})
    assert form.status_code == 303  # no token: refused before the role check
    assert client.post("/logout").status_code == 303
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302


def test_concurrent_retries_store_one_row(app: Flask, as_user, world: World) -> None:
    from concurrent.futures import ThreadPoolExecutor

    clients = [as_user("alice") for _ in range(4)]
    body = {"docno": "D6", "grade": 1, "client_id": "same-everywhere"}

    def post(client):  # type: ignore[no-untyped-def]
        return client.post(url(world, "/judgements"), json=body).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = sorted(pool.map(post, clients))
    assert statuses == [200, 200, 200, 201]
    assert [(r.docno, r.client_id) for r in log_rows(app, world.users["alice"])] == [
        ("D6", "same-everywhere")
    ]


def _failing_once(monkeypatch, error: Exception) -> list[int]:  # type: ignore[no-untyped-def]
    """Make the API's first record_judgement call raise `error`; returns the call count."""
    calls = [0]
    record = judging.record_judgement

    def flaky(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 1:
            raise error
        return record(*args, **kwargs)

    monkeypatch.setattr(judging, "record_judgement", flaky)
    return calls


def test_submit_retries_once_on_a_broken_database_connection(
    as_user, app: Flask, world: World, monkeypatch
) -> None:
    """The pool has no pre-ping: a connection broken by a database restart fails the first
    statement; the submit is retried (the client_id makes that safe) and stored once."""
    broken = DBAPIError("SELECT", {}, OSError("server closed the connection"))
    broken.connection_invalidated = True
    calls = _failing_once(monkeypatch, broken)
    client = as_user("alice")
    response = client.post(url(world, "/judgements"), json={**JUDGEMENT, "client_id": "k1"})
    assert (response.status_code, calls[0]) == (201, 2)
    assert [r.client_id for r in log_rows(app, world.users["alice"])] == ["k1"]


def test_submit_without_client_id_is_not_retried(as_user, world: World, monkeypatch) -> None:
    broken = DBAPIError("SELECT", {}, OSError("server closed the connection"))
    broken.connection_invalidated = True
    calls = _failing_once(monkeypatch, broken)
    client = as_user("alice")
    client.application.config["PROPAGATE_EXCEPTIONS"] = False
    assert client.post(url(world, "/judgements"), json=JUDGEMENT).status_code == 500
    assert calls[0] == 1
