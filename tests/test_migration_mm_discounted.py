"""The r28 migration renames the adaptive strategy 'mm-ns' to 'mm-discounted' in pools."""

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
    store, config = store_at(database_url, "h_jobs_report_results")
    adaptive = {"strategy": "mm-ns", "budget": 5, "batch": 5, "secondary_share": 0.2}
    with store.engine.begin() as connection:
        insert_campaign(connection)
        _pool(connection, 1, {"depth": 100, "adaptive": adaptive})
        _pool(connection, 2, {"depth": 100, "adaptive": {**adaptive, "strategy": "mm"}})
        _pool(connection, 3, {"depth": 10})
    command.upgrade(config, "r28_estimates_mm_discounted")
    assert _strategies(store) == ["mm-discounted", "mm", None]
    command.downgrade(config, "h_jobs_report_results")
    assert _strategies(store) == ["mm-ns", "mm", None]
    store.dispose()
