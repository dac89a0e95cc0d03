"""Pool statistics kept with the pool: what a later load reads equals a fresh computation, and
a change to the pool's entries or runs is never answered from the kept row."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select, update

from tests.store.test_pools import campaign_id  # noqa: F401  (the fixture)
from workbench.services import campaigns, pool_statistics, pools
from workbench.store.models import PoolEntry, PoolStatistics


def fresh(session, pool) -> dict[str, Any]:
    """The statistics computed from the runs' ranked lists, nothing kept read."""
    runs = pools.pool_runs(session, pool)
    signature = pool_statistics.pool_signature(session, pool, runs)
    computed = pool_statistics._compute(session, pool, runs, signature)
    return pool_statistics.pool_statistics(session, pool, computed)


def load(session, pool) -> tuple[dict[str, Any], bool]:
    """What a page load shows and whether it read the kept contributions; keeps them if not."""
    contributions, kept = pool_statistics.current_contributions(session, pool)
    if not kept:
        pool_statistics.remember(session, contributions)
    return pool_statistics.pool_statistics(session, pool, contributions), kept


def test_kept_statistics_equal_a_fresh_computation_until_the_pool_changes(
    store,
    campaign_id,  # noqa: F811
):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=2, runs=["A", "B"], seed=5)
        # the builder kept them: the first load reads them
        assert session.scalar(select(func.count(PoolStatistics.pool_id))) == 1
        first, kept = load(session, pool)
        assert kept and first == fresh(session, pool)
        assert first["contributed_per_run"] == {"A": 4, "B": 3}

        # an extension adds entries and a run: it keeps the new statistics itself, and a
        # row kept before it no longer answers
        before = session.get(PoolStatistics, pool.id).signature
        pools.extend_pool(session, pool, ["C"])
        assert session.get(PoolStatistics, pool.id).signature != before
        extended, kept = load(session, pool)
        assert kept and extended == fresh(session, pool)
        assert extended["runs"] == ["A", "B", "C"] and extended["size"] > first["size"]
        assert load(session, pool) == (extended, True)

        # revealing or leaving out documents flips `sampled` only: the contributions stay
        # kept, the sampled counts (counted on every load) follow
        session.execute(
            update(PoolEntry)
            .where(PoolEntry.pool_id == pool.id, PoolEntry.qid == "1")
            .values(sampled=False)
        )
        revealed, kept = load(session, pool)
        assert kept and revealed == fresh(session, pool)
        assert revealed["topics"]["1"]["sampled"] == 0 < revealed["topics"]["1"]["size"]
        assert revealed["sampled"] == extended["sampled"] - extended["topics"]["1"]["sampled"]


def test_a_changed_pool_recomputes_even_with_a_row_kept_for_it(store, campaign_id):  # noqa: F811
    """A kept row of another signature (a pool whose parameters were re-recorded) is replaced."""
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, strategy="take", budget=3, seed=1)
        shown, _ = load(session, pool)
        row = session.get(PoolStatistics, pool.id)
        row.contributions = {**row.contributions, "unique": [99] * len(shown["runs"])}
        assert load(session, pool)[0]["unique_per_run"] == dict.fromkeys(shown["runs"], 99)
        pool.params = {**pool.params, "note": "re-recorded"}
        session.flush()
        recomputed, kept = load(session, pool)
        assert not kept and recomputed == fresh(session, pool)
        assert recomputed["unique_per_run"] == shown["unique_per_run"]


@pytest.mark.parametrize("strategy", ["depth", "stratified"])
def test_every_pool_kind_kept_equals_fresh(store, campaign_id, strategy):  # noqa: F811
    options = {"depth": {"depth": 3}, "stratified": {"strata": "1:1,3:0.5"}}[strategy]
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, strategy=strategy, seed=3, **options)
        computed, _ = load(session, pool)
        assert load(session, pool) == (computed, True)
        assert computed == fresh(session, pool)


def test_a_run_replaced_in_place_recomputes(store, campaign_id, tmp_path):  # noqa: F811
    """`import --replace` keeps a run's id (pools that name it still do); a new file with as
    many lines but another ranking changes what the run contributes."""
    from tests.store.conftest import write_run
    from workbench.services import run_imports

    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=2, runs=["A", "B"], seed=5)
        before, _ = load(session, pool)
        assert before["contributed_per_run"]["B"] == 3  # d1, b2 of topic 1; x2 of topic 2
        # as many lines, other documents first: B now ranks a1 and a2 in topic 1
        lines = [("1", "a1", 5), ("1", "a2", 4), ("1", "d1", 3), ("1", "b4", 1), ("2", "x2", 9)]
        path = write_run(tmp_path / "runB2.txt", "B", lines)
        run_imports.import_runs(session, campaign, [path], replace=True)
        after, kept = load(session, pool)
        assert not kept and after == fresh(session, pool)
        assert after["contributed_per_run"]["B"] == 3 and after["unique_per_run"]["B"] == 0
        assert after["unique_per_run"] != before["unique_per_run"]


@pytest.mark.parametrize("kind", ["depth", "take", "adaptive"])
def test_the_builder_keeps_what_a_recomputation_gives(store, campaign_id, kind):  # noqa: F811
    """Every builder keeps the statistics of the pool as it leaves it (an adaptive pool's
    recorded settings included): the first load reads them, equal to a fresh computation."""
    from workbench.services import adaptive_pools

    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        if kind == "adaptive":
            pool = adaptive_pools.build_adaptive_pool(
                session, campaign, method="mm", budget=3, depth=3, seed=2
            )
        else:
            options = {"depth": {"depth": 3}, "take": {"budget": 4}}[kind]
            pool = pools.build_pool(session, campaign, strategy=kind, seed=2, **options)
        shown, kept = load(session, pool)
        assert kept and shown == fresh(session, pool) and shown["size"] > 0


@pytest.mark.parametrize(
    ("strategy", "options", "passes"),
    [
        ("depth", {"depth": 3}, 1),  # summed as it pools: one pass over the runs
        ("stratified", {"strata": "1:1,3:0.5"}, 1),
        ("depth", {"depth": 2, "runs": ["B", "C"]}, 1),
        ("depth", {"depth": 3, "topics": ["1"]}, 2),  # a subset: the growth counts every topic
        ("take", {"budget": 4}, 2),  # the contribution depth is known after the pool
    ],
)
def test_a_build_sums_its_contributions_as_it_pools_when_that_is_the_same(
    store,
    campaign_id,  # noqa: F811
    monkeypatch,
    strategy,
    options,
    passes,
):
    """`pools.build_pool` of a pool with a recorded depth and every topic keeps what it summed
    while pooling (one pass over the runs' lists, not two); either way what it keeps equals a
    fresh computation."""
    read = []
    original = pools.each_topic_ranked_lists

    def counted(*args, **kwargs):
        read.append(1)
        yield from original(*args, **kwargs)

    monkeypatch.setattr(pools, "each_topic_ranked_lists", counted)
    monkeypatch.setattr(pool_statistics, "each_topic_ranked_lists", counted)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, strategy=strategy, seed=4, **options)
        assert len(read) == passes
        shown, kept = load(session, pool)
        assert kept and shown == fresh(session, pool) and shown["size"] > 0
