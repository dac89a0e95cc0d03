"""The three features' migrations (r27_machine_judges -> r28_estimates_adaptive ->
r26_routing_quality) on a store holding data of every feature: they downgrade to the revision
before them without error, leaving pools the code of that revision reads, and upgrade again."""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import command
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.services import (
    adaptive_pools,
    assignments,
    calibration,
    gold,
    machine_judges,
    pools,
    routing,
    users,
)
from workbench.store.migrate import alembic_config
from workbench.store.models import Campaign, MachineJudgement, Pool

BEFORE = "h_jobs_report_results"
OLD_ADAPTIVE_KEYS = {"strategy", "budget", "batch", "secondary_share"}
"""What `AdaptiveSettings` held before r28 (its constructor took these and nothing else)."""


def _fill(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.add_judge(s, c, model="m", base_url="http://127.0.0.1:9/v1")
        s.add(MachineJudgement(judge_id=judge.id, campaign_id=c.id, qid="T1", docno="D1",
                               grade=1, cache_key="k", template_hash="h"))  # fmt: skip
        adaptive = adaptive_pools.build_adaptive_pool(
            s, c, method="mm", budget=4, depth=6, batch=2, secondary_share=0.2, seed=3,
            sample_share=0.5, stop_rule="sample", auto_stop=True,
        )  # fmt: skip
        assignments.assign(s, adaptive, "T1", users.get_user(s, "alice"))
        routed = pools.build_pool(s, c, strategy="depth", depth=2, seed=5)
        routing.apply_policy(
            s,
            routed,
            "primary",
            {"secondary_share": 0.5},
            assessors=[users.get_user(s, "carol"), users.get_user(s, "bob")],
        )
        gold.set_quality(s, c, gold_share=0.1)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        calibration.set_items(s, c, calibration.parse_items("T1\tD2\t1\twhy\n"))


def _adaptive_params(engine: sa.Engine) -> list[dict]:
    with engine.connect() as connection:
        rows = connection.execute(sa.text("SELECT params FROM pools ORDER BY id")).scalars()
        found = [json.loads(p) if isinstance(p, str) else p for p in rows]
    return [p["adaptive"] for p in found if p.get("adaptive")]


def test_the_features_migrations_downgrade_a_store_with_their_data_and_upgrade_again(
    app: Flask, world: World
) -> None:
    _fill(app, world)
    store = get_store_of(app)
    config = alembic_config(store)
    command.downgrade(config, BEFORE)
    tables = set(sa.inspect(store.engine).get_table_names())
    for gone in ("machine_judges", "machine_judgements", "machine_jobs", "routing_slots",
                 "gold_documents", "calibration_items", "calibration_answers"):  # fmt: skip
        assert gone not in tables
    (settings,) = _adaptive_params(store.engine)
    assert set(settings) == OLD_ADAPTIVE_KEYS, settings
    command.upgrade(config, "head")
    with store.read_session() as s:  # the upgraded pool reads as an adaptive pool again
        pool = s.get(Pool, 2)
        assert adaptive_pools.settings_of(pool) is not None
