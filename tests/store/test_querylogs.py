"""Query logs in the store: anonymised import, preferences, agreement, evaluation, pool order."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tracemalloc

import pytest
from sqlalchemy import func, select

from tests.web.conftest import FAST_HASH
from workbench import stats
from workbench.querylog import keyed_hash
from workbench.services import (
    assignments,
    campaigns,
    pools,
    qrels_imports,
    run_imports,
    topic_imports,
    users,
)
from workbench.services import querylog_import as log_import
from workbench.services import querylogs as service
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import PoolEntry, QueryLog, QueryLogImpression, utcnow
from workbench.trec import TrecFormatError

from .conftest import row_counts

KEY = bytes(range(32))


def line(user, query, results, clicked, t=100.0, session="s"):
    return json.dumps(
        {
            "session": f"{session}-{user}",
            "user": user,
            "query": query,
            "time": t,
            "results": [{"docno": d, "rank": r} for r, d in enumerate(results, 1)],
            "clicks": [{"docno": d, "time": t + 5 + k} for k, d in enumerate(clicked)],
        }
    )


LOG = [
    line("u1", "first topic", ["a1", "d1", "a2"], ["d1"]),
    line("u2", "FIRST  topic", ["a1", "d1", "a2"], ["d1"]),
    line("u3", "first topic", ["d1", "a1", "a2"], ["a2"]),
    line("u1", "rare thing", ["x1"], ["x1"], t=200.0),
    line("u2", "mail me@x.org", ["x2"], [], t=300.0),
    line("u3", "mail you@y.org", ["x2"], ["x2"], t=300.0),
]


@pytest.fixture
def campaign_id(store, files) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(
            session, "c1", scale="0=No,1=Yes,2=Very", relevance_level=1
        )
        topic_imports.import_topics(session, campaign, files["topics"])
        run_imports.import_runs(session, campaign, [files["A"], files["B"], files["C"]])
        qrels_imports.import_qrels(session, campaign, files["qrels"], name="official")
        return campaign.id


@pytest.fixture
def log_path(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(x + "\n" for x in LOG), encoding="utf-8")
    return path


def imported(store, campaign_id, path, **kw):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        return log_import.import_query_log(
            session, campaign, path, key=KEY, min_users=kw.pop("min_users", 2), **kw
        )


def test_import_anonymises_maps_topics_and_reports_each_rule(store, campaign_id, log_path):
    summary = imported(store, campaign_id, log_path)
    assert (summary.name, summary.impressions, summary.mapped_impressions) == ("log.jsonl", 5, 3)
    assert (summary.topics, summary.unmapped_queries, summary.min_users) == (1, 1, 2)
    report = summary.anonymisation
    assert report.read == (6, 3, 3) and report.kept == (5, 3, 2)
    by_rule = {
        r.rule.split()[0]: (r.action, r.impressions, r.users, r.queries) for r in report.rules
    }
    assert by_rule["user"] == ("replaced", 6, 3, 0)
    assert by_rule["e-mail"] == ("masked", 2, 2, 2)
    assert by_rule["queries"] == ("dropped", 1, 0, 1)
    with store.session() as session:
        rows = session.scalars(select(QueryLogImpression).order_by(QueryLogImpression.line)).all()
        assert [r.line for r in rows] == [1, 2, 3, 5, 6]
        assert rows[0].user_hash == keyed_hash(KEY, "u1") and rows[0].qid == "1"
        assert rows[1].query == "FIRST topic" and rows[1].query_key == "first topic"
        assert rows[3].query == "mail [email]" and rows[3].qid is None
        stored = json.dumps([(r.session, r.user_hash, r.query) for r in rows])
        assert "u1" not in stored and "me@x.org" not in stored
        log = session.scalar(select(QueryLog))
        assert log.key_fingerprint != KEY.hex() and KEY.hex() not in json.dumps(log.report)
        campaign = campaigns.get_campaign(session, campaign_id)
        assert service.list_query_logs(session, campaign) == [summary]
        assert service.query_log_summary(session, campaign, "log.jsonl") == summary
        with pytest.raises(NotFound):
            service.query_log_summary(session, campaign, "nope")


def test_a_bad_line_or_a_refused_import_changes_nothing(store, campaign_id, log_path, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(LOG[0] + "\n" + LOG[1].replace('"a2"', '"a1"') + "\n", encoding="utf-8")
    with store.session() as session:
        before = row_counts(session)
    with pytest.raises(TrecFormatError, match=r"bad\.jsonl:2: expected each docno once"):
        imported(store, campaign_id, bad)
    imported(store, campaign_id, log_path)
    with store.session() as session:
        after = row_counts(session)
    with pytest.raises(ServiceError, match="already has a query log named"):
        imported(store, campaign_id, log_path)
    with pytest.raises(ServiceError, match=r"k .* must be >= 1"):
        imported(store, campaign_id, log_path, name="other", min_users=0)
    with store.session() as session:
        assert row_counts(session) == after
        assert after["query_log_impressions"] == before["query_log_impressions"] + 5


def test_mapping_file_and_ambiguous_titles(store, campaign_id, log_path, tmp_path, files):
    mapping = tmp_path / "map.tsv"
    mapping.write_text("2\tmail [email]\n1\tFirst Topic\n", encoding="utf-8")
    summary = imported(store, campaign_id, log_path, mapping=mapping, name="mapped")
    assert (summary.mapped_impressions, summary.topics, summary.unmapped_queries) == (5, 2, 0)
    mapping.write_text("9\tfirst topic\n", encoding="utf-8")
    with pytest.raises(ServiceError, match="topics not in campaign"):
        imported(store, campaign_id, log_path, mapping=mapping, name="bad map")
    files["topics"].write_text("1\tfirst topic\n2\tFirst  Topic\n")
    with store.session() as session:
        topic_imports.import_topics(
            session, campaigns.get_campaign(session, campaign_id), files["topics"]
        )
    with pytest.raises(ServiceError, match="same normalised title"):
        imported(store, campaign_id, log_path, name="ambiguous")


def test_preferences_agreement_and_prefs_export(store, campaign_id, log_path):
    imported(store, campaign_id, log_path)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        log = service.get_query_log(session, campaign, "log.jsonl")
        prefs = service.click_preferences(session, log, service.PreferenceOptions())
        assert [(p.query, p.preferred, p.other, p.support) for p in prefs] == [
            (
                "1",
                "d1",
                "a1",
                2,
            )
        ]
        loose = service.click_preferences(session, log, service.PreferenceOptions(min_support=1))
        assert [(p.preferred, p.other) for p in loose] == [("a2", "a1"), ("a2", "d1"), ("d1", "a1")]
        text = service.export_prefs(session, campaign, "log.jsonl", service.PreferenceOptions())
        assert text == "1 p1 1 d1 1\n1 p1 1 a1 0\n"
        agreement = service.click_agreement(
            session,
            campaign,
            service.ClickComparison(
                "log.jsonl", "official", service.PreferenceOptions(min_support=1)
            ),
        )
        # d1 (2) > a1 (1) agrees; a2 is unjudged
        assert (agreement.consistent, agreement.comparable, agreement.share) == (1, 1, 1.0)
        assert agreement.topics[0].qid == "1" and agreement.interval == (1.0, 1.0)
        assert agreement.qrels == "qrels set official" and agreement.preferences == 3
        with pytest.raises(ServiceError, match="unknown preference strategy"):
            service.PreferenceOptions(strategy="skip-all")
        with pytest.raises(ServiceError, match="min support"):
            service.PreferenceOptions(min_support=0)


def test_deviation_threshold_filters_clicks(store, campaign_id, log_path):
    imported(store, campaign_id, log_path)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        log = service.get_query_log(session, campaign, "log.jsonl")
        # E(1) = 1/5 (x2 clicked at rank 1 of five impressions), E(2) = 2/3, E(3) = 1/3:
        # CD(d1, 2) = 2/2 - 2/3 = 1/3, CD(a2, 3) = 1/3 - 1/3 = 0
        options = service.PreferenceOptions(min_support=1, deviation_threshold=0.1)
        kept = service.click_preferences(session, log, options)
        assert [(p.preferred, p.other, p.support) for p in kept] == [("d1", "a1", 2)]


def test_runs_evaluated_on_clicks_beside_the_assessors(store, campaign_id, log_path):
    imported(store, campaign_id, log_path)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = service.click_evaluation(
            session, campaign, service.ClickComparison("log.jsonl", "official")
        )
        by_tag = {r.tag: r for r in report.runs}
        # d1 > a1: A ranks a1 first (0), B ranks d1 first (1), C retrieves d1 only (implied, 1)
        assert {t: r.clicks for t, r in by_tag.items()} == {"A": 0.0, "B": 1.0, "C": 1.0}
        assert all(r.click_topics == 1 for r in report.runs)
        assert (report.preference_topics, report.campaign_topics) == (1, 2)
        assessor = {t: r.assessors for t, r in by_tag.items()}
        clicks = {t: r.clicks for t, r in by_tag.items()}
        assert report.kendall_tau == pytest.approx(stats.kendall_tau(assessor, clicks))
        assert report.clicks_order == ("B", "C", "A")
        assert report.measure == "map" and report.prefs_measure == "prefs_simp"
        with pytest.raises(ServiceError, match="no click preferences"):
            service.click_evaluation(
                session,
                campaign,
                service.ClickComparison(
                    "log.jsonl", "official", service.PreferenceOptions(min_support=5)
                ),
            )


def test_pool_prioritised_by_click_deviation(store, campaign_id, log_path):
    imported(store, campaign_id, log_path)
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, depth=3)
        result = service.prioritise_pool(session, campaign, pool.number, "log.jsonl")
        priority = {
            (e.qid, e.docno): e.priority
            for e in session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id))
        }
        assert result.entries == len(priority) and result.shown == 3
        # E(1) = 1/5, E(2) = 2/3, E(3) = 1/3 (see above); d1: 2 clicks at rank 2, 1 shown at 1
        assert priority[("1", "d1")] == pytest.approx((2 - (2 * 2 / 3 + 1 / 5)) / 3)
        assert priority[("1", "a1")] == pytest.approx((0 - (2 / 5 + 2 / 3)) / 3)
        assert priority[("1", "a2")] == pytest.approx((1 - 3 / 3) / 3)
        assert priority[("2", "x1")] == service.UNSHOWN_PRIORITY
        assert "click deviation" in pool.params["priority"]
        user = users.create_user(session, "ann", "a-long-password", hash_method=FAST_HASH)
        assignments.assign(session, pool, "1", user, order="priority")
        with pytest.raises(ServiceError, match="already has assignments"):
            service.prioritise_pool(session, campaign, pool.number, "log.jsonl")
        with pytest.raises(NotFound):
            service.prioritise_pool(session, campaign, pool.number + 99, "log.jsonl")


# ------------------------------------------------------------------ imports in short steps


def big_log(path, impressions: int, *, queries: int = 40, users: int = 200):
    """A log of `impressions` lines over a fixed vocabulary of queries and users."""
    with path.open("w") as out:
        for k in range(impressions):
            query = "first topic" if k % queries == 0 else f"query number {k % queries}"
            results = [f"d{(k + r) % 300}" for r in range(10)]
            out.write(line(f"u{k % users}", query, results, results[k % 3 :: 4], t=k) + "\n")
    return path


def test_an_import_in_steps_is_invisible_until_done_and_stored_like_one_in_a_transaction(
    store, campaign_id, log_path, monkeypatch
):
    seen_while_importing = []

    def progress(text: str) -> None:
        with store.read_session() as session:
            campaign = campaigns.get_campaign(session, campaign_id)
            seen_while_importing.append(
                ([s.name for s in service.list_query_logs(session, campaign)], text)
            )

    monkeypatch.setattr(log_import, "BATCH", 2)  # three write steps for the six kept lines
    source = log_import.LogSource(log_path, KEY, min_users=2)
    summary = log_import.import_query_log_in_steps(store, campaign_id, source, progress=progress)
    assert [names for names, _ in seen_while_importing] == [[]] * 4
    assert [text for _, text in seen_while_importing][-1] == "5 impressions stored"
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        in_one = log_import.import_query_log(
            session, campaign, log_path, key=KEY, min_users=2, name="again"
        )
        rows = {
            name: sorted(
                (i.line, i.session, i.user_hash, i.query, i.query_key, i.qid, i.results, i.clicks)
                for i in session.scalars(
                    select(QueryLogImpression)
                    .join(QueryLog, QueryLog.id == QueryLogImpression.query_log_id)
                    .where(QueryLog.name == name)
                )
            )
            for name in ("log.jsonl", "again")
        }
    assert rows["log.jsonl"] == rows["again"] and len(rows["again"]) == 5
    assert summary.anonymisation == in_one.anonymisation
    assert (summary.impressions, summary.mapped_impressions) == (5, 3)


def test_a_failed_or_dead_import_in_steps_leaves_nothing(store, campaign_id, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(LOG) + "\n{not json}\n")
    with pytest.raises(TrecFormatError, match=r"bad\.jsonl:7"):
        log_import.import_query_log_in_steps(store, campaign_id, log_import.LogSource(bad, KEY))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with store.session() as session:
        log = QueryLog(
            campaign_id=campaign_id,
            name="log.jsonl",
            key_fingerprint="x",
            min_users=2,
            report={},
            state="importing",
            owner=f"{socket.gethostname()} {dead} 1",
            heartbeat_at=utcnow(),
        )
        session.add(log)
        session.flush()
        session.add(
            QueryLogImpression(
                query_log_id=log.id,
                line=1,
                session="s",
                user_hash="u",
                query="q",
                query_key="q",
                time=1.0,
                results=["a"],
                clicks=[],
            )
        )
        campaign = campaigns.get_campaign(session, campaign_id)
        assert service.list_query_logs(session, campaign) == []  # an import under way
        with pytest.raises(NotFound):
            service.get_query_log(session, campaign, "log.jsonl")
    good = tmp_path / "log.jsonl"
    good.write_text("\n".join(LOG) + "\n")
    summary = log_import.import_query_log_in_steps(
        store, campaign_id, log_import.LogSource(good, KEY, min_users=2)
    )
    assert summary.impressions == 5  # the dead import (same name) was cleared first
    with store.read_session() as session:
        assert session.scalar(select(func.count()).select_from(QueryLogImpression)) == 5
        assert session.scalars(select(QueryLog.state)).all() == ["ready"]


def test_an_import_in_steps_holds_a_batch_in_memory_not_the_log(
    store, campaign_id, tmp_path, monkeypatch
):
    """The import's peak memory (tracemalloc) is the same for a log 4 times longer: a batch
    of rows and the distinct queries and users, never the whole log (it held every
    impression: 573 MB for 200,000). Batches of 200 (not 2,000: the same property at a tenth
    of the time under tracemalloc): the peaks were 0.85 and 0.82 MB, and 1.3 and 4.4 MB
    (3.5 times) with every batch kept, as with batches of 500 (2.1 and 1.9 MB; 3.0 and
    11.0 MB kept), at 1.6 s of CPU instead of 4.0."""
    monkeypatch.setattr(log_import, "BATCH", 200)
    peaks = []
    for number, impressions in enumerate((3 * log_import.BATCH, 12 * log_import.BATCH)):
        path = big_log(tmp_path / f"log{number}.jsonl", impressions)
        source = log_import.LogSource(path, KEY, min_users=2, name=f"log{number}")
        tracemalloc.start()
        try:
            summary = log_import.import_query_log_in_steps(store, campaign_id, source)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert summary.impressions == impressions
    assert peaks[1] < 1.2 * peaks[0], peaks
