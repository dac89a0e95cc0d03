"""The admin pages' judging figures, computed by report jobs and kept (`services.judging_figures`,
`web.admin_figures`; the adjudication queue's, `adjudication_queue`): on the campaign of
every shape of test_page_numbers_shapes, what the pages show equals a direct computation
after each change (a judgement arriving between two views, an undo, a revision, a
withdrawal, a new pool with an assignment, an archived pool, gold, the withdrawn-judgements
rule), and a view that does not wait for the update shows the figures of before with what
they are, never as current."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World
from tests.web.test_page_numbers_shapes import _every_shape, _judge, _sampled
from workbench.services import (
    archive,
    assignments,
    gold,
    judging_figures,
    pools,
    progress,
    undo,
    users,
)
from workbench.services.adjudication import MergeSpec
from workbench.services.adjudication_queue import QueueFigures, queue_figures
from workbench.services.assignments import list_assignments
from workbench.services.campaign_pages import qrels_status
from workbench.services.evaluation_inputs import assessors
from workbench.store.models import Assignment, Campaign
from workbench.web.admin_figures import FiguresView, figures


def _direct(store, campaign_id: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Each page's figures computed in this process from the store as it is."""
    with store.read_session() as s:
        campaign = s.get(Campaign, campaign_id)
        return {
            "progress-figures": progress.campaign_progress(s, campaign_id),
            "assignment-figures": progress.assignment_progress(s, list_assignments(s, campaign_id)),
            "campaign-figures": (
                qrels_status(s, campaign),
                tuple(u.username for u in assessors(s, campaign)),
                _pool_figures(judging_figures.campaign_figures(s, campaign_id, None)),
            ),
            "adjudication-figures": _queue(queue_figures(s, campaign_id, MergeSpec("majority"))),
        }


def _queue(f: QueueFigures) -> tuple[Any, ...]:
    return (f.error, f.keys, f.counts, f.judges)


def _pool_figures(f: judging_figures.CampaignFigures) -> tuple[Any, ...]:
    return (f.documents, f.pool_documents, f.pool_id, f.sizes, f.without_text)


def _shown(view: FiguresView, kind: str) -> Any:
    f = view.figures
    if kind == "progress-figures":
        return f.report
    if kind == "assignment-figures":
        return f.done
    if kind == "adjudication-figures":
        return _queue(f)
    return (f.qrels_status, f.assessors, _pool_figures(f))


def _views(app: Flask, campaign_id: int, *, wait: float) -> dict[str, FiguresView]:
    app.config["ADMIN_FIGURES_WAIT_SECONDS"] = wait
    with app.test_request_context():
        params = {
            "progress-figures": {"pools": None},
            "campaign-figures": {"pool": None},
            "adjudication-figures": {"rule": "majority", "tie": "adjudicate", "primary": None},
        }
        kinds = ("progress-figures", "assignment-figures", "campaign-figures")
        kinds += ("adjudication-figures",)
        return {kind: figures(kind, campaign_id, params.get(kind)) for kind in kinds}


def test_kept_figures_equal_a_direct_computation_after_every_change(
    app: Flask, as_user, world: World
) -> None:
    store = _every_shape(app, world)
    c = world.campaign_id
    alice = world.users["alice"]
    a = world.assignment
    t2 = sorted(_sampled(store, world.pool_id, "T2"))

    def judge_more() -> None:  # a judgement arrives between two views
        _judge(store, a["alice", "T2"], alice, t2[2], 1)

    def take_back() -> None:
        with store.session() as s:
            undo.undo_last_judgement(s, a["alice", "T2"], alice)

    def revise() -> None:  # same key, another grade: judged counts unchanged
        _judge(store, a["alice", "T2"], alice, t2[0], 2)

    def withdraw() -> None:
        with store.session() as s:
            assignments.unassign(s, s.get(Assignment, a["bob", "T1"]))

    def new_pool() -> None:
        with store.session() as s:
            pool = pools.build_pool(s, s.get(Campaign, c), depth=4, seed=9)
            assignments.assign(s, pool, "T2", users.get_user(s, "bob"))

    def archive_pool() -> None:
        with store.session() as s:
            archive.set_archived(s, pools.latest_pool(s, s.get(Campaign, c)), True)

    def more_gold() -> None:
        with store.session() as s:
            gold.mark(s, s.get(Campaign, c), [gold.GoldItem("T2", t2[0], 0)])

    def count_withdrawn() -> None:
        with store.session() as s:
            campaign = s.get(Campaign, c)
            campaign.count_withdrawn = not campaign.count_withdrawn

    changes: list[Callable[[], None]] = [
        judge_more,
        take_back,
        revise,
        withdraw,
        new_pool,
        archive_pool,
        more_gold,
        count_withdrawn,
    ]
    before = _views(app, c, wait=120)
    for kind, view in before.items():
        assert view.fresh and view.note == "" and _shown(view, kind) == _direct(store, c)[kind]
    with store.read_session() as s:
        mark = judging_figures.judgement_mark(s, c)
    for change in changes:
        expected_before = {kind: _shown(view, kind) for kind, view in before.items()}
        change()
        stale = _views(app, c, wait=0)
        for kind, view in stale.items():
            # not waited for: the figures of before, said to be so, never as current
            assert not view.fresh, (change.__name__, kind)
            assert _shown(view, kind) == expected_before[kind]
            assert view.note.startswith(f"As of judgement {mark.highest} ")
        before = _views(app, c, wait=120)
        direct = _direct(store, c)
        for kind, view in before.items():
            assert view.fresh and _shown(view, kind) == direct[kind], (change.__name__, kind)
        with store.read_session() as s:
            mark = judging_figures.judgement_mark(s, c)
    # what the figures went through: bob's second assignment, the archived pool out of scope
    report = before["progress-figures"].figures.report
    assert report["scope"].numbers == tuple(
        sorted({p.number for p in _pools_with_assignments(store, c)})
    )
    page = as_user("admin").get(f"/admin/campaigns/{c}/progress").text
    overall = report["overall"]
    assert f"<strong>{overall.judged} / {overall.total}</strong>" in page
    assert 'id="figures-status"' not in page


def _pools_with_assignments(store, campaign_id: int) -> list[Any]:  # type: ignore[no-untyped-def]
    with store.read_session() as s:
        ids = set(
            s.scalars(
                select(Assignment.pool_id).where(
                    Assignment.campaign_id == campaign_id, Assignment.active.is_(True)
                )
            )
        )
        campaign = s.get(Campaign, campaign_id)
        return [p for p in pools.list_pools(s, campaign) if p.id in ids and p.archived_at is None]


def test_a_page_without_figures_yet_says_they_are_being_computed(
    app: Flask, as_user, world: World
) -> None:
    app.config["ADMIN_FIGURES_WAIT_SECONDS"] = 0
    admin = as_user("admin")
    c = world.campaign_id
    for path in (f"/admin/campaigns/{c}/progress", f"/admin/campaigns/{c}/assignments"):
        page = admin.get(path)
        assert page.status_code == 200
        assert "Being computed in the background: reload in a moment." in page.text
        # the progress page has nothing else to show: it reloads itself
        assert ('http-equiv="refresh"' in page.text) == path.endswith("/progress")
    assignments_page = admin.get(f"/admin/campaigns/{c}/assignments").text
    assert "Reassign" in assignments_page  # the page stays usable meanwhile


def test_the_campaign_page_without_its_figures_yet_says_so_where_they_go(
    app: Flask, as_user, world: World
) -> None:
    """The campaign page's figures (documents, pool sizes, documents without text, qrels
    status) are never shown as zero or empty before they are computed: '…' in their place and
    the note; the rest of the page (runs, topics, the pool's runs) is shown as always."""
    app.config["ADMIN_FIGURES_WAIT_SECONDS"] = 0
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}").text
    assert "Being computed in the background: reload in a moment." in page
    counts = page.split('id="counts">')[1].split("</p>")[0]
    assert "<strong>…</strong> documents" in counts and "<strong>2</strong> topics" in counts
    pools_table = page.split('id="pools"')[1].split("</table>")[0]
    assert "<td>…</td>" in pools_table and "<td>12</td>" not in pools_table
    card = page.split('id="pool-card"')[1]
    assert "From 2 runs" in card and "documents (" not in card.split("</p>")[0]
    assert 'id="qrels-status"' not in page and "runA" in page
    app.config["ADMIN_FIGURES_WAIT_SECONDS"] = 120  # then the figures, computed by the job
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}").text
    assert 'id="figures-status"' not in page and "<strong>8</strong> documents" in page
    assert "<td>12</td>" in page.split('id="pools"')[1].split("</table>")[0]
    assert "12 documents (12 to judge) over 2 topics" in page.split('id="pool-card"')[1]
