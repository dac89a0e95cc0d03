"""Adaptive pools with a reserved random sample and a stopping rule: the sample is judged
first and hidden from the strategy, the strategy's choices (free ones included) are recorded,
each topic shows its recall and the rule's verdict, and auto-stop ends a topic."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench import adaptive, stopping
from workbench.services import (
    adaptive_pools,
    adaptive_provenance,
    assignments,
    judging,
    pools,
    users,
)
from workbench.services.errors import ServiceError
from workbench.store.models import AdaptiveTopic, Assignment, Campaign, Pool, PoolEntry

# T1: runA ranks D1..D6, runB D8 D7 D6 D5 D4 D3 (depth 6: the pool is D1..D8).
LABELS = {"D1": 0, "D2": 1, "D3": 0, "D4": 1, "D5": 0, "D6": 1, "D7": 1, "D8": 0}


def _build(app: Flask, world: World, **settings):  # type: ignore[no-untyped-def]
    store = get_store_of(app)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            s, campaign, method="mm", budget=settings.pop("budget", 6), depth=6, batch=2,
            secondary_share=0.0, seed=settings.pop("seed", 11), **settings,
        )  # fmt: skip
        made = assignments.assign(s, pool, "T1", users.get_user(s, "alice"), order="random").id
        return store, pool.id, made


def _sequence(store, assignment_id: int) -> list[str]:
    with store.read_session() as s:
        return judging.document_sequence(s, s.get(Assignment, assignment_id))


def _judge_all(store, assignment_id: int, user_id: int, docnos, labels=LABELS) -> None:
    for docno in docnos:
        with store.connection() as connection:
            judging.record_judgement(
                connection, assignment_id, user_id, judging.JudgementInput(docno, labels[docno])
            )


def _universe(store, pool_id: int) -> adaptive.TopicPool:
    with store.read_session() as s:
        pool = s.get(Pool, pool_id)
        return adaptive.TopicPool.build(
            pools.topic_ranked_lists(s, pools.pool_runs(s, pool), "T1", 6), 6
        )


def test_the_reserved_sample_comes_first_and_the_strategy_reads_it_only_when_it_picks_it(
    app, world
):
    store, pool_id, made = _build(app, world, sample_share=0.5)
    alice = world.users["alice"]
    with store.read_session() as s:
        pool = s.get(Pool, pool_id)
        sample = adaptive_pools.reserved_sample(pool, "T1", [f"D{i}" for i in range(1, 9)], 3)
        revealed = s.query(PoolEntry).filter_by(pool_id=pool_id, qid="T1", sampled=True).all()
        assert sorted(e.docno for e in revealed) == sample and {e.build for e in revealed} == {0}
    assert sorted(_sequence(store, made)) == sample  # ceil(0.5 * 6) = 3, judged first
    assert adaptive_pools.advance(store, made, alice) == []  # the sample is not judged yet
    _judge_all(store, made, alice, sample)
    # the pure protocol, batch by batch: the strategy never sees an unpicked sample label
    universe = _universe(store, pool_id)
    history: list[str] = []
    revealed_by_strategy: list[str] = []
    while len(sample) + len(revealed_by_strategy) < 6:
        free = {d: LABELS[d] >= 1 for d in sample if d not in history}
        room = 6 - len(sample) - len(revealed_by_strategy)
        expected = adaptive.choose("mm", universe, [(d, LABELS[d] >= 1) for d in history],
                                   min(room, 2), free=free, seed=11, qid="T1")  # fmt: skip
        got = adaptive_pools.advance(store, made, alice)
        assert got == expected.reveal
        history += expected.order
        revealed_by_strategy += got
        _judge_all(store, made, alice, got)
    assert adaptive_pools.advance(store, made, alice) == []  # budget 6 used
    with store.read_session() as s:
        row = s.query(AdaptiveTopic).filter_by(pool_id=pool_id, qid="T1").one()
        assert row.choices == history
        (status,) = [t for t in adaptive_pools.topic_statuses(s, s.get(Pool, pool_id))
                     if t.qid == "T1"]  # fmt: skip
    assert (status.sample, status.revealed, status.judged) == (3, 6, 6)
    assert status.recall is not None and status.recall.low <= (status.recall.high or 1)
    assert status.verdict is None  # no rule
    # the estimate is the one of workbench.stopping on the same counts
    chosen = set(history)
    left = [d for d in sample if d not in chosen]
    progress = stopping.Progress(
        8, tuple(LABELS[d] >= 1 for d in [*sorted(sample), *revealed_by_strategy]),
        has_sample=True, unchosen=8 - len(chosen), sample_unchosen=len(left),
        sample_unchosen_relevant=sum(LABELS[d] >= 1 for d in left),
        chosen_relevant=sum(LABELS[d] >= 1 for d in chosen),
    )  # fmt: skip
    assert status.recall == stopping.recall_estimate(progress)


def test_a_rule_that_says_stop_ends_the_topic_by_itself(app, world):
    """The target rule: the reserved sample's relevant documents are the targets; once the
    strategy has chosen them all, the topic reveals no more."""
    store, pool_id, made = _build(app, world, budget=8, sample_share=0.25, stop_rule="target",
                                  auto_stop=True, seed=7)  # fmt: skip
    alice = world.users["alice"]
    labels = {**dict.fromkeys(LABELS, 0), "D1": 1, "D6": 1}
    sample = sorted(_sequence(store, made))
    assert sample == ["D1", "D3"]  # seed 7, pool 2: D1 is the only target
    _judge_all(store, made, alice, sample, labels)
    revealed = []
    while got := adaptive_pools.advance(store, made, alice):
        revealed += got
        _judge_all(store, made, alice, got, labels)
    with store.read_session() as s:
        (status,) = [t for t in adaptive_pools.topic_statuses(s, s.get(Pool, pool_id))
                     if t.qid == "T1"]  # fmt: skip
        row = s.query(AdaptiveTopic).filter_by(pool_id=pool_id, qid="T1").one()
        described = adaptive_provenance.describe_settings(s.get(Pool, pool_id))
    # mm picks runA's D1 (free: relevant), D2 (handed out), D3 (free), D4 (handed out); the
    # target D1 is chosen, so the next advance reveals nothing though 4 of the budget remain
    assert row.choices == ["D1", "D2", "D3", "D4"]
    assert revealed == ["D2", "D4"] and status.revealed == 4 < status.budget
    assert status.rule_stopped and status.verdict.stop and status.verdict.rule == "target"
    assert "1 of 1 targets reached" in status.verdict.detail
    assert "stopping rule target (recall 0.9 at 95 %, stops topics by itself)" in described


def test_sampling_settings_are_checked(app, world):
    with get_store_of(app).session() as s:
        campaign = s.get(Campaign, world.campaign_id)

        def build(**kw):  # type: ignore[no-untyped-def]
            return adaptive_pools.build_adaptive_pool(s, campaign, method="mm", budget=4, **kw)

        with pytest.raises(ServiceError, match="needs a reserved sample"):
            build(stop_rule="sample")
        with pytest.raises(ServiceError, match="sample share must be in"):
            build(sample_share=1.0)
        with pytest.raises(ServiceError, match="unknown stopping rule"):
            build(stop_rule="nope")
        with pytest.raises(ServiceError, match="needs a stopping rule"):
            build(auto_stop=True)
        with pytest.raises(ServiceError, match="recall target"):
            build(stop_rule="knee", recall_target=1.5)


def test_the_page_the_api_and_the_command_line_show_recall_and_verdict(
    app, world, as_user, world_url
):
    from click.testing import CliRunner

    from workbench.cli import main

    admin = as_user("admin")
    campaign = world.campaign_id
    built = admin.post(
        f"/admin/campaigns/{campaign}/adaptive-pools",
        data={"method": "mm", "budget": "6", "depth": "6", "batch": "2", "seed": "3",
              "sample_share": "0.5", "stop_rule": "hypergeometric", "recall_target": "0.8"},
    )  # fmt: skip
    assert built.status_code == 303
    store = get_store_of(app)
    with store.session() as s:
        pool = pools.latest_pool(s, s.get(Campaign, campaign))
        pool_id = pool.id
        assert adaptive_pools.settings_of(pool).stop_rule == "hypergeometric"
        made = assignments.assign(s, pool, "T1", users.get_user(s, "alice")).id
    _judge_all(store, made, world.users["alice"], _sequence(store, made))
    page = admin.get(f"/admin/campaigns/{campaign}/pools/{pool_id}/adaptive").text
    assert 'class="recall"' in page and "at 95 %)" in page  # an estimate with its interval
    assert "p = " in page and "for &#39;recall &lt; 0.8&#39;" in page  # the rule's verdict
    assert "workbench estimate" in page and "compare with bpref" not in page
    document = admin.get(f"/api/v1/campaigns/{campaign}/pools/{pool_id}/adaptive").get_json()
    t1 = next(t for t in document["topics"] if t["qid"] == "T1")
    assert t1["sample"] == 3 and t1["recall"]["method"] == "exact hypergeometric"
    assert t1["verdict"]["rule"] == "hypergeometric"
    bad = admin.post(f"/admin/campaigns/{campaign}/adaptive-pools",
                     data={"method": "mm", "budget": "6", "sample_share": "x"},
                     follow_redirects=True)  # fmt: skip
    assert "the sample share must be a number; got &#39;x&#39;" in bad.text
    result = CliRunner().invoke(
        main,
        [
            "--db",
            world_url[0],
            "pool",
            "adaptive",
            "status",
            "--campaign",
            "c1",
            "--pool",
            str(pool_id),
        ],
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("T1\t"))
    assert "at 95 %)" in row and "for 'recall < 0.8'" in row
    cli = CliRunner().invoke(main, ["--db", world_url[0], "pool", "build", "--campaign", "c1",
                                    "--adaptive", "mm", "--budget", "4", "--depth", "6",
                                    "--sample-share", "0.25", "--stop-rule", "sample",
                                    "--auto-stop"])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    assert "a random sample of 25% of the budget reserved, stopping rule sample" in cli.output
