"""Hostile text in the new pages and downloads: an assessor named like a formula, mathtext or
markup, a gold reason and a machine reason that start a formula. Every CSV cell is text,
LaTeX is escaped, HTML is escaped, and the plots render."""

from __future__ import annotations

import csv
import io

from flask import Flask

from tests.web.conftest import FAST_HASH, PASSWORD, World, get_store_of
from workbench.services import assignments, gold, machine_judges, pools, users
from workbench.store.models import Campaign, MachineJudgement

HOSTILE = '=HYPERLINK("http://x")$\\frac{<b>&%_#'


def _hostile_world(app: Flask, world: World, as_user) -> None:  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        user = users.create_user(s, HOSTILE, PASSWORD, role="assessor", hash_method=FAST_HASH)
        pool = pools.get_pool(s, c, 1)
        assignments.assign(s, pool, "T1", user, order="docno")
        gold.set_quality(s, c, gold_share=0.2, show_gold_accuracy=True)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2, "=cmd|' /C calc'!A0")])
        judge = machine_judges.add_judge(s, c, model="m", base_url="http://127.0.0.1:9/v1")
        s.add(MachineJudgement(judge_id=judge.id, campaign_id=c.id, qid="T1", docno="D1",
                               grade=1, reason="=1+2", raw_answer="@SUM(A1)", cache_key="k",
                               template_hash="h"))  # fmt: skip
    client = as_user(HOSTILE)
    with get_store_of(app).read_session() as s:
        from sqlalchemy import select

        from workbench.store.models import Assignment, User

        aid = s.scalar(select(Assignment.id).join(User, User.id == Assignment.user_id)
                       .where(User.username == HOSTILE))  # fmt: skip
    for i in range(4):
        document = client.get(f"/api/v1/assignments/{aid}/documents/{i}").json
        response = client.post(f"/api/v1/assignments/{aid}/judgements",
                               json={"docno": document["docno"], "grade": i % 3})  # fmt: skip
        assert response.status_code in (200, 201), response.text


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_the_assessor_dashboard_downloads_and_page_are_safe(
    app: Flask, as_user, world: World
) -> None:
    _hostile_world(app, world, as_user)
    admin = as_user("admin")
    cid = world.campaign_id
    for url in (f"/admin/campaigns/{cid}/assessors.csv",
                f"/api/v1/campaigns/{cid}/assessors?format=csv"):  # fmt: skip
        response = admin.get(url)
        assert response.status_code == 200, (url, response.status_code)
        cells = _cells(response.text)
        assert any(HOSTILE in c for c in cells), url
        assert not [c for c in cells if c[:1] in ("=", "+", "@") and c != "="], url
    latex = admin.get(f"/api/v1/campaigns/{cid}/assessors?format=latex")
    assert latex.status_code == 200
    assert "\\frac" not in latex.text.replace("\\textbackslash{}frac", "")
    page = admin.get(f"/admin/campaigns/{cid}/assessors")
    assert page.status_code == 200
    assert "<b>&amp;" not in page.text and "&lt;b&gt;" in page.text
    mine = as_user(HOSTILE).get("/assess/progress")
    assert mine.status_code == 200 and "<b>&" not in mine.text


def test_the_machine_labels_csv_and_the_gold_page_are_safe(
    app: Flask, as_user, world: World, world_url
) -> None:
    _hostile_world(app, world, as_user)
    admin = as_user("admin")
    cid = world.campaign_id
    response = admin.get(f"/api/v1/campaigns/{cid}/export/machine-labels?format=csv")
    assert response.status_code == 200, response.text
    cells = _cells(response.text)
    assert "'=1+2" in cells and "'@SUM(A1)" in cells
    page = admin.get(f"/admin/campaigns/{cid}/quality")
    assert page.status_code == 200 and "=cmd|" in page.text
    from click.testing import CliRunner

    from workbench.cli import main

    listed = CliRunner().invoke(main, ["--db", world_url[0], "gold", "list", "--campaign", "c1"])
    assert listed.exit_code == 0, listed.output
