"""The r28 migration: adaptive topics record their strategy's choices (the revealed documents,
in reveal order, for existing pools); the strategy 'mm-ns' is renamed 'mm-discounted'."""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import command

from tests.migration_states import insert_campaign, store_at


def _pool(connection: sa.Connection, pool_id: int, params: dict) -> None:
    connection.execute(
        sa.text(
            "INSERT INTO pools (id, campaign_id, name, strategy, params, seed, created_at,"
            " revision, number) VALUES (:id, 1, '', 'depth', :params, 0, CURRENT_TIMESTAMP, 0,"
            " :id)"
        ),
        {"id": pool_id, "params": json.dumps(params)},
    )


def _strategies(store) -> list:
    with store.engine.connect() as connection:
        rows = connection.execute(sa.text("SELECT params FROM pools ORDER BY id")).all()
    return [
        (json.loads(p) if isinstance(p, str) else p).get("adaptive", {}).get("strategy")
        for (p,) in rows
    ]


def test_pools_recorded_with_mm_ns_record_mm_discounted(database_url):
    store, config = store_at(database_url, "r27_machine_judges")
    adaptive = {"strategy": "mm-ns", "budget": 5, "batch": 5, "secondary_share": 0.2}
    with store.engine.begin() as connection:
        insert_campaign(connection)
        _pool(connection, 1, {"depth": 100, "adaptive": adaptive})
        _pool(connection, 2, {"depth": 100, "adaptive": {**adaptive, "strategy": "mm"}})
        _pool(connection, 3, {"depth": 10})
    command.upgrade(config, "r28_estimates_adaptive")
    assert _strategies(store) == ["mm-discounted", "mm", None]
    command.downgrade(config, "r27_machine_judges")
    assert _strategies(store) == ["mm-ns", "mm", None]
    store.dispose()


def test_existing_adaptive_topics_get_their_revealed_documents_as_choices(database_url):
    store, config = store_at(database_url, "r27_machine_judges")
    with store.engine.begin() as connection:
        insert_campaign(connection)
        _pool(
            connection,
            1,
            {
                "depth": 10,
                "adaptive": {"strategy": "mm", "budget": 3, "batch": 1, "secondary_share": 0.0},
            },
        )
        connection.execute(
            sa.text(
                "INSERT INTO adaptive_topics (id, pool_id, qid, budget, stopped, updated_at)"
                " VALUES (1, 1, 'q', 3, :no, CURRENT_TIMESTAMP)"
            ),
            {"no": False},
        )
        for docno, build, revealed in [("a", 2, True), ("b", 1, True), ("c", 1, False)]:
            connection.execute(sa.text(
                "INSERT INTO pool_entries (pool_id, qid, build, docno, best_rank, n_runs,"
                " priority, stratum, sampled, inclusion_prob)"
                " VALUES (1, 'q', :build, :docno, 1, 1, 1.0, NULL, :revealed, 1.0)"),
                {"build": build, "docno": docno, "revealed": revealed})  # fmt: skip
    command.upgrade(config, "r28_estimates_adaptive")
    with store.engine.connect() as connection:
        (choices,) = connection.execute(sa.text("SELECT choices FROM adaptive_topics")).one()
    store.dispose()
    assert (json.loads(choices) if isinstance(choices, str) else choices) == ["b", "a"]
