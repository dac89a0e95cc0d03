"""The h_jobs migration moves each report job's result to `report_results` (jobs without a
result get no row) and its downgrade puts the results back in their jobs' rows."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from tests.migration_states import insert_campaign, store_at

BEFORE = "h_runs_run_versions"
JOBS = [(1, "agreement", b"\x00result of job 1" * 1000), (2, "evaluation", None)]


def _bytes(value: object) -> object:
    return bytes(value) if isinstance(value, memoryview) else value


def test_results_move_to_their_own_table_and_back(database_url):
    store, config = store_at(database_url, BEFORE)
    with store.engine.begin() as connection:
        insert_campaign(connection)
        for job_id, kind, result in JOBS:
            connection.execute(
                sa.text(
                    "INSERT INTO report_jobs (id, campaign_id, kind, key, params, status,"
                    " generation, progress, wanted, fingerprint, result, result_generation,"
                    " error, queued_at) VALUES (:id, 1, :kind, :kind, '{}', 'done', 1, '', '',"
                    " 'f', :result, 1, '', CURRENT_TIMESTAMP)"
                ),
                {"id": job_id, "kind": kind, "result": result},
            )
    command.upgrade(config, "head")
    with store.engine.begin() as connection:
        moved = connection.execute(sa.text("SELECT job_id, result FROM report_results"))
        assert [(j, _bytes(r)) for j, r in moved] == [(1, JOBS[0][2])]
        columns = {c["name"] for c in sa.inspect(connection).get_columns("report_jobs")}
        assert "result" not in columns and "result_generation" in columns
    command.downgrade(config, BEFORE)
    with store.engine.begin() as connection:
        back = connection.execute(sa.text("SELECT id, result FROM report_jobs ORDER BY id"))
        assert [(j, _bytes(r)) for j, r in back] == [(j, r) for j, _, r in JOBS]
        assert not sa.inspect(connection).has_table("report_results")
