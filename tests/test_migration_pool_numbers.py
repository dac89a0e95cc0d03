"""The h-admin migration numbers existing pools 1, 2, ... per campaign in creation order."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from workbench.store import open_store
from workbench.store.migrate import alembic_config


def test_existing_pools_are_numbered_per_campaign(database_url):
    store = open_store(database_url, upgrade=True)
    config = alembic_config(store)
    command.downgrade(config, "h_avail_staged_documents")
    with store.engine.begin() as connection:
        for cid, name in [(1, "a"), (2, "b")]:
            connection.execute(
                sa.text(
                    "INSERT INTO campaigns (id, name, description, relevance_level, created_at)"
                    " VALUES (:id, :name, '', 1, CURRENT_TIMESTAMP)"
                ),
                {"id": cid, "name": name},
            )
        for pool_id, cid in [(1, 1), (2, 2), (3, 1), (4, 2), (5, 1)]:
            connection.execute(
                sa.text(
                    "INSERT INTO pools (id, campaign_id, name, strategy, params, seed, created_at,"
                    " revision) VALUES (:id, :cid, '', 'depth', '{}', 0, CURRENT_TIMESTAMP, 0)"
                ),
                {"id": pool_id, "cid": cid},
            )
        connection.execute(  # a row that references a pool: kept (no table copy drops it)
            sa.text(
                "INSERT INTO pool_entries (pool_id, qid, build, docno, best_rank, n_runs,"
                " priority, stratum, sampled, inclusion_prob)"
                " VALUES (3, 'q', 0, 'd', 1, 1, 1.5, NULL, :yes, 1.0)"
            ),
            {"yes": True},
        )
    command.upgrade(config, "head")
    with store.engine.connect() as connection:
        rows = connection.execute(sa.text("SELECT id, number FROM pools ORDER BY id")).all()
        withdrawn = connection.execute(sa.text("SELECT count_withdrawn FROM campaigns")).all()
        entries = connection.execute(sa.text("SELECT pool_id, docno FROM pool_entries")).all()
    store.dispose()
    assert [tuple(r) for r in rows] == [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)]
    assert [tuple(r) for r in entries] == [(3, "d")]
    assert all(bool(r[0]) for r in withdrawn)  # judgements keep counting as before
