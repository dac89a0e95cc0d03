"""Assignment policies end to end: the service, the Assignments form, the API and the CLI route
a pool; queues, progress and qrels follow the routing slots; adaptive redundancy gives a
document a judge more; an assessor's remainder moves after a confirmation.

The world: campaign c1, pool 1 (depth 3 of runA and runB: T1 and T2 pool D1-D3 and D6-D8),
assessors alice, bob, carol (alice and bob hold whole-topic assignments to start with)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench import routing
from workbench.cli import main
from workbench.services import assignments, judging, progress, qrels, slots
from workbench.services import routing as routing_service
from workbench.services import users as user_service
from workbench.store.models import Assignment, Campaign, Pool, RoutingSlot, User


def _clear(app: Flask) -> None:
    with get_store_of(app).session() as s:
        for a in s.scalars(select(Assignment)):
            s.delete(a)


def _queues(app: Flask) -> dict[tuple[str, str], list[str]]:
    """(username, qid) -> the assessor's queue, for every active assignment."""
    with get_store_of(app).read_session() as s:
        names = {u.id: u.username for u in s.scalars(select(User))}
        return {
            (names[a.user_id], a.qid): judging.document_sequence(s, a)
            for a in s.scalars(select(Assignment).where(Assignment.active.is_(True)))
        }


def _judges(queues) -> dict[tuple[str, str], list[str]]:  # type: ignore[no-untyped-def]
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (name, qid), docs in queues.items():
        for d in docs:
            found[qid, d].append(name)
    return found


def _apply(app: Flask, policy: str, **values):  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as s:
        pool = s.scalar(select(Pool))
        users = user_service.list_users(s, role="assessor")
        return routing_service.apply_policy(s, pool, policy, values, assessors=users, seed=5)


def test_overlap_routes_every_document_to_k_judges_and_queues_and_progress_follow(
    app: Flask, world: World
) -> None:
    _clear(app)
    result = _apply(app, "overlap", judges_per_document=2, chunk=2)
    assert result.documents == 24 and result.short == 0
    assert result.load == {"alice": 8, "bob": 8, "carol": 8}
    queues = _queues(app)
    judges = _judges(queues)
    assert len(judges) == 12 and all(len(set(j)) == len(j) == 2 for j in judges.values())
    with get_store_of(app).read_session() as s:
        pool = s.scalar(select(Pool))
        assert pool.params["routing"] == {
            "policy": "overlap",
            "judges_per_document": 2,
            "chunk": 2,
            "seed": 5,
            "assessors": ["alice", "bob", "carol"],
        }
        report = progress.campaign_progress(s, world.campaign_id)
        assert {a["username"]: a["progress"].total for a in report["assessors"]} == result.load
        campaign = s.get(Campaign, world.campaign_id)
        # one assessor's qrels expect only the documents of their slots
        done = qrels.qrels_completeness(s, campaign, assessor="alice")
        assert done.expected == 8
    again = _apply(app, "overlap", judges_per_document=2, chunk=2)
    assert again.documents == 0 and again.assignments == 0  # nothing missing
    more = _apply(app, "overlap", judges_per_document=3, chunk=2)
    assert more.documents == 12 and "parameters changed" in more.notes[0]
    assert all(len(j) == 3 for j in _judges(_queues(app)).values())


def test_a_pool_keeps_its_policy_while_it_has_active_assignments(app: Flask, world: World) -> None:
    from workbench.services.errors import ServiceError

    with pytest.raises(ServiceError, match="withdraw its 4 active assignment"):
        _apply(app, "primary")  # the world's whole-topic assignments
    _clear(app)
    primary = _apply(app, "primary", secondary_share=0.5)
    judges = _judges(_queues(app))
    assert Counter(len(j) for j in judges.values()) == {1: 6, 2: 6}  # 3 of 6 per topic doubled
    # T1: primary alice, secondary bob (3 of 6); T2: primary carol, secondary bob
    assert primary.load == {"alice": 6, "bob": 6, "carol": 6}
    with pytest.raises(ServiceError, match="is assigned by primary"):
        _apply(app, "overlap")


def test_reassigning_a_routed_assignment_moves_its_slots(app: Flask, world: World) -> None:
    _clear(app)
    _apply(app, "overlap", judges_per_document=1, chunk=3)
    before = _queues(app)
    with get_store_of(app).session() as s:
        name, qid = next(k for k in before if k[0] != "carol")
        old = s.scalar(
            select(Assignment)
            .join(User, User.id == Assignment.user_id)
            .where(User.username == name, Assignment.qid == qid)
        )
        carol = user_service.get_user(s, "carol")
        carol_has = set(before.get(("carol", qid), []))  # other documents of the topic
        assignments.reassign(s, old, carol)
    after = _queues(app)
    assert set(after["carol", qid]) == set(before[name, qid]) | carol_has
    assert (name, qid) not in after


def test_the_assignments_form_api_and_cli_apply_a_policy(
    app: Flask, as_user, world: World, world_url
) -> None:
    _clear(app)
    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{world.campaign_id}/assignments").text
    for name in ("topics", "primary", "overlap", "adaptive", "judges_per_document", "max_judges"):
        assert f'"{name}"' in page
    done = admin.post(
        f"/admin/campaigns/{world.campaign_id}/assignments/auto",
        data={"policy": "overlap", "judges_per_document": "3", "chunk": "6"},
        follow_redirects=True,
    )
    assert "6 assignments created." in done.text
    assert (
        "routed by overlap: 3 judges per document"
        in admin.get(f"/admin/campaigns/{world.campaign_id}/assignments").text
    )
    bad = admin.post(
        f"/admin/campaigns/{world.campaign_id}/assignments/auto",
        data={"policy": "overlap", "judges_per_document": "many"},
        follow_redirects=True,
    )
    assert "judges_per_document must be an integer" in bad.text
    listed = admin.get("/api/v1/routing/policies").json["policies"]
    assert [p["name"] for p in listed] == ["topics", "primary", "overlap", "adaptive"]
    _clear(app)
    made = admin.post(
        "/api/v1/campaigns/c1/assignments",
        json={"policy": "primary", "parameters": {"secondary_share": 1.0}, "seed": 2},
    )
    assert made.status_code == 201, made.json
    assert made.json["policy"] == "primary" and made.json["documents"] == 24
    refused = admin.post("/api/v1/campaigns/c1/assignments", json={"policy": "overlap"})
    assert refused.status_code == 400 and "is assigned by primary" in refused.json["error"]
    assert as_user("alice").post("/api/v1/campaigns/c1/assignments", json={}).status_code == 403
    _clear(app)
    result = CliRunner().invoke(
        main,
        [
            "--db",
            world_url[0],
            "assign",
            "--campaign",
            "c1",
            "--policy",
            "adaptive",
            "--chunk",
            "3",
            "--max-judges",
            "4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "adaptive: 2 judges per document" in result.output and "at most 4" in result.output
    assert (
        sum(
            int(line.split("\t")[1].split()[0])
            for line in result.output.splitlines()
            if "\t" in line
        )
        == 24
    )


def _judge(app: Flask, name: str, qid: str, docno: str, grade: int) -> None:
    with get_store_of(app).read_session() as s:
        a = s.scalar(
            select(Assignment)
            .join(User, User.id == Assignment.user_id)
            .where(User.username == name, Assignment.qid == qid, Assignment.active.is_(True))
        )
        aid, uid = a.id, a.user_id
    judging.submit_judgement(get_store_of(app), aid, uid, judging.JudgementInput(docno, grade))


def test_adaptive_redundancy_gives_a_disagreed_document_one_judge_more(
    app: Flask, as_user, world: World
) -> None:
    _clear(app)
    _apply(app, "adaptive", chunk=6, max_judges=3)
    judges = _judges(_queues(app))
    (first, second) = judges["T1", "D1"]
    for docno in ("D1", "D2", "D3", "D6", "D7", "D8"):
        one, two = judges["T1", docno]
        _judge(app, one, "T1", docno, 0)
        _judge(app, two, "T1", docno, 0 if docno != "D1" else 2)  # only D1 is disagreed on
    third = next(n for n in ("alice", "bob", "carol") if n not in (first, second))
    assert (first, second, third) == ("alice", "bob", "carol")  # chunks of 6: T1 whole to two
    with get_store_of(app).read_session() as s:
        pool = s.scalar(select(Pool))
        assert [(n.qid, n.docno) for n in routing_service.needs(s, pool)] == [("T1", "D1")]
    client = as_user(third)
    carol_t2 = _assignment_id(app, "carol", "T2")
    assert client.get(f"/assess/{carol_t2}").status_code == 200  # another topic: no claim
    assert ("carol", "T1") not in _queues(app)
    # carol has no T1 assignment: asking for work makes one with D1 only
    assert client.post("/api/v1/work", json={}).json["added"] == [{"qid": "T1", "docno": "D1"}]
    assert 'data-adaptive="1"' in client.get(f"/assess/{_assignment_id(app, 'carol', 'T1')}").text
    assert _queues(app)[third, "T1"] == ["D1"]
    state = client.get(
        f"/api/v1/assignments/{_assignment_id(app, third, 'T1')}"
    ).json  # the third judge sees no other judge's label
    assert all(j is None for j in state["judgements"])
    assert client.post("/api/v1/work", json={}).json["added"] == []  # nothing more wanted
    _judge(app, third, "T1", "D1", 1)  # three different grades: the maximum is reached
    with get_store_of(app).read_session() as s:
        assert routing_service.needs(s, s.scalar(select(Pool))) == []
        places = s.scalars(
            select(RoutingSlot.slot).where(RoutingSlot.qid == "T1", RoutingSlot.docno == "D1")
        ).all()
        assert sorted(places) == [0, 1, 2]


def _assignment_id(app: Flask, name: str, qid: str) -> int:
    with get_store_of(app).read_session() as s:
        return s.scalar(
            select(Assignment.id)
            .join(User, User.id == Assignment.user_id)
            .where(User.username == name, Assignment.qid == qid, Assignment.active.is_(True))
        )


def test_the_remainder_of_an_inactive_assessor_moves_after_confirmation(
    app: Flask, as_user, world: World, world_url
) -> None:
    # alice and bob judge T1 and T2 whole; alice judged D1 and D2 of T1, then stopped
    _judge(app, "alice", "T1", "D1", 1)
    _judge(app, "alice", "T1", "D2", 0)
    admin = as_user("admin")
    cid = world.campaign_id
    shown = admin.get(f"/admin/campaigns/{cid}/remainder?assessor=alice").text
    assert "10 unjudged document(s) of alice: 10 to carol" in shown
    assert admin.get(f"/admin/campaigns/{cid}/remainder?assessor=nobody").status_code == 404
    unconfirmed = admin.post(
        f"/admin/campaigns/{cid}/remainder", data={"assessor": "alice"}, follow_redirects=True
    )
    assert "Confirm the reassignment" in unconfirmed.text
    assert len(_queues(app)["alice", "T1"]) == 6  # nothing moved
    done = admin.post(
        f"/admin/campaigns/{cid}/remainder",
        data={"assessor": "alice", "confirm": "1"},
        follow_redirects=True,
    )
    assert "Reassigned: 10 unjudged document(s) of alice: 10 to carol" in done.text
    queues = _queues(app)
    assert sorted(queues["alice", "T1"]) == ["D1", "D2"]  # what she judged stays hers
    assert ("alice", "T2") not in queues  # nothing judged there: withdrawn
    assert sorted(queues["carol", "T1"]) == ["D3", "D6", "D7", "D8"]
    assert len(queues["carol", "T2"]) == 6
    judges = _judges(queues)
    assert all(len(j) == 2 and len(set(j)) == 2 for j in judges.values())  # still two each
    with get_store_of(app).read_session() as s:
        assert progress.campaign_progress(s, cid)["overall"].total == 24
    # nothing left: the API says so, and a second move changes nothing
    plan = admin.get("/api/v1/campaigns/c1/remainder?assessor=alice").json
    assert (
        plan["moves"] == [] and plan["description"] == "alice has no unjudged documents to reassign"
    )
    refused = admin.post("/api/v1/campaigns/c1/remainder", json={"assessor": "bob"})
    assert refused.status_code == 400 and '"confirm": true' in refused.json["error"]
    moved = admin.post(
        "/api/v1/campaigns/c1/remainder", json={"assessor": "bob", "to": ["alice"], "confirm": True}
    )
    assert moved.status_code == 200 and moved.json["documents"] == 10
    assert moved.json["unplaced"] == 2  # alice holds T1's D1, D2: nobody else may take them
    cli = CliRunner().invoke(
        main,
        ["--db", world_url[0], "remainder", "--campaign", "c1", "--assessor", "carol"],
        input="n\n",
    )
    assert cli.exit_code == 1 and "nothing changed" in cli.output
    assert "Reassign 10 document(s)?" in cli.output
    with get_store_of(app).read_session() as s:
        assert slots.slot_documents(s, list(s.scalars(select(Assignment))))  # places exist


def test_the_judging_page_takes_a_wanted_place_on_its_own_topic(
    app: Flask, as_user, world: World
) -> None:
    _clear(app)
    _apply(app, "adaptive", chunk=2, max_judges=3)
    queues = _queues(app)
    judges = _judges(queues)
    holders = {n for n, q in queues if q == "T1"}
    assert holders == {"alice", "bob", "carol"}  # every assessor holds some of T1
    docno = next(d for (q, d), j in sorted(judges.items()) if q == "T1")
    one, two = judges["T1", docno]
    _judge(app, one, "T1", docno, 0)
    _judge(app, two, "T1", docno, 1)
    third = next(n for n in ("alice", "bob", "carol") if n not in (one, two))
    assert docno not in queues[third, "T1"]
    client = as_user(third)
    state = client.get(f"/api/v1/assignments/{_assignment_id(app, third, 'T1')}").json
    assert state["total"] == len(queues[third, "T1"]) + 1  # the page's state took the place
    assert docno in _queues(app)[third, "T1"]
    # bob and alice ask too: the place is taken, nobody gets it twice
    for name in (one, two):
        assert as_user(name).post("/api/v1/work", json={}).json["added"] == []


EXPECTED_JUDGES = {  # judges per document of the world's 12 pooled documents
    "topics": Counter({2: 12}),
    "primary": Counter({1: 6, 2: 6}),  # secondary on half of each topic
    "overlap": Counter({3: 12}),
    "adaptive": Counter({2: 12}),
}
VALUES = {
    "topics": {"judges_per_topic": 2},
    "primary": {"secondary_share": 0.5},
    "overlap": {"judges_per_document": 3, "chunk": 2},
    "adaptive": {"chunk": 2, "max_judges": 3},
}


@pytest.mark.parametrize("interface", ["form", "cli", "api"])
@pytest.mark.parametrize("policy", list(EXPECTED_JUDGES))
def test_every_policy_through_every_interface_with_gold_in_the_queues(
    app: Flask, as_user, world: World, world_url, policy: str, interface: str
) -> None:
    from workbench.services import gold

    _clear(app)
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.set_quality(s, c, gold_share=0.2)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 1), gold.GoldItem("T1", "D5", 0)])
    values = VALUES[policy]
    if interface == "form":
        form = {"policy": policy, **{k: str(v) for k, v in values.items()}}
        page = as_user("admin").post(
            f"/admin/campaigns/{world.campaign_id}/assignments/auto",
            data=form,
            follow_redirects=True,
        )
        assert "assignments created." in page.text and "flash error" not in page.text
    elif interface == "cli":
        options = [f"--{k.replace('_', '-')}={v}" for k, v in values.items()]
        done = CliRunner().invoke(
            main, ["--db", world_url[0], "assign", "--campaign", "c1", "--policy", policy, *options]
        )
        assert done.exit_code == 0, done.output
    else:
        made = as_user("admin").post(
            "/api/v1/campaigns/c1/assignments", json={"policy": policy, "parameters": values}
        )
        assert made.status_code == 201, made.json
    queues = _queues(app)
    own = {
        key: [d for d in docs if d not in ("D4", "D5") or key[1] != "T1"]
        for key, docs in queues.items()
    }
    assert Counter(len(j) for j in _judges(own).values()) == EXPECTED_JUDGES[policy]
    for (name, qid), docs in queues.items():
        mixed = [d for d in docs if qid == "T1" and d in ("D4", "D5")]
        wanted = min(2, routing.gold_count(len(docs) - len(mixed), 0.2)) if qid == "T1" else 0
        assert len(mixed) == wanted, (name, qid, docs)
    with get_store_of(app).read_session() as s:
        assert s.scalar(select(Pool)).params["routing"]["policy"] == policy
