"""What an assessor sees of the campaign: only their own assignments, and nothing of other
assessors' judgements, of the runs or of the ranks. (Every route under every role is
tests/hardening/test_security_matrix.py.)"""

from __future__ import annotations

from tests.web.conftest import World

ASSESSOR_API = [
    "/api/v1/me",
    "/api/v1/assignments",
    "/api/v1/assignments/{a}",
    "/api/v1/assignments/{a}/documents/0",
    "/api/v1/assignments/{a}/next",
]


def fill(url: str, world: World, owner: str = "alice") -> str:
    return url.format(
        c=world.campaign_id,
        p=world.pool_id,
        a=world.assignment[owner, "T1"],
        u=world.users["carol"],
    )


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
