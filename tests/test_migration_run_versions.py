"""The h_runs migration keeps every stored run's lines (each run one live version, same row
ids) and its downgrade gives back exactly the lines readers saw."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from tests.migration_states import insert_campaign, store_at

BEFORE = "h_avail_document_imports"
LINES = [  # id, run_id, qid, n_lines, docnos, scores, ranks
    (7, 1, "q1", 2, b"d1", b"s1", b"r1"),
    (8, 1, "q2", 1, b"d2", b"s2", b"r2"),
    (9, 2, "q1", 3, b"d3", b"s3", b"r3"),
]
SELECT = "SELECT id, run_id, qid, n_lines, docnos, scores, ranks FROM run_topics ORDER BY id"


def rows(connection) -> list[tuple]:
    return [
        tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
        for r in connection.execute(sa.text(SELECT))
    ]


def test_runs_become_live_versions_and_come_back_on_downgrade(database_url):
    store, config = store_at(database_url, BEFORE)
    with store.engine.begin() as connection:
        insert_campaign(connection)
        for run_id, tag in [(1, "A"), (2, "B")]:
            connection.execute(
                sa.text(
                    'INSERT INTO runs (id, campaign_id, tag, file_name, checksum, "group",'
                    " contributes, line_count, created_at) VALUES (:id, 1, :tag, '', 'x', '',"
                    " :t, 3, CURRENT_TIMESTAMP)"
                ),
                {"id": run_id, "tag": tag, "t": True},
            )
        for line in LINES:
            connection.execute(
                sa.text(
                    "INSERT INTO run_topics (id, run_id, qid, n_lines, docnos, scores, ranks)"
                    " VALUES (:id, :run, :qid, :n, :d, :s, :r)"
                ),
                dict(zip(("id", "run", "qid", "n", "d", "s", "r"), line, strict=True)),
            )
    command.upgrade(config, "head")
    with store.engine.begin() as connection:
        assert rows(connection) == LINES  # the view shows every line, same ids
        versions = connection.execute(
            sa.text("SELECT id, run_id, state FROM run_versions ORDER BY id")
        ).all()
        assert [tuple(v) for v in versions] == [(1, 1, "live"), (2, 2, "live")]
        # a new version (ids continue after the copied ones) that readers do not see
        connection.execute(
            sa.text(
                "INSERT INTO run_versions (campaign_id, run_id, state, heartbeat_at)"
                " VALUES (1, 1, 'open', CURRENT_TIMESTAMP)"
            )
        )
        new = connection.execute(sa.text("SELECT MAX(id) FROM run_versions")).scalar()
        connection.execute(
            sa.text(
                "INSERT INTO run_topic_rows (version_id, qid, n_lines, docnos, scores, ranks)"
                " VALUES (:v, 'q1', 1, 'x', 'x', 'x')"
            ),
            {"v": new},
        )
        assert new == 3
        assert rows(connection) == LINES
    command.downgrade(config, BEFORE)
    with store.engine.connect() as connection:
        assert rows(connection) == LINES
        assert "run_versions" not in sa.inspect(connection).get_table_names()
    command.upgrade(config, "head")
    store.dispose()
