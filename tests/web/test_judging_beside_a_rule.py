"""No admin action makes assessors wait: a merge rule applied from the adjudication page
decides outside any write transaction (`adjudication_steps`), so a judgement submitted while
it reads and decides is stored and acknowledged before the rule finishes, and the rule
decides that judgement's topic again (run on PostgreSQL in its pass)."""

from __future__ import annotations

import re
import threading

from flask import Flask
from sqlalchemy import event, select

from tests.web.conftest import World, get_store_of
from workbench.services import judging
from workbench.store.models import FinalLabel, PoolEntry

READS_JUDGEMENTS = re.compile(r"\bFROM judgements\b", re.I)


def _docnos(app: Flask, world: World, qid: str) -> list[str]:
    with get_store_of(app).read_session() as s:
        query = select(PoolEntry.docno).where(
            PoolEntry.pool_id == world.pool_id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True)
        )
        return sorted(s.scalars(query))


def _judge(app: Flask, world: World, who: str, qid: str, docno: str, grade: int) -> None:
    judging.submit_judgement(
        get_store_of(app),
        world.assignment[who, qid],
        world.users[who],
        judging.JudgementInput(docno, grade),
    )


def test_a_judgement_is_acknowledged_while_a_rule_reads_and_decides(
    app: Flask, as_user, world: World
) -> None:
    """alice and bob judge T1 and T2 (a tie on T2's first document). The organiser applies
    the majority rule; when the rule's thread reads the judgements the second time (its
    snapshot is taken), the test stops it there until a judging thread has revised alice's
    grade of the tied document and been acknowledged (at most 60 s: with the rule in one write
    transaction, as before, the judgement waits for it and this times out). The rule then
    labels that document from the revised grades and says it decided T2 again."""
    store = get_store_of(app)
    tied = _docnos(app, world, "T2")[0]
    for qid in ("T1", "T2"):
        for docno in _docnos(app, world, qid):
            _judge(app, world, "alice", qid, docno, 1)
            _judge(app, world, "bob", qid, docno, 0 if docno == tied else 1)
    admin = as_user("admin")
    rule_thread = threading.get_ident()
    reads: list[str] = []
    acknowledged = threading.Event()
    judged_in_time: list[bool] = []
    errors: list[BaseException] = []

    def revise() -> None:
        try:
            _judge(app, world, "alice", "T2", tied, 0)
            acknowledged.set()
        except BaseException as error:  # reported below
            errors.append(error)

    def pause_the_rule(_conn, _cursor, statement, _params, _context, _many) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() != rule_thread or not READS_JUDGEMENTS.search(statement):
            return
        reads.append(statement)
        if len(reads) == 2:
            threading.Thread(target=revise).start()
            judged_in_time.append(acknowledged.wait(timeout=60))

    event.listen(store.engine, "before_cursor_execute", pause_the_rule)
    try:
        response = admin.post(
            f"/reports/{world.campaign_id}/adjudication/apply",
            data={"rule": "majority", "tie": "adjudicate"},
            follow_redirects=True,
        )
    finally:
        event.remove(store.engine, "before_cursor_execute", pause_the_rule)
    acknowledged.wait(timeout=60)
    assert errors == []
    assert judged_in_time == [True]
    assert response.status_code == 200
    assert "1 topic(s) decided again as their judgements changed" in response.text
    with store.read_session() as s:
        label = s.scalars(
            select(FinalLabel).where(FinalLabel.qid == "T2", FinalLabel.docno == tied)
        ).one()
    assert (label.grade, label.judges) == (
        0,
        {str(world.users["alice"]): 0, str(world.users["bob"]): 0},
    )
