"""The adjudication page from its figures (`adjudication_queue`): every view's count and its
pages are those of the whole disagreement queue, and a window is read as the store is now."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from workbench.services.adjudication import (
    MergeSpec,
    apply_rule,
    disagreement_queue,
    record_decision,
)
from workbench.services.adjudication_queue import QUEUE_VIEWS, adjudication_page, queue_figures
from workbench.services.campaigns import get_campaign
from workbench.store.models import Judgement, User


def _in(view: str, item) -> bool:  # type: ignore[no-untyped-def]
    """The views as the whole queue defines them (its items' final label and decider)."""
    return {
        "undecided": item.final is None,
        "rule": item.final is not None and not item.adjudicated,
        "adjudicated": item.adjudicated,
        "all": True,
    }[view]


@pytest.mark.parametrize("rule", [MergeSpec("majority"), MergeSpec("any"), MergeSpec("mean")])
def test_every_view_and_page_is_the_whole_queues(judged, rule: MergeSpec) -> None:
    """Labels by majority (ties left), q3/d2 adjudicated: each view's count, and its pages of 2
    read one after the other, give the whole queue's documents of that view, in order."""
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        apply_rule(s, campaign, MergeSpec("majority"))
        boss = s.scalars(select(User).where(User.username == "boss")).one()
        record_decision(
            s, campaign, qid="q3", docno="d2", grade=1, reason="read it", adjudicator=boss
        )
    with judged.read_session() as s:
        campaign = get_campaign(s, "demo")
        whole = disagreement_queue(s, campaign, rule, include_decided=True)
        figures = queue_figures(s, campaign.id, rule)
        assert figures.error is None
        for view in QUEUE_VIEWS:
            expected = [item for item in whole if _in(view, item)]
            assert dict(figures.counts)[view] == len(expected)
            shown = []
            for offset in range(0, len(expected) + 2, 2):
                page = adjudication_page(
                    s, campaign, rule, figures, view=view, offset=offset, limit=2
                )
                assert page.total == len(expected)
                shown += [entry.item for entry in page.entries]
            assert shown == expected, view
    assert {view: n for view, n in figures.counts}["adjudicated"] == 1


def test_a_window_is_read_now_and_an_unknown_primary_is_refused(judged) -> None:
    """Figures computed, then carol revises q2/d6 so that the judges agree (no longer a
    disagreement): the page of those figures leaves it out, and shows bob's new grade on
    q2/d7 it read now. A primary assessor who judged nothing: the figures and the page say
    why, with no document."""
    majority = MergeSpec("majority")
    with judged.read_session() as s:
        campaign = get_campaign(s, "demo")
        figures = queue_figures(s, campaign.id, majority)
    assert ("q2", "d6", "undecided") in figures.keys
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        users = {u.username: u.id for u in s.scalars(select(User))}
        for who, docno, grade in (("alice", "d6", 0), ("carol", "d6", 0), ("bob", "d7", 2)):
            s.add(
                Judgement(
                    campaign_id=campaign.id, qid="q2", docno=docno, user_id=users[who], grade=grade
                )
            )
    with judged.read_session() as s:
        campaign = get_campaign(s, "demo")
        page = adjudication_page(s, campaign, majority, figures, view="all", limit=100)
        items = {(e.item.qid, e.item.docno): e.item for e in page.entries}
        assert ("q2", "d6") not in items and page.total == len(figures.keys)
        assert sorted(items[("q2", "d7")].grades.values()) == [1, 2]
        unknown = MergeSpec("primary", primary="nobody")
        refused = queue_figures(s, campaign.id, unknown)
        page = adjudication_page(s, campaign, unknown, refused)
    assert refused.keys == () and "nobody" in (refused.error or "")
    assert page.entries == () and page.error == refused.error and page.total == 0
