"""Adaptive pools: the adaptive method reveals the primary judge's next documents as judgements
arrive."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.read_only import forbid_write_sessions
from tests.web.conftest import World, get_store_of
from workbench import adaptive, presentation
from workbench.services import (
    adaptive_pools,
    adaptive_provenance,
    assignments,
    judging,
    pools,
    users,
)
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry

# T1: runA ranks D1..D6, runB D8 D7 D6 D5 D4 D3 (depth 6: the pool is D1..D8).


def _adaptive_world(app: Flask, world: World, *, budget: int = 4, share: float = 1.0):
    store = get_store_of(app)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            s,
            campaign,
            method="mm",
            budget=budget,
            depth=6,
            batch=2,
            secondary_share=share,
            seed=11,
        )
        made = {
            name: assignments.assign(s, pool, "T1", users.get_user(s, name), order="random").id
            for name in ("alice", "bob")
        }
        return store, pool.id, made


def _sequence(store, assignment_id: int) -> list[str]:
    with store.read_session() as s:
        return judging.document_sequence(s, s.get(Assignment, assignment_id))


def _judge(store, assignment_id: int, user_id: int, docno: str, grade: int) -> None:
    with store.connection() as connection:
        judging.record_judgement(
            connection, assignment_id, user_id, judging.JudgementInput(docno, grade)
        )


def test_documents_are_revealed_by_the_strategy_as_the_primary_judges(app, world):
    store, pool_id, made = _adaptive_world(app, world)
    alice, bob = world.users["alice"], world.users["bob"]
    with store.read_session() as s:
        entries = s.query(PoolEntry).filter_by(pool_id=pool_id, qid="T1").all()
        assert len(entries) == 8 and not any(e.sampled for e in entries)
    assert _sequence(store, made["alice"]) == []
    # MaxMean with no judgement: both runs at 1/2, the first run (runA) gives D1, then D2
    assert adaptive_pools.advance(store, made["alice"], alice) == ["D1", "D2"]
    assert _sequence(store, made["alice"]) == ["D1", "D2"]
    assert adaptive_pools.advance(store, made["alice"], alice) == []  # D1, D2 not judged yet
    assert adaptive_pools.advance(store, made["bob"], bob) == []  # bob is not the primary judge
    assert sorted(_sequence(store, made["bob"])) == ["D1", "D2"]  # share 1.0: all revealed
    with pytest.raises(NotFound, match="not in this assignment"):
        _judge(store, made["alice"], alice, "D8", 1)  # not revealed
    _judge(store, made["alice"], alice, "D1", 0)
    _judge(store, made["alice"], alice, "D2", 0)
    # runA 1/4 (two non-relevant), runB 1/2: runB's D8 then D7
    assert adaptive_pools.advance(store, made["alice"], alice) == ["D8", "D7"]
    assert _sequence(store, made["alice"]) == ["D1", "D2", "D8", "D7"]
    _judge(store, made["alice"], alice, "D8", 2)
    _judge(store, made["alice"], alice, "D7", 1)
    assert adaptive_pools.advance(store, made["alice"], alice) == []  # budget 4 used
    with store.session() as s:
        pool = s.get(Pool, pool_id)
        (status,) = adaptive_pools.topic_statuses(s, pool)[:1]
        assert (status.qid, status.budget, status.revealed, status.judged, status.relevant) == (
            "T1",
            4,
            4,
            4,
            2,
        )
        assert status.pool_size == 8 and status.primary == "alice" and status.finished
        # the yield curve: w = 2, x0 = 0, x1 = 2 -> q = 1, yield 1 on 4 unrevealed
        assert status.remaining_estimate == 4.0
        assert adaptive_pools.set_budget(s, pool, 6, "T1") == 1
    assert adaptive_pools.advance(store, made["alice"], alice) == ["D6", "D5"]
    with store.session() as s:
        adaptive_pools.stop_topic(s, s.get(Pool, pool_id), "T1")
    _judge(store, made["alice"], alice, "D6", 0)
    _judge(store, made["alice"], alice, "D5", 0)
    with store.session() as s:
        adaptive_pools.set_budget(s, s.get(Pool, pool_id), 8, "T1")
    assert adaptive_pools.advance(store, made["alice"], alice) == []  # stopped


def test_the_reveals_follow_the_pure_strategy(app, world):
    store, pool_id, made = _adaptive_world(app, world, budget=8)
    alice = world.users["alice"]
    labels = {"D1": 1, "D2": 1, "D3": 0, "D4": 0, "D5": 0, "D6": 0, "D7": 0, "D8": 0}
    while chosen := adaptive_pools.advance(store, made["alice"], alice):
        for docno in chosen:
            _judge(store, made["alice"], alice, docno, labels[docno])
    sequence = _sequence(store, made["alice"])
    with store.read_session() as s:
        pool = s.get(Pool, pool_id)
        models = pools.pool_runs(s, pool)
        universe = adaptive.TopicPool.build(pools.topic_ranked_lists(s, models, "T1", 6), 6)
    expected: list[str] = []
    while batch := adaptive.next_documents(
        "mm", universe, [(d, labels[d] >= 1) for d in expected], 2, seed=11, qid="T1"
    ):
        expected += batch
    assert sequence == expected and sorted(sequence) == sorted(labels)


def test_other_judges_see_a_seeded_sample(app, world):
    store, pool_id, made = _adaptive_world(app, world, budget=8, share=0.5)
    alice = world.users["alice"]
    while chosen := adaptive_pools.advance(store, made["alice"], alice):
        for docno in chosen:
            _judge(store, made["alice"], alice, docno, 0)
    with store.read_session() as s:
        seed = s.get(Pool, pool_id).seed
    expected = {
        d
        for d in _sequence(store, made["alice"])
        if adaptive_pools.in_secondary_sample(seed, pool_id, "T1", d, 0.5)
    }
    assert 0 < len(expected) < 8
    seen_by_bob = _sequence(store, made["bob"])
    assert set(seen_by_bob) == expected
    # in bob's own seeded random order, not in the order the strategy chose them
    shuffled = presentation.presentation_order(
        sorted(expected),
        mode="random",
        seed=seed,
        pool_id=pool_id,
        qid="T1",
        assessor_id=world.users["bob"],
    )
    assert seen_by_bob == shuffled


def test_settings_are_checked_and_recorded(app, world):
    store = get_store_of(app)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        with pytest.raises(ServiceError, match="unknown adaptive method"):
            adaptive_pools.build_adaptive_pool(s, campaign, method="nope", budget=3)
        with pytest.raises(ServiceError, match="positive --budget"):
            adaptive_pools.build_adaptive_pool(s, campaign, method="mm-discounted", budget=None)
        with pytest.raises(ServiceError, match="secondary share"):
            adaptive_pools.build_adaptive_pool(
                s, campaign, method="mm-discounted", budget=3, secondary_share=2.0
            )
        pool = adaptive_pools.build_adaptive_pool(s, campaign, method="mm-discounted", budget=3)
        assert pool.params["adaptive"] == {
            "strategy": "mm-discounted",
            "budget": 3,
            "batch": 5,
            "secondary_share": 0.2,
            "sample_share": 0.0,
            "stop_rule": None,
            "recall_target": 0.9,
            "confidence": 0.95,
            "auto_stop": False,
        }
        assert adaptive_provenance.describe_settings(pool) == (
            "adaptive mm-discounted, budget 3 per topic, batch 5, 20 % to other judges"
        )
        with pytest.raises(ServiceError, match="is adaptive"):
            pools.extend_pool(s, pool, ["runA"])
        ordinary = s.get(Pool, world.pool_id)
        with pytest.raises(ServiceError, match="not adaptive"):
            adaptive_pools.set_budget(s, ordinary, 5)


def test_budget_cannot_go_below_what_is_revealed(app, world):
    store, pool_id, made = _adaptive_world(app, world)
    adaptive_pools.advance(store, made["alice"], world.users["alice"])
    with store.session() as s, pytest.raises(ServiceError, match="more than 1 documents"):
        adaptive_pools.set_budget(s, s.get(Pool, pool_id), 1)


def test_ordinary_pools_are_untouched(app, world):
    store = get_store_of(app)
    alice = world.users["alice"]
    before = _sequence(store, world.assignment["alice", "T1"])
    assert adaptive_pools.advance(store, world.assignment["alice", "T1"], alice) == []
    assert _sequence(store, world.assignment["alice", "T1"]) == before and len(before) == 6


def test_the_command_line_builds_and_steers_an_adaptive_pool(world_url, world):
    from click.testing import CliRunner

    from workbench.cli import main

    def run(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", world_url[0], *args])

    built = run(
        "pool",
        "build",
        "--campaign",
        "c1",
        "--adaptive",
        "mm-discounted",
        "--budget",
        "3",
        "--depth",
        "6",
        "--seed",
        "5",
    )
    assert built.exit_code == 0, built.output
    described = "adaptive mm-discounted, budget 3 per topic, batch 5, 20 % to other judges"
    assert described in built.output
    assert "16 documents to choose from over 2 topics" in built.output
    with pytest.MonkeyPatch.context() as reading:
        forbid_write_sessions(reading)
        status = run("pool", "adaptive", "status", "--campaign", "c1")
    assert status.exit_code == 0, status.output
    assert status.output.splitlines()[2].split("\t")[:6] == ["T1", "3", "8", "0", "0", "0"]
    raised = run("pool", "adaptive", "budget", "--campaign", "c1", "--budget", "7")
    assert raised.exit_code == 0 and "budget 7 for 2 topic(s)" in raised.output
    stopped = run("pool", "adaptive", "stop", "--campaign", "c1", "--topic", "T2")
    assert stopped.exit_code == 0 and "topic T2 stopped" in stopped.output
    rows = run("pool", "adaptive", "status", "--campaign", "c1").output.splitlines()
    assert rows[3].split("\t")[1] == "7" and rows[3].split("\t")[7] == "stopped"
    refused = run("pool", "build", "--campaign", "c1", "--adaptive", "mm-discounted")
    assert refused.exit_code == 1 and "needs a positive --budget" in refused.output
    ordinary = run("pool", "build", "--campaign", "c1", "--strategy", "depth", "--depth", "2")
    assert ordinary.exit_code == 0 and "(" in ordinary.output and "to judge" in ordinary.output


def test_organiser_pages_and_api(app, world, as_user):
    admin, alice = as_user("admin"), as_user("alice")
    campaign = world.campaign_id
    page = admin.get(f"/admin/campaigns/{campaign}")
    assert 'id="build-adaptive-pool"' in page.text
    assert "<option selected>mm</option>" in page.text
    built = admin.post(
        f"/admin/campaigns/{campaign}/adaptive-pools",
        data={"method": "mm", "budget": "4", "depth": "6", "batch": "2", "seed": "3"},
    )
    assert built.status_code == 303 and "/adaptive" in built.headers["Location"]
    store = get_store_of(app)
    with store.read_session() as s:
        pool = pools.latest_pool(s, s.get(Campaign, campaign))
        pool_id = pool.id
    with store.session() as s:
        pool = s.get(Pool, pool_id)
        assignment = assignments.assign(s, pool, "T1", users.get_user(s, "alice"))
        assignment_id = assignment.id
    state = alice.get(f"/api/v1/assignments/{assignment_id}").get_json()  # the next-document path
    assert state["total"] == 2
    status = admin.get(f"/admin/campaigns/{campaign}/pools/{pool_id}/adaptive")
    assert status.status_code == 200 and 'data-qid="T1"' in status.text
    assert alice.get(f"/admin/campaigns/{campaign}/pools/{pool_id}/adaptive").status_code == 403
    api = f"/api/v1/campaigns/{campaign}/pools/{pool_id}/adaptive"
    document = admin.get(api).get_json()
    t1 = next(t for t in document["topics"] if t["qid"] == "T1")
    assert (t1["budget"], t1["revealed"], t1["primary"]) == (4, 2, "alice")
    assert document["settings"]["method"] == document["settings"]["strategy"] == "mm"
    assert alice.get(api).status_code == 403
    raised = admin.post(f"{api}/budget", json={"budget": 6, "topic": "T1"})
    assert raised.status_code == 200 and raised.get_json() == {"budget": 6, "topics": 1}
    assert admin.post(f"{api}/budget", json={"budget": "x"}).status_code == 400
    assert admin.post(f"{api}/budget", json={"budget": 1}).status_code == 400  # below revealed
    assert admin.post(f"{api}/topics/T2/stop", json={"stopped": True}).get_json()["stopped"]
    assert admin.post(f"{api}/topics/T9/stop", json={}).status_code == 404
    # every JSON body through the one bounded reader: deep nesting, NaN, bad JSON are 400s
    for body in (
        "[" * 60_000,
        '{"budget": ' + "[" * 50 + "]" * 50 + "}",
        '{"budget": NaN}',
        '{"budget": 5',
        '{"budget": 5, "topic": "\\udcff"}',
    ):
        for path in (f"{api}/budget", f"{api}/topics/T2/stop"):
            refused = admin.post(path, data=body, content_type="application/json")
            assert refused.status_code == 400, (path, body[:20])
            assert "refused" in refused.get_json()["error"]
    form = admin.post(
        f"/admin/campaigns/{campaign}/pools/{pool_id}/adaptive/budget",
        data={"budget": "7", "qid": ""},
    )
    assert form.status_code == 303
    rows = {t["qid"]: t for t in admin.get(api).get_json()["topics"]}
    assert rows["T1"]["budget"] == 7 and rows["T2"]["stopped"] and rows["T2"]["budget"] == 7
    resumed = admin.post(
        f"/admin/campaigns/{campaign}/pools/{pool_id}/adaptive/topics/T2/stop",
        data={"resume": "1"},
        follow_redirects=True,
    )
    assert resumed.status_code == 200 and "Topic T2 resumed." in resumed.text
    assert not {t["qid"]: t for t in admin.get(api).get_json()["topics"]}["T2"]["stopped"]
    ordinary = f"/admin/campaigns/{campaign}/pools/{world.pool_id}/adaptive"
    assert admin.get(ordinary).status_code == 404


def test_evaluation_warns_about_an_adaptive_pool(world_url, world, app, tmp_path):
    from click.testing import CliRunner

    from workbench.cli import main

    qrels = tmp_path / "ref.qrels"
    qrels.write_text("T1 0 D1 2\nT1 0 D2 0\nT2 0 D3 1\n")

    def evaluate():  # type: ignore[no-untyped-def]
        return CliRunner().invoke(
            main,
            [
                "--db",
                world_url[0],
                "evaluate",
                "--campaign",
                "c1",
                "-m",
                "map",
                "--qrels",
                str(qrels),
            ],
        )

    before = evaluate()
    assert before.exit_code == 0, before.output
    assert "judged adaptively" not in before.stderr
    _adaptive_world(app, world)
    after = evaluate()
    assert after.exit_code == 0, after.output
    assert "warning: pool(s) 2 judged adaptively" in after.stderr
    assert "bpref and infAP are biased too" in after.stderr and "-m infAP" not in after.stderr
