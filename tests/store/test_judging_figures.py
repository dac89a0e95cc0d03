"""The judging figures' key (`jobs.fingerprint` with `judging_figures.depends`): every change
the admin pages' figures are read from changes it, so a kept result is never taken for a
current one; another campaign's changes do not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select, update

from tests.store.test_pools import campaign_id  # noqa: F401  (the fixture)
from workbench.services import (
    adaptive_pools,
    archive,
    assignments,
    campaigns,
    gold,
    jobs,
    judging_figures,
    pools,
    users,
)
from workbench.store import Store
from workbench.store.models import (
    Assignment,
    Campaign,
    GoldDocument,
    Judgement,
    Pool,
    PoolEntry,
    Topic,
    User,
)

KIND = "test-judging-figures"
jobs.register(KIND, lambda _s, _campaign, _params, _progress: b"", depends=judging_figures.depends)


def _key(store: Store, campaign: int) -> str:
    with store.read_session() as s:
        return jobs.fingerprint(s, campaign, KIND)


def _judge(store: Store, campaign: int, docno: str, grade: int | None, **row: Any) -> None:
    with store.session() as s:
        user = s.scalar(select(User.id).where(User.username == "ann"))
        s.add(
            Judgement(campaign_id=campaign, qid="1", docno=docno, user_id=user, grade=grade, **row)
        )


def test_every_input_of_the_figures_changes_their_key(
    store: Store,
    campaign_id: int,  # noqa: F811
) -> None:
    with store.session() as s:
        campaign = campaigns.get_campaign(s, campaign_id)
        other = campaigns.create_campaign(s, "other")
        other_id = other.id
        users.create_user(s, "ann", None)
        users.create_user(s, "ben", None)
        pool = pools.build_pool(s, campaign, depth=2, seed=1)
        assignments.assign(s, pool, "1", users.get_user(s, "ann"))
        pool_id = pool.id

    def on(change: Callable[[Any], None]) -> Callable[[], None]:
        def run() -> None:
            with store.session() as s:
                change(s)

        run.__name__ = change.__name__
        return run

    def a_judgement() -> None:
        _judge(store, campaign_id, "a1", 1)

    def a_late_row_below_the_mark() -> None:  # PostgreSQL: an id drawn earlier, committed later
        with store.read_session() as s:
            highest = s.scalar(select(Judgement.id).order_by(Judgement.id.desc()).limit(1))
        with store.session() as s:
            s.execute(update(Judgement).where(Judgement.id == highest).values(id=highest + 10))
        _judge(store, campaign_id, "a2", 1, id=highest)

    @on
    def an_assignment(s: Any) -> None:
        assignments.assign(s, s.get(Pool, pool_id), "2", users.get_user(s, "ben"))

    @on
    def a_withdrawal(s: Any) -> None:
        first = s.scalar(select(Assignment).where(Assignment.qid == "1"))
        assignments.unassign(s, first)

    @on
    def a_reveal(s: Any) -> None:  # an ORM write of a pool entry counts as a change
        entry = s.scalar(
            select(PoolEntry).where(PoolEntry.pool_id == pool_id, PoolEntry.qid == "2")
        )
        entry.sampled = False

    @on
    def a_new_pool(s: Any) -> None:
        pools.build_pool(s, s.get(Campaign, campaign_id), depth=1, seed=2)

    @on
    def an_archived_pool(s: Any) -> None:
        archive.set_archived(s, s.get(Pool, pool_id), True)

    @on
    def an_adaptive_budget(s: Any) -> None:
        adaptive = adaptive_pools.build_adaptive_pool(
            s, s.get(Campaign, campaign_id), method="mm", budget=3, depth=3, seed=2
        )
        adaptive_pools.set_budget(s, adaptive, 2)

    @on
    def gold_document(s: Any) -> None:
        s.add(GoldDocument(campaign_id=campaign_id, qid="1", docno="a1", grade=1))

    @on
    def quality_settings(s: Any) -> None:
        gold.set_quality(s, s.get(Campaign, campaign_id), gold_share=0.2)

    @on
    def withdrawn_judgements_rule(s: Any) -> None:
        campaign = s.get(Campaign, campaign_id)
        campaign.count_withdrawn = not campaign.count_withdrawn

    @on
    def a_pairwise_design(s: Any) -> None:
        campaign = s.get(Campaign, campaign_id)
        campaign.judging_options = {**(campaign.judging_options or {}), "top": 3}

    @on
    def a_topic_title(s: Any) -> None:
        topic = s.scalar(select(Topic).where(Topic.campaign_id == campaign_id, Topic.qid == "1"))
        topic.title = "renamed"

    @on
    def a_user_name(s: Any) -> None:
        users.get_user(s, "ben").username = "benedict"

    changes = [
        a_judgement,
        a_late_row_below_the_mark,
        an_assignment,
        a_withdrawal,
        a_reveal,
        a_new_pool,
        an_archived_pool,
        an_adaptive_budget,
        gold_document,
        quality_settings,
        withdrawn_judgements_rule,
        a_pairwise_design,
        a_topic_title,
        a_user_name,
    ]
    seen = {_key(store, campaign_id)}
    for change in changes:
        other_before = _key(store, other_id)
        change()
        key = _key(store, campaign_id)
        assert key not in seen, change.__name__
        seen.add(key)
        if change.__name__ not in ("a_user_name",):  # user names are shared by campaigns
            assert _key(store, other_id) == other_before, change.__name__
    # reading changes nothing
    assert _key(store, campaign_id) == key
    with store.read_session() as s:
        mark = judging_figures.judgement_mark(s, campaign_id)
    assert mark.count == 2
