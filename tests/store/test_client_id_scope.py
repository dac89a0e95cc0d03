"""A judgement's client_id is an idempotency key per campaign and assessor (issue 10 §5)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.web.conftest import populate, write_campaign_files
from workbench.services import (
    assignments,
    campaigns,
    document_imports,
    judging,
    pools,
    run_imports,
    topic_imports,
)
from workbench.services import users as user_service
from workbench.store import Store, open_store
from workbench.store.migrate import upgrade
from workbench.store.models import Judgement


def second_campaign(store: Store, folder: Path) -> int:
    """Campaign 'c2' with the same topics, documents and runs; alice judges its T1."""
    files = write_campaign_files(folder)
    with store.session() as s:
        campaign = campaigns.create_campaign(s, "c2", scale="0:No:0,1:Yes:1")
        topic_imports.import_topics(s, campaign, files["topics"])
        document_imports.import_documents(s, campaign, [files["documents"]])
        run_imports.import_runs(s, campaign, [files["runA"], files["runB"]])
        pool = pools.build_pool(s, campaign, strategy="depth", depth=3, seed=7)
        alice = user_service.get_user(s, "alice")
        return assignments.assign(s, pool, "T1", alice, order="docno").id


def test_the_same_client_id_in_two_campaigns_stores_both(store: Store, tmp_path: Path) -> None:
    world = populate(store, tmp_path / "c1")
    other = second_campaign(store, tmp_path / "c2")
    alice = world.users["alice"]
    mine = world.assignment["alice", "T1"]
    with store.connection(autocommit=True) as connection:
        first, created_first = judging.record_judgement(
            connection, mine, alice, judging.JudgementInput("D1", 2, client_id="k")
        )
        second, created_second = judging.record_judgement(
            connection, other, alice, judging.JudgementInput("D1", 0, client_id="k")
        )
        again, created_again = judging.record_judgement(  # a retry in c2 finds c2's row
            connection, other, alice, judging.JudgementInput("D1", 0, client_id="k")
        )
    assert created_first and created_second and not created_again
    assert second.id != first.id and again.id == second.id
    with store.session() as s:
        rows = s.execute(
            sa.select(Judgement.campaign_id, Judgement.grade, Judgement.client_id).order_by(
                Judgement.id
            )
        ).all()
    assert rows == [(world.campaign_id, 2, "k"), (rows[1].campaign_id, 0, "k")]
    assert rows[1].campaign_id != world.campaign_id


def test_the_schema_refuses_a_duplicate_within_one_campaign(store: Store, tmp_path: Path) -> None:
    world = populate(store, tmp_path / "c1")
    row = {"campaign_id": world.campaign_id, "qid": "T1", "user_id": world.users["alice"],
           "comment": "", "time_spent_ms": 0, "client_id": "k"}  # fmt: skip
    with store.session() as s:
        s.add(Judgement(docno="D1", grade=1, **row))
    with pytest.raises(sa.exc.IntegrityError), store.session() as s:
        s.add(Judgement(docno="D2", grade=1, **row))


def test_migration_moves_the_constraint_and_keeps_the_rows(empty_database_url: str) -> None:
    store = open_store(empty_database_url)
    upgrade(store, "0001")
    with store.engine.begin() as connection:
        connection.execute(sa.text("INSERT INTO users (id, username, password_hash, role, active,"
                                   " created_at) VALUES (1, 'ann', 'x', 'assessor', true,"
                                   " '2026-01-01')"))  # fmt: skip
        for cid in (1, 2):
            connection.execute(
                sa.text("INSERT INTO campaigns (id, name, description, relevance_level, "
                        "created_at) VALUES (:id, :name, '', 1, '2026-01-01')"),
                {"id": cid, "name": f"c{cid}"},
            )  # fmt: skip
        insert = sa.text(
            "INSERT INTO judgements (campaign_id, qid, docno, user_id, grade, comment, "
            "time_spent_ms, client_id, created_at) VALUES (:c, 'q', 'd', 1, 1, '', 0, :k, "
            "'2026-01-01')"
        )
        connection.execute(insert, {"c": 1, "k": "k"})
        with pytest.raises(sa.exc.IntegrityError), connection.begin_nested():
            connection.execute(insert, {"c": 2, "k": "k"})  # 0001: unique per assessor
    upgrade(store)
    with store.engine.begin() as connection:
        connection.execute(insert, {"c": 2, "k": "k"})
        with pytest.raises(sa.exc.IntegrityError), connection.begin_nested():
            connection.execute(insert, {"c": 2, "k": "k"})
        assert connection.execute(sa.text("SELECT count(*) FROM judgements")).scalar() == 2
    uniques = sa.inspect(store.engine).get_unique_constraints("judgements")
    assert [sorted(u["column_names"]) for u in uniques] == [["campaign_id", "client_id", "user_id"]]
    store.dispose()
