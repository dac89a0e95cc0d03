"""Pools in the store: recorded choices, reproducibility from the seed, extension, statistics."""

from __future__ import annotations

import zlib

import pytest
from sqlalchemy import func, select

from workbench.services import (
    campaigns,
    document_imports,
    pool_statistics,
    pools,
    run_imports,
    topic_imports,
)
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import Judgement, PoolEntry, PoolRun, User
from workbench.store.runs import ZLIB_LEVEL, decode_docnos_head


@pytest.fixture
def campaign_id(store, files) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        topic_imports.import_topics(session, campaign, files["topics"])
        run_imports.import_runs(session, campaign, [files["A"], files["B"], files["C"]])
        return campaign.id


def entries(session, pool) -> dict[str, list[tuple]]:
    rows = session.scalars(
        select(PoolEntry).where(PoolEntry.pool_id == pool.id).order_by(PoolEntry.id)
    )
    out: dict[str, list[tuple]] = {}
    for e in rows:
        out.setdefault(e.qid, []).append(
            (e.docno, e.build, e.best_rank, e.n_runs, e.stratum, e.sampled, e.inclusion_prob)
        )
    return out


def test_depth_pool_records_its_choices(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=2, seed=42, name="first")
        assert (pool.strategy, pool.seed, pool.name) == ("depth", 42, "first")
        assert pool.params["depth"] == 2 and pool.params["runs"] == ["A", "B", "C"]
        assert set(pool.params["checksums"]) == {"A", "B", "C"}
        assert pool.created_at is not None
        assert session.scalar(select(func.count()).where(PoolRun.pool_id == pool.id)) == 3
        docs = {q: [d[0] for d in rows] for q, rows in entries(session, pool).items()}
        assert docs == {"1": ["a1", "c1", "d1", "a2", "b2"], "2": ["x1", "x2"]}
        assert [e.docno for e in pools.pool_documents(session, pool, "2")] == ["x1", "x2"]
        assert pools.latest_pool(session, campaign).id == pool.id


def test_pool_of_chosen_runs_and_refusals(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=1, runs=["C"], seed=1)
        assert {q: [d[0] for d in r] for q, r in entries(session, pool).items()} == {"1": ["c1"]}
        with pytest.raises(NotFound, match="no run"):
            pools.build_pool(session, campaign, runs=["C", "Z"])
        with pytest.raises(ServiceError, match="unknown pooling strategy 'nope'"):
            pools.build_pool(session, campaign, strategy="nope")
        with pytest.raises(ServiceError, match="'mtf' is an adaptive method, not a pooling"):
            pools.build_pool(session, campaign, strategy="mtf")
        with pytest.raises(ServiceError, match="needs a positive budget"):
            pools.build_pool(session, campaign, strategy="take")
        with pytest.raises(ServiceError, match="unknown fusion"):
            pools.build_pool(session, campaign, strategy="fusion", budget=3, fusion="condorcet")
        with pytest.raises(ServiceError, match="increasing"):
            pools.build_pool(session, campaign, strategy="stratified", strata="5:1,2:1")
        with pytest.raises(ServiceError, match="depth must be"):
            pools.build_pool(session, campaign, depth=0)


def test_non_contributing_runs_are_left_out_by_default(store, files, tmp_path):
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c2")
        topic_imports.import_topics(session, campaign, files["topics"])
        run_imports.import_runs(session, campaign, [files["A"]])
        run_imports.import_runs(session, campaign, [files["C"]], contributes=False)
        pool = pools.build_pool(session, campaign, depth=1, seed=0)
        assert pool.params["runs"] == ["A"]


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "stratified", "strata": "1:1.0,2:0.5,5:0.34"},
        {"strategy": "take", "budget": 4, "fair": True},
        {"strategy": "fusion", "budget": 3, "fusion": "borda"},
    ],
)
def test_a_pool_is_rebuilt_identically_from_its_recorded_seed(store, campaign_id, options):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        first = pools.build_pool(session, campaign, **options)  # seed drawn and recorded
        params = {k: v for k, v in first.params.items() if k not in ("runs", "checksums")}
        rebuilt = pools.build_pool(
            session,
            campaign,
            strategy=first.strategy,
            runs=first.params["runs"],
            seed=first.seed,
            **{k: v for k, v in params.items() if k in ("budget", "fair", "fusion", "strata")},
        )
        assert rebuilt.params == first.params
        assert entries(session, rebuilt) == entries(session, first)


def test_stratified_pool_entries(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(
            session, campaign, strategy="stratified", strata="1:1.0,2:0.5,5:0.34", seed=9
        )
        rows = {d[0]: d for d in entries(session, pool)["1"]}
        assert {d: r[4] for d, r in rows.items()} == {
            "a1": 1,
            "c1": 1,
            "d1": 1,
            "a2": 2,
            "b2": 2,
            "a3": 3,
            "c3": 3,
            "b4": 3,
            "d2": 3,
        }
        assert sum(r[5] for r in rows.values()) == 3 + 1 + 2
        assert rows["a2"][6] == rows["d2"][6] == 0.5


def test_extending_a_pool_adds_only_new_documents_and_keeps_judgements(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=2, runs=["A", "B"], seed=5)
        before = entries(session, pool)
        user = User(username="ann", password_hash="x")
        session.add(user)
        session.flush()
        session.add(
            Judgement(campaign_id=campaign.id, qid="1", docno="d1", user_id=user.id, grade=2)
        )
        added = pools.extend_pool(session, pool, ["C"])
        # C's top 2 is c1, d1: d1 is already pooled
        assert added == 1
        after = entries(session, pool)
        assert after["1"][: len(before["1"])] == before["1"]
        assert [row[:2] for row in after["1"][len(before["1"]) :]] == [("c1", 1)]
        assert after["2"] == before["2"]
        docnos = [row[0] for row in after["1"]]
        assert len(docnos) == len(set(docnos))
        assert pool.params["runs"] == ["A", "B", "C"]
        assert (
            pool.params["extensions"][0]["runs"] == ["C"]
            and pool.params["extensions"][0]["build"] == 1
        )
        assert session.scalar(select(func.count()).select_from(Judgement)) == 1
        builds = session.execute(select(PoolRun.build).where(PoolRun.pool_id == pool.id)).scalars()
        assert sorted(builds) == [0, 0, 1]
        with pytest.raises(ServiceError, match="already in pool"):
            pools.extend_pool(session, pool, ["C"])


def test_extending_a_stratified_pool_samples_only_the_new_documents(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(
            session, campaign, strategy="stratified", strata="2:1.0,5:1.0", runs=["A"], seed=3
        )
        before = {row[0] for row in entries(session, pool)["1"]}
        assert before == {"a1", "a2", "a3", "d1", "d2"}
        added = pools.extend_pool(session, pool, ["B", "C"])
        new = [row for row in entries(session, pool)["1"] if row[1] == 1]
        assert added == 4  # topic 2: B's x2 is already pooled
        assert {row[0] for row in new} == {"b2", "b4", "c1", "c3"}
        assert all(row[5] for row in new)  # rates 1.0: all sampled


def test_pool_statistics_by_hand(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=2, seed=5)
        stats = pool_statistics.pool_statistics(session, pool)
    assert stats["topics"] == {"1": {"size": 5, "sampled": 5}, "2": {"size": 2, "sampled": 2}}
    assert stats["size"] == 7
    # topic 1 within depth 2: A {a1, a2}, B {d1, b2}, C {c1, d1}; topic 2: A {x1, x2}, B {x2}
    assert stats["contributed_per_run"] == {"A": 4, "B": 3, "C": 2}
    assert stats["unique_per_run"] == {"A": 3, "B": 1, "C": 1}
    assert stats["overlap"]["B"]["C"] == pytest.approx(1 / 4)  # {d1} of {d1, b2, c1}+{x2}
    assert stats["overlap"]["A"]["B"] == pytest.approx(1 / 6)  # {x2} of 4 + 3 - 1
    assert stats["growth_by_depth"] == [3 + 2, 5 + 2]


def test_documents_without_text(store, files, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=1, seed=0)
        assert pools.documents_without_text(session, pool) == ["a1", "c1", "d1", "x1", "x2"]
        document_imports.import_documents(session, campaign, [files["docs"]])
        assert pools.documents_without_text(session, pool) == ["c1", "x1", "x2"]
        more = files["docs"].with_name("more.jsonl")
        more.write_text(
            '{"docno": "c1", "title": "C one", "text": ""}\n{"docno": "x1", "text": "x"}\n'
        )
        document_imports.import_documents(session, campaign, [more])
        assert pools.documents_without_text(session, pool) == ["x2"]  # c1: a title is text


def test_pool_counts(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(
            session, campaign, strategy="stratified", strata="1:1.0,5:0.5", runs=["A"], seed=2
        )
        # topic 1: a1 | a2 a3 d1 d2 (2 of 4 sampled); topic 2: x1 | x2 (1 of 1)
        assert pools.pool_counts(session, pool) == (7, 1 + 2 + 1 + 1, 2)


def test_a_pool_name_longer_than_its_column_is_refused_before_anything_is_written(
    store, campaign_id
):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pools.build_pool(session, campaign, depth=1, name="n" * 120)
        with pytest.raises(ServiceError, match="pool name of at most 120 characters"):
            pools.build_pool(session, campaign, depth=1, name="n" * 121)
        assert session.scalar(select(func.count()).select_from(PoolRun)) == 3


@pytest.mark.parametrize("count", [1, 2, 3, 150, 299, 300, 301, 1000])
def test_the_head_of_a_docnos_blob_is_its_first_docnos(count):
    """decode_docnos_head inflates only part of the stream (in steps when docnos are long),
    and gives every docno when asked for more than there are."""
    docnos = [f"doc-{i}-{'é' * (i % 50)}-{'x' * (i % 97)}".encode() for i in range(300)]
    blob = zlib.compress(b"\n".join(docnos), ZLIB_LEVEL)
    assert decode_docnos_head(blob, count) == docnos[:count]
