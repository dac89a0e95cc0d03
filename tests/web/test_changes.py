"""The campaign's change counter (`services.changes`): every writer of the tables it stands for
increments it in its transaction, so that the report jobs' fingerprint, which reads it instead
of counting those tables, changes whenever they do; two writers at once lose no increment and
never deadlock (run on PostgreSQL in its pass)."""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import event, select, text

from tests.web.conftest import World, get_store_of, write_campaign_files
from workbench.services import (
    adaptive_pools,
    adjudication,
    adjudication_steps,
    archive,
    assignments,
    changes,
    document_imports,
    judging,
    pools,
    qrels_imports,
    slots,
    undo,
    users,
)
from workbench.services.errors import ServiceError
from workbench.store import Store
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry, User

SERVICES = Path(__file__).resolve().parents[2] / "workbench" / "services"
WRITE = re.compile(
    r'(INSERT INTO|UPDATE|DELETE FROM)\s+"?(' + "|".join(changes.TRACKED) + r')"?\b', re.I
)
COUNT = re.compile(r'INSERT INTO\s+"?campaign_versions"?', re.I)


def version(store: Store, campaign_id: int) -> int:
    with store.read_session() as s:
        return changes.version(s, campaign_id)


def tracked_rows(store: Store, campaign_id: int) -> str:
    """A digest of every row of the TRACKED tables that belongs to the campaign."""
    by_campaign = {
        "judgements": "campaign_id = :c",
        "preference_judgements": "campaign_id = :c",
        "final_labels": "campaign_id = :c",
        "pool_entries": "pool_id IN (SELECT id FROM pools WHERE campaign_id = :c)",
        "routing_slots": "pool_id IN (SELECT id FROM pools WHERE campaign_id = :c)",
        "qrels_entries": "qrels_set_id IN (SELECT id FROM qrels_sets WHERE campaign_id = :c)",
    }
    assert set(by_campaign) == set(changes.TRACKED)
    with store.read_session() as s:
        rows = {
            table: [
                [str(v) for v in row]
                for row in s.execute(
                    text(f"SELECT * FROM {table} WHERE {where} ORDER BY id"), {"c": campaign_id}
                )
            ]
            for table, where in by_campaign.items()
        }
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@contextmanager
def every_transaction_counted(store: Store) -> Iterator[list[str]]:
    """Collects the statements that wrote a TRACKED table in a transaction (or autocommit
    statement) that did not also increment a campaign's version."""
    missed: list[str] = []
    seen: dict[int, list[str]] = {}

    def before(conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
        writes = seen.setdefault(id(conn), [])
        if WRITE.search(statement):
            writes.append(statement.split("(")[0][:60])
        if COUNT.search(statement):
            writes.clear()
            writes.append("counted")

    def ended(conn) -> None:  # type: ignore[no-untyped-def]
        writes = seen.pop(id(conn), [])
        missed.extend(w for w in writes if w != "counted" and "counted" not in writes)

    def rolled_back(conn) -> None:  # type: ignore[no-untyped-def]
        if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            ended(conn)  # its statements committed each (judging on PostgreSQL)
        else:
            seen.pop(id(conn), None)

    event.listen(store.engine, "before_cursor_execute", before)
    event.listen(store.engine, "commit", ended)
    event.listen(store.engine, "rollback", rolled_back)
    try:
        yield missed
    finally:
        event.remove(store.engine, "before_cursor_execute", before)
        event.remove(store.engine, "commit", ended)
        event.remove(store.engine, "rollback", rolled_back)


def _sampled(store: Store, pool_id: int, qid: str) -> list[str]:
    with store.read_session() as s:
        query = select(PoolEntry.docno).where(
            PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True)
        )
        return sorted(s.scalars(query))


def _judge(world: World, store: Store, who: str, qid: str, docno: str, grade: int) -> None:
    data = judging.JudgementInput(docno, grade)
    judging.submit_judgement(store, world.assignment[who, qid], world.users[who], data)


# One call of each writer class; each returns nothing and writes in its own transaction(s).
Writer = Callable[[Store, World, Path], None]


def a_judgement(store: Store, world: World, _tmp: Path) -> None:
    _judge(world, store, "alice", "T1", _sampled(store, world.pool_id, "T1")[0], 1)


def an_undo(store: Store, world: World, tmp: Path) -> None:
    a_judgement(store, world, tmp)
    with store.session() as s:
        undo.undo_last_judgement(s, world.assignment["alice", "T1"], world.users["alice"])


def _two_judges_disagree(store: Store, world: World) -> None:
    docno = _sampled(store, world.pool_id, "T1")[0]
    _judge(world, store, "alice", "T1", docno, 2)
    _judge(world, store, "bob", "T1", docno, 0)


def a_merge_rule(store: Store, world: World, _tmp: Path) -> None:
    _two_judges_disagree(store, world)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        adjudication.apply_rule(s, campaign, adjudication.MergeSpec("majority", tie="higher"))


def a_merge_rule_in_steps(store: Store, world: World, _tmp: Path) -> None:
    _two_judges_disagree(store, world)
    rule = adjudication.MergeSpec("majority", tie="lower")
    adjudication_steps.apply_rule_in_steps(store, world.campaign_id, rule)


def an_adjudication(store: Store, world: World, _tmp: Path) -> None:
    _two_judges_disagree(store, world)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        admin = s.get(User, world.users["admin"])
        docno = _sampled(store, world.pool_id, "T1")[0]
        adjudication.record_decision(
            s, campaign, qid="T1", docno=docno, grade=1, reason="read it", adjudicator=admin
        )


def a_pool(store: Store, world: World, _tmp: Path) -> None:
    with store.session() as s:
        pools.build_pool(s, s.get(Campaign, world.campaign_id), depth=5, seed=3)


def an_extended_pool(store: Store, world: World, _tmp: Path) -> None:
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        pool = pools.build_pool(s, campaign, depth=2, seed=3, runs=["runA"])
        pools.extend_pool(s, pool, ["runB"])


def an_adaptive_reveal(store: Store, world: World, _tmp: Path) -> None:
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            s, campaign, method="mm", budget=4, depth=6, batch=2, seed=11
        )
        primary = assignments.assign(s, pool, "T1", users.get_user(s, "carol")).id
    before = version(store, world.campaign_id)
    assert adaptive_pools.advance(store, primary, world.users["carol"])
    assert version(store, world.campaign_id) > before  # the reveal itself counts


def a_qrels_import(store: Store, world: World, tmp: Path) -> None:
    files = write_campaign_files(tmp / "files")
    with store.session() as s:
        qrels_imports.import_qrels(s, s.get(Campaign, world.campaign_id), files["qrels"])


def routing_slots(store: Store, world: World, _tmp: Path) -> None:
    docnos = _sampled(store, world.pool_id, "T2")[:2]
    with store.session() as s:
        slots.add(s, s.get(Assignment, world.assignment["alice", "T2"]), docnos, "routed")
        carol = assignments.assign(s, s.get(Pool, world.pool_id), "T2", users.get_user(s, "carol"))
        carols = carol.id
    for step in ("move", "keep"):
        before = version(store, world.campaign_id)
        with store.session() as s:
            mine = s.get(Assignment, world.assignment["alice", "T2"])
            if step == "move":
                assert slots.move(s, mine, s.get(Assignment, carols), docnos[:1]) == 1
            else:
                slots.keep(s, mine, docnos[1:])
        assert version(store, world.campaign_id) > before, step


def a_deleted_pool(store: Store, world: World, _tmp: Path) -> None:
    with store.session() as s:
        pool = pools.build_pool(s, s.get(Campaign, world.campaign_id), depth=1, seed=9)
        pool_id = pool.id
    before = version(store, world.campaign_id)
    with store.session() as s:
        archive.delete_object(s, s.get(Pool, pool_id))
    assert version(store, world.campaign_id) > before  # its entries went by cascade


def a_replaced_document(store: Store, world: World, tmp: Path) -> None:
    docno = _sampled(store, world.pool_id, "T1")[0]
    _judge(world, store, "alice", "T1", docno, 1)
    path = tmp / "replaced.jsonl"
    path.write_text(json.dumps({"docno": docno, "text": f"another text {tmp}"}) + "\n")
    before = version(store, world.campaign_id)
    document_imports.import_documents_in_steps(store, world.campaign_id, [path], replace=True)
    assert version(store, world.campaign_id) > before  # the judgement's replacement event


NET_ZERO = {a_deleted_pool}  # builds and deletes: the rows end as they began


WRITERS: list[Writer] = [
    a_judgement,
    an_undo,
    a_merge_rule,
    a_merge_rule_in_steps,
    an_adjudication,
    a_pool,
    an_extended_pool,
    an_adaptive_reveal,
    a_qrels_import,
    routing_slots,
    a_deleted_pool,
    a_replaced_document,
]


@pytest.mark.parametrize("writer", WRITERS, ids=[w.__name__ for w in WRITERS])
def test_each_writer_counts_its_change(
    app: Flask, world: World, tmp_path: Path, writer: Writer
) -> None:
    store = get_store_of(app)
    before, rows = version(store, world.campaign_id), tracked_rows(store, world.campaign_id)
    with every_transaction_counted(store) as missed:
        writer(store, world, tmp_path)
    assert missed == []
    assert writer in NET_ZERO or tracked_rows(store, world.campaign_id) != rows  # it wrote
    assert version(store, world.campaign_id) > before


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_counter_changes_whenever_the_rows_it_stands_for_do(
    app: Flask, world: World, tmp_path: Path, seed: int
) -> None:
    """A random sequence of service calls (writers and steps that write nothing tracked):
    after each, the counter has moved if any tracked row of the campaign changed."""
    store = get_store_of(app)
    rng = random.Random(seed)
    steps = [*WRITERS, *WRITERS]
    rng.shuffle(steps)
    for number, step in enumerate(steps[:8]):
        rows, before = tracked_rows(store, world.campaign_id), version(store, world.campaign_id)
        with suppress(ServiceError):  # a step the state refuses (e.g. carol already holds T2)
            (tmp_path / f"{number}").mkdir()
            step(store, world, tmp_path / f"{number}")
        if tracked_rows(store, world.campaign_id) != rows:
            assert version(store, world.campaign_id) > before, step.__name__


def test_concurrent_writers_lose_no_count_and_never_deadlock(app: Flask, world: World) -> None:
    """Two assessors judging at once while an organiser applies a merge rule in steps (on
    PostgreSQL, each on its own connection): every judgement and every write transaction of
    the rule is counted once and nothing waits forever."""
    store = get_store_of(app)
    before = version(store, world.campaign_id)
    errors: list[BaseException] = []
    merges = 0

    def judge_all(who: str) -> None:
        try:
            for qid in ("T1", "T2"):
                for docno in _sampled(store, world.pool_id, qid):
                    _judge(world, store, who, qid, docno, 1)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=judge_all, args=(who,)) for who in ("alice", "bob")]
    for thread in threads:
        thread.start()
    rule = adjudication.MergeSpec("majority", tie="higher")
    while any(thread.is_alive() for thread in threads):
        summary = adjudication_steps.apply_rule_in_steps(store, world.campaign_id, rule)
        merges += summary.transactions
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    judged = sum(len(_sampled(store, world.pool_id, qid)) for qid in ("T1", "T2"))
    assert version(store, world.campaign_id) - before == 2 * judged + merges


def _tracked_models() -> set[str]:
    from workbench.store import models

    return {
        name
        for name in dir(models)
        if getattr(getattr(models, name), "__tablename__", None) in changes.TRACKED
    }


def test_every_service_statement_writing_a_tracked_table_counts_it() -> None:
    """Statically: a service function that runs insert/update/delete or bulk_insert on a
    TRACKED model also calls `changes.changed` or `changes.insert_counted` (ORM adds, changes
    and deletes are counted by the Session hook; a module-level statement must be run by
    `insert_counted`). A new writer that forgets fails here."""
    models = _tracked_models()
    assert models == {
        "Judgement",
        "PreferenceJudgement",
        "FinalLabel",
        "PoolEntry",
        "QrelsEntry",
        "RoutingSlot",
    }
    forgotten = []
    for path in sorted(SERVICES.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            writes = [
                call
                for call in ast.walk(node)
                if isinstance(call, ast.Call)
                and getattr(call.func, "id", getattr(call.func, "attr", ""))
                in ("insert", "update", "delete", "bulk_insert")
                and any(
                    isinstance(name, ast.Name) and name.id in models
                    for arg in call.args
                    for name in ast.walk(arg)
                )
            ]
            counts = any(
                isinstance(call, ast.Attribute)
                and call.attr in ("changed", "insert_counted")
                and getattr(call.value, "id", "") == "changes"
                for call in ast.walk(node)
            )
            if writes and not counts:
                forgotten.append(f"{path.name}:{node.name}")
    assert forgotten == []
