"""Browsing a campaign: topics, documents, runs, one assessor's labels, the judgement log."""

from __future__ import annotations

import re

import pytest

from tests.web.conftest import World, get_store_of
from workbench.services import browse, campaigns
from workbench.services.errors import NotFound, ServiceError


def _judge(as_user, world: World, who: str, qid: str, body: dict) -> None:
    url = f"/api/v1/assignments/{world.assignment[who, qid]}/judgements"
    assert as_user(who).post(url, json=body).status_code == 201


@pytest.fixture
def judged(app, world: World, as_user) -> World:
    _judge(as_user, world, "alice", "T1", {"docno": "D1", "grade": 2})
    _judge(as_user, world, "alice", "T1", {"docno": "D1", "grade": 1, "comment": "on reflection"})
    _judge(as_user, world, "bob", "T1", {"docno": "D1", "grade": 0})
    _judge(as_user, world, "bob", "T1", {"docno": "D2", "grade": None, "cannot_judge": "foreign"})
    return world


def test_topics_with_pool_judged_and_assessor_counts(app, judged: World) -> None:
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, judged.campaign_id)
        page = browse.topics(session, campaign)
        assert [t.qid for t in page.rows] == ["T1", "T2"] and page.total == 2
        t1 = page.rows[0]
        assert (t1.title, t1.judged, t1.assessors) == ("solar panel recycling", 1, ("alice", "bob"))
        assert t1.pooled == 6  # depth 3: D1-D3 from runA, D8-D6 from runB
        found = browse.topics(session, campaign, query="COLONY")
        assert [t.qid for t in found.rows] == ["T2"]


def test_document_search_is_literal_and_paged(app, judged: World) -> None:
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, judged.campaign_id)
        everything = browse.documents(session, campaign, limit=3)
        assert [d.docno for d in everything.rows] == ["D1", "D2", "D3"]
        assert (everything.total, everything.next_offset, everything.previous_offset) == (
            8,
            3,
            None,
        )
        last = browse.documents(session, campaign, offset=6, limit=3)
        assert [d.docno for d in last.rows] == ["D7", "D8"] and last.next_offset is None
        assert (last.first, last.last, last.previous_offset) == (7, 8, 3)
        assert [d.docno for d in browse.documents(session, campaign, query="d5").rows] == ["D5"]
        assert browse.documents(session, campaign, query="100%").total == 0  # % is literal
        assert browse.documents(session, campaign, query="Text _ about").total == 0
        with pytest.raises(ServiceError, match="limit must be between 1 and 200"):
            browse.documents(session, campaign, limit=500)
        with pytest.raises(ServiceError, match="search text is limited"):
            browse.documents(session, campaign, query="x" * 201)


def test_runs_list_lines_per_topic_and_missing_topics(app, world: World) -> None:
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        rows = browse.runs(session, campaign)
    assert [(r.tag, r.lines, r.per_topic, r.missing_topics) for r in rows] == [
        ("runA", 12, {"T1": 6, "T2": 6}, ()),
        ("runB", 12, {"T1": 6, "T2": 6}, ()),
    ]


def test_the_log_filters_by_assessor_reason_comment_and_latest(app, judged: World) -> None:
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, judged.campaign_id)

        def log(**chosen):  # type: ignore[no-untyped-def]
            page = browse.judgement_log(session, campaign, browse.LogFilter(**chosen))
            return [(j.assessor, j.docno, j.grade) for j in page.rows]

        assert log() == [
            ("alice", "D1", 2),
            ("alice", "D1", 1),
            ("bob", "D1", 0),
            ("bob", "D2", None),
        ]
        assert log(assessor="alice", current_only=True) == [("alice", "D1", 1)]
        assert log(cannot_judge_only=True) == [("bob", "D2", None)]
        assert log(with_comment_only=True) == [("alice", "D1", 1)]
        assert log(grade=0) == [("bob", "D1", 0)]
        assert log(docno="D2", qid="T2") == []
        view = browse.document(session, campaign, "D1")
        assert [j.assessor for j in view.judgements] == ["alice", "alice", "bob"]
        assert view.judgements_total == 3
        with pytest.raises(NotFound, match="no document 'D99'"):
            browse.document(session, campaign, "D99")


def test_pages_show_the_data_escaped(as_user, judged: World) -> None:
    admin = as_user("admin")
    c = judged.campaign_id
    topics = admin.get(f"/admin/campaigns/{c}/topics?q=recycl").text
    assert "solar panel recycling" in topics and "honeybee" not in topics
    assert "&lt;b&gt;markup&lt;/b&gt;" in topics and "<b>markup</b>" not in topics
    documents = admin.get(f"/admin/campaigns/{c}/documents?limit=2").text
    assert "1–2 of 8" in documents and 'rel="next"' in documents
    assert "<script>alert(1)</script>" not in documents
    document = admin.get(f"/admin/campaigns/{c}/documents/D1").text
    assert "on reflection" in document and document.count("<tr>") == 4  # header + 3 events
    runs = admin.get(f"/admin/campaigns/{c}/runs").text
    assert "runA" in runs and "min 6, max 6" in runs
    labels = admin.get(f"/admin/campaigns/{c}/judgements?assessor=bob").text
    assert "Labels, comments and reasons of bob" in labels and "foreign" in labels
    assert "on reflection" not in labels
    assert admin.get(f"/admin/campaigns/{c}/judgements?grade=x").status_code == 400
    assert admin.get(f"/admin/campaigns/{c}/documents/D99").status_code == 404


def test_a_runs_page_shows_its_ir_metadata_escaped(app, world: World, as_user, tmp_path) -> None:
    """The run's PRIMAD annotations on its page and in the runs listing, text escaped."""
    from workbench.services import run_imports

    path = tmp_path / "runM.txt"
    path.write_text(
        "# ir_metadata.start\n# tag: runM\n# actor:\n#   team: <script>x</script>\n"
        "# method:\n#   retrieval:\n#     - name: bm25\n# ir_metadata.end\n"
        "T1 Q0 D1 1 2.0 runM\n"
    )
    run_imports.import_runs_in_steps(get_store_of(app), world.campaign_id, [path])
    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{world.campaign_id}/runs/runM")
    assert page.status_code == 200
    assert "&lt;script&gt;x&lt;/script&gt;" in page.text and "<script>x" not in page.text
    assert "<dt>method</dt>" in page.text and "bm25" in page.text
    listing = admin.get(f"/admin/campaigns/{world.campaign_id}/runs").text
    assert "actor: &lt;script&gt;x&lt;/script&gt;; method: bm25" not in listing  # PRIMAD order
    assert "method: bm25; actor: &lt;script&gt;x&lt;/script&gt;" in listing
    plain = admin.get(f"/admin/campaigns/{world.campaign_id}/runs/runA").text
    assert "had no <code># ir_metadata.start</code> block" in plain
    assert admin.get(f"/admin/campaigns/{world.campaign_id}/runs/nope").status_code == 404
    assessor = as_user("alice").get(f"/admin/campaigns/{world.campaign_id}/runs/runM")
    assert assessor.status_code == 403


def test_a_search_counts_its_matches_up_to_a_bound(
    app, world: World, as_user, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond COUNTED matches the page says "more than" and still offers the next window; a
    listing without a search is counted whole."""
    monkeypatch.setattr(browse, "COUNTED", 3)
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        everything = browse.documents(session, campaign, limit=2)
        searched = browse.documents(session, campaign, query="d", limit=2)
        few = browse.documents(session, campaign, query="d5", limit=2)
    assert (everything.total, everything.more) == (8, False)
    assert (searched.total, searched.more, searched.next_offset) == (3, True, 2)
    assert [d.docno for d in searched.rows] == [d.docno for d in everything.rows]
    assert (few.total, few.more, few.next_offset) == (1, False, None)
    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{world.campaign_id}/documents?q=d&limit=2").text
    assert "1–2 of more than 3" in page and 'rel="next"' in page
    one = admin.get(f"/admin/campaigns/{world.campaign_id}/documents?q=d5").text
    assert re.search(r"1–1 of 1\s", one) and "more than" not in one
