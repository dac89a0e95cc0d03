"""The import choices in the admin's forms: split tags, topic subsets, unknown topics,
replacing judged documents; refused files answer 400 with their message; the pool card
lists documents without text."""

from __future__ import annotations

import gzip
import io

from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench.store.models import Assignment, Document, Judgement, Pool, PoolEntry, Run


def post_file(client, campaign_id: int, kind: str, name: str, data: bytes, **fields):  # type: ignore[no-untyped-def]
    return client.post(
        f"/admin/campaigns/{campaign_id}/upload/{kind}",
        data={"files": (io.BytesIO(data), name), **fields},
        content_type="multipart/form-data",
        follow_redirects=True,
    )


def test_run_upload_choices(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    text = b"T1 Q0 D1 1 5 runX\nT9 Q0 D1 1 5 runX\nT2 Q0 NEW1 1 4 runY\nT1 Q0 D2 1 3 runY\n"
    refused = post_file(admin, cid, "runs", "two.run", text)
    assert refused.status_code == 400
    assert "two.run:3: expected one run tag per file" in refused.text
    unknown = post_file(admin, cid, "runs", "two.run", text, split_tags="1")
    assert unknown.status_code == 400 and "lacks: T9" in unknown.text
    page = post_file(
        admin, cid, "runs", "two.run", text, split_tags="1", skip_unknown_topics="1", topics="T1"
    )
    assert page.status_code == 200
    assert "runs: 2 added" in page.text
    assert "1 topic(s) the campaign lacks were skipped: T9" in page.text
    assert "1 topic(s) outside the chosen topics were left out: T2" in page.text
    with get_store_of(app).session() as session:
        tags = set(session.scalars(select(Run.tag).where(Run.campaign_id == cid)))
    assert {"runX", "runY"} <= tags
    form = admin.get(f"/admin/campaigns/{cid}").text
    for name in ("split_tags", "skip_unknown_topics", 'name="topics"'):
        assert name in form


def test_a_corrupt_or_bomb_gzip_upload_is_a_400_with_its_message(
    app: Flask, as_user, world: World
) -> None:
    admin = as_user("admin")
    good = gzip.compress(b'{"docno": "Z1", "text": "z"}\n' * 100)
    page = post_file(admin, world.campaign_id, "documents", "d.jsonl.gz", good[:-30])
    assert page.status_code == 400
    assert "d.jsonl.gz:1: expected a complete, valid gzip file" in page.text
    bomb = gzip.compress(b"a" * (32 << 20))  # one 32 MiB line in 32 KB
    page = post_file(admin, world.campaign_id, "documents", "bomb.jsonl.gz", bomb)
    assert page.status_code == 400
    assert "bomb.jsonl.gz:1: expected a .gz file expanding to at most 16777216 bytes" in page.text
    with get_store_of(app).session() as session:
        assert session.scalar(select(Document.id).where(Document.docno == "Z1")) is None


def test_replacing_judged_documents_from_the_form(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    docno = "D1"
    with get_store_of(app).session() as session:
        session.add(
            Judgement(campaign_id=cid, qid="T1", docno=docno, user_id=world.users["alice"], grade=1)
        )
    data = f'{{"docno": "{docno}", "text": "a new text"}}\n'.encode()
    refused = post_file(admin, cid, "documents", "new.jsonl", data)
    assert refused.status_code == 400 and "has been judged" in refused.text
    page = post_file(admin, cid, "documents", "new.jsonl", data, replace="1")
    assert page.status_code == 200 and "recorded as" in page.text
    with get_store_of(app).session() as session:
        after = session.scalars(select(Judgement).where(Judgement.docno == docno)).all()
    assert [(j.grade, j.comment) for j in after] == [
        (1, ""),
        (1, "[document text replaced by the import of new.jsonl]"),
    ]


def test_pool_and_assignment_forms_take_a_topic_subset(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    cid = world.campaign_id
    post_file(admin, cid, "runs", "c.run", b"T1 Q0 GHOST 1 9 runC\n")
    page = admin.post(
        f"/admin/campaigns/{cid}/pools",
        data={"strategy": "depth", "depth": "1", "seed": "3", "topics": "T1"},
        follow_redirects=True,
    )
    assert "built (depth)" in page.text
    with get_store_of(app).session() as session:
        pool = session.scalars(select(Pool).order_by(Pool.id.desc())).first()
        qids = set(session.scalars(select(PoolEntry.qid).where(PoolEntry.pool_id == pool.id)))
    assert pool.params["topics"] == ["T1"] and qids == {"T1"}
    assert 'id="no-text"' in page.text and "GHOST" in page.text  # a pooled docno without text
    assert 'name="topics"' in admin.get(f"/admin/campaigns/{cid}/assignments").text
    page = admin.post(
        f"/admin/campaigns/{cid}/assignments/auto",
        data={"judges_per_topic": "1", "assessors": ["carol"], "topics": ["T1"], "pool": "2"},
        follow_redirects=True,
    )
    assert "1 assignment created." in page.text
    with get_store_of(app).session() as session:
        mine = session.scalars(select(Assignment).where(Assignment.pool_id == pool.id)).all()
    assert [a.qid for a in mine] == ["T1"]


def test_efficiency_sidecars_upload_from_the_campaign_page(app: Flask, as_user, world: World):  # type: ignore[no-untyped-def]
    from workbench.store.models import RunEfficiency

    admin = as_user("admin")
    cid = world.campaign_id
    assert 'id="upload-efficiency"' in admin.get(f"/admin/campaigns/{cid}").text
    sidecar = b'[{"run": "runA", "mean_latency_ms": 12.5}, {"run": "runB", "throughput_qps": 80}]'
    page = post_file(admin, cid, "efficiency", "costs.json", sidecar)
    assert page.status_code == 200
    assert "Efficiency figures stored for 2 runs: runA, runB." in page.text
    again = post_file(admin, cid, "efficiency", "costs.json", sidecar)
    assert again.status_code == 400 and "already have efficiency figures" in again.text
    replaced = post_file(admin, cid, "efficiency", "costs.json", sidecar[:-1] + b"]", replace="1")
    assert "(replacing those of runA, runB)." in replaced.text
    bad = post_file(admin, cid, "efficiency", "bad.json", b'[{"run": "runZ"}]')
    assert bad.status_code == 400 and "has no run runZ" in bad.text
    with get_store_of(app).read_session() as s:
        figures = {e.run_id: e.mean_latency_ms for e in s.scalars(select(RunEfficiency))}
        tags = dict(s.execute(select(Run.id, Run.tag)).all())
    assert {tags[run_id]: latency for run_id, latency in figures.items()} == {
        "runA": 12.5,
        "runB": None,
    }
