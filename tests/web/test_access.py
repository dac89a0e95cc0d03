"""Every view and API route under each role: anonymous, assessor, another assessor, admin."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import World

ADMIN_PAGES = [
    "/admin/",
    "/admin/campaigns/{c}",
    "/admin/campaigns/{c}/assignments",
    "/admin/campaigns/{c}/progress",
    "/admin/campaigns/{c}/download/pool",
    "/admin/users",
    "/querylogs/{c}",
]
ADMIN_POSTS = [
    "/admin/campaigns",
    "/admin/campaigns/{c}/upload/topics",
    "/admin/campaigns/{c}/pools",
    "/admin/campaigns/{c}/pools/{p}/extend",
    "/admin/campaigns/{c}/assignments/auto",
    "/admin/campaigns/{c}/assignments",
    "/admin/campaigns/{c}/assignments/{a}/reassign",
    "/admin/campaigns/{c}/assignments/{a}/remove",
    "/admin/users",
    "/admin/users/{u}",
    "/querylogs/{c}/import",
    "/admin/campaigns/{c}/adaptive-pools",
    "/admin/campaigns/{c}/pools/{p}/adaptive/budget",
    "/admin/campaigns/{c}/pools/{p}/adaptive/topics/T1/stop",
]
ADMIN_API = [
    "/api/v1/campaigns",
    "/api/v1/campaigns/{c}/progress",
    "/api/v1/campaigns/{c}/export/pool",
    "/api/v1/campaigns/{c}/querylogs",
]
ASSESSOR_API = [
    "/api/v1/me",
    "/api/v1/assignments",
    "/api/v1/assignments/{a}",
    "/api/v1/assignments/{a}/documents/0",
    "/api/v1/assignments/{a}/next",
]
COVERED_ENDPOINTS = {
    "index",
    "static",
    "auth.login",
    "auth.logout",
    "auth.change_password",
    "assess.topics",
    "assess.judge",
    "admin.campaigns",
    "admin.create_campaign",
    "admin.campaign",
    "admin.upload",
    "uploads.task",  # tests/hardening/test_security_matrix.py
    "admin.build_pool",
    "admin.extend_pool",
    "admin.assignments",
    "admin.auto_assign",
    "admin.assign",
    "admin.reassign",
    "admin.unassign",
    "admin.campaign_progress",
    "admin.download",
    "admin.users",
    "admin.add_user",
    "admin.update_user",
    "api.me",
    "api.my_assignments",
    "api.assignment_state",
    "api.document",
    "api.next_document",
    "api.submit",
    "api.campaigns",
    "api.campaign_progress",
    "api.export",
    "querylogs.index",
    "querylogs.import_log",
    "querylogs.report",
    "querylogs.agreement",
    "querylogs_api.api_logs",
    "querylogs_api.api_import",
    "querylogs_api.api_report",
    "querylogs_api.api_agreement",
    "querylogs_api.api_evaluation",
    "querylogs_api.api_prefs",
    # adaptive pools (every role in tests/hardening/test_security_matrix.py)
    "adaptive.build",
    "adaptive.status",
    "adaptive.budget",
    "adaptive.stop",
    "api.adaptive_status",
    "api.adaptive_budget",
    "api.adaptive_stop",
}


def fill(url: str, world: World, owner: str = "alice") -> str:
    return url.format(
        c=world.campaign_id,
        p=world.pool_id,
        a=world.assignment[owner, "T1"],
        u=world.users["carol"],
    )


def test_every_route_is_covered_here(app: Flask) -> None:
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    mine = {e for e in endpoints if not e.startswith("reports.")}
    assert mine == COVERED_ENDPOINTS


@pytest.mark.parametrize("url", [*ADMIN_PAGES, "/assess/", "/assess/{a}", "/account/password"])
def test_anonymous_pages_redirect_to_login(as_user, world: World, url: str) -> None:
    response = as_user(None).get(fill(url, world))
    assert response.status_code == 302
    assert response.location.startswith("/login?next=")


@pytest.mark.parametrize("url", [*ADMIN_POSTS, "/logout"])
def test_anonymous_posts_are_refused(as_user, world: World, url: str) -> None:
    response = as_user(None).post(fill(url, world))
    assert response.status_code == 302
    assert response.location.startswith("/login")


@pytest.mark.parametrize("url", ADMIN_API + ASSESSOR_API)
def test_anonymous_api_is_401(as_user, world: World, url: str) -> None:
    response = as_user(None).get(fill(url, world))
    assert response.status_code == 401
    assert response.json == {"error": "authentication required"}


def test_anonymous_cannot_submit(as_user, world: World) -> None:
    url = fill("/api/v1/assignments/{a}/judgements", world)
    response = as_user(None).post(url, json={"docno": "D1", "grade": 1})
    assert response.status_code == 401


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_assessor_gets_403_on_admin_pages(as_user, world: World, url: str) -> None:
    assert as_user("alice").get(fill(url, world)).status_code == 403


@pytest.mark.parametrize("url", ADMIN_POSTS)
def test_assessor_gets_403_on_admin_posts(as_user, world: World, url: str) -> None:
    assert as_user("alice").post(fill(url, world), data={"name": "x"}).status_code == 403


@pytest.mark.parametrize("url", ADMIN_API)
def test_assessor_gets_403_on_admin_api(as_user, world: World, url: str) -> None:
    response = as_user("alice").get(fill(url, world))
    assert response.status_code == 403
    assert "error" in response.json


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_admin_sees_admin_pages(as_user, world: World, url: str) -> None:
    assert as_user("admin").get(fill(url, world)).status_code == 200


@pytest.mark.parametrize("url", ADMIN_API)
def test_admin_api(as_user, world: World, url: str) -> None:
    assert as_user("admin").get(fill(url, world)).status_code == 200


@pytest.mark.parametrize("url", ["/assess/{a}", *ASSESSOR_API[2:]])
def test_owner_sees_own_assignment(as_user, world: World, url: str) -> None:
    assert as_user("alice").get(fill(url, world)).status_code == 200


@pytest.mark.parametrize("who", ["bob", "carol", "admin"])
@pytest.mark.parametrize("url", ["/assess/{a}", *ASSESSOR_API[2:]])
def test_others_get_404_for_an_assignment(as_user, world: World, url: str, who: str) -> None:
    assert as_user(who).get(fill(url, world, owner="alice")).status_code == 404


@pytest.mark.parametrize("who", ["bob", "carol", "admin"])
def test_others_cannot_judge_for_alice(as_user, world: World, who: str) -> None:
    url = fill("/api/v1/assignments/{a}/judgements", world)
    assert as_user(who).post(url, json={"docno": "D1", "grade": 1}).status_code == 404


def test_my_topics_lists_only_own_assignments(as_user, world: World) -> None:
    page = as_user("carol").get("/assess/").text
    assert "No topics are assigned to you yet." in page
    alice = as_user("alice").get("/api/v1/assignments").json["assignments"]
    assert sorted(a["id"] for a in alice) == sorted(
        world.assignment["alice", qid] for qid in ("T1", "T2")
    )


def test_assessor_never_sees_others_judgements_runs_or_ranks(as_user, world: World) -> None:
    bob = as_user("bob")
    bob_url = fill("/api/v1/assignments/{a}/judgements", world, owner="bob")
    for docno in ("D1", "D2"):
        assert bob.post(bob_url, json={"docno": docno, "grade": 2}).status_code == 201
    alice = as_user("alice")
    responses = [alice.get(fill(url, world)) for url in ["/assess/", "/assess/{a}", *ASSESSOR_API]]
    responses += [
        alice.get(fill("/api/v1/assignments/{a}/documents/", world) + str(i)) for i in range(6)
    ]
    state = alice.get(fill("/api/v1/assignments/{a}", world)).json
    assert state["judgements"] == [None] * 6
    for response in responses:
        assert response.status_code == 200
        for secret in ("runA", "runB", "best_rank", "n_runs", "priority", "bob"):
            assert secret not in response.text


def test_logout_needs_post(as_user, world: World) -> None:
    client = as_user("alice")
    assert client.get("/logout").status_code == 405
    assert client.post("/logout").status_code == 302
    assert client.get("/assess/").status_code == 302
