"""The r25_ui migration adds the judging settings, evidence and undo columns and the preference
log without rebuilding a table: every campaign and judgement stays, both ways (a rebuild of
`campaigns` on SQLite would delete every row that references it)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from tests.migration_states import insert_campaign, store_at

BEFORE = "r26_routing_quality"


def _counts(connection: sa.Connection) -> tuple[int, int]:
    campaigns = connection.execute(sa.text("SELECT count(*) FROM campaigns")).scalar()
    judgements = connection.execute(sa.text("SELECT count(*) FROM judgements")).scalar()
    return campaigns, judgements


def test_campaigns_and_judgements_are_kept_both_ways(database_url):
    store, config = store_at(database_url, BEFORE)
    with store.engine.begin() as connection:
        insert_campaign(connection)
        connection.execute(
            sa.text(
                "INSERT INTO users (id, username, name_key, password_hash, role, active,"
                " created_at, session_version) VALUES (1, 'ann', 'ann', 'x', 'assessor', :t,"
                " CURRENT_TIMESTAMP, 0)"
            ),
            {"t": True},
        )
        connection.execute(
            sa.text(
                "INSERT INTO judgements (campaign_id, qid, docno, user_id, grade, comment,"
                " time_spent_ms, created_at) VALUES (1, 'q', 'd', 1, 2, 'ok', 5, CURRENT_TIMESTAMP)"
            )
        )
    command.upgrade(config, "head")
    with store.engine.begin() as connection:
        assert _counts(connection) == (1, 1)
        row = connection.execute(
            sa.text("SELECT evidence, judging_mode, judging_options FROM campaigns")
        ).one()
        assert (bool(row.evidence), row.judging_mode) == (False, "document")
        assert row.judging_options in ("{}", {})
        judged = connection.execute(sa.text("SELECT grade, evidence, undoes_id FROM judgements"))
        assert [tuple(r) for r in judged] == [(2, None, None)]
    command.downgrade(config, BEFORE)
    with store.engine.begin() as connection:
        assert _counts(connection) == (1, 1)
        columns = {c["name"] for c in sa.inspect(connection).get_columns("campaigns")}
        assert "judging_mode" not in columns and "preference_judgements" not in set(
            sa.inspect(connection).get_table_names()
        )
    store.dispose()
