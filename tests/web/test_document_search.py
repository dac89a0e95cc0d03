"""The browse page's document search reads the text index (SQLite FTS5 kept by triggers,
PostgreSQL's GIN full-text index), follows every change of the documents, is bounded, and
says when it lists fewer documents than match."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import delete, select, text

from tests.web.conftest import World, get_store_of
from workbench.services import browse, campaigns
from workbench.store import search
from workbench.store.models import Campaign, Document


def _found(app: Flask, campaign_id: int, query: str) -> list[str]:
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        return [d.docno for d in browse.documents(session, campaign, query=query).rows]


def test_the_index_follows_edits_deletions_and_other_campaigns(app: Flask, world: World) -> None:
    store = get_store_of(app)
    cid = world.campaign_id
    with store.session() as s:
        other = Campaign(name="c2")
        s.add(other)
        s.flush()
        other_id = other.id
        s.add(Document(campaign_id=other_id, docno="E1", title="Zebra", text="crossing", extra={}))
        chosen = select(Document).where(Document.campaign_id == cid, Document.docno == "D2")
        edited = s.scalar(chosen)
        assert edited is not None
        edited.text = "zebra stripes"  # replaced text: the old words go, the new ones come
        s.execute(delete(Document).where(Document.campaign_id == cid, Document.docno == "D3"))
    assert _found(app, cid, "zebra") == ["D2"]  # not E1, another campaign's
    assert _found(app, other_id, "zebra crossing") == ["E1"]
    assert _found(app, cid, "recycling") == ["D1", "D4", "D5", "D6", "D7", "D8"]
    with store.session() as s:
        s.execute(delete(Campaign).where(Campaign.id == other_id))  # cascades to its documents
    assert _found(app, cid, "zebra") == ["D2"]
    with store.session() as s:
        if s.get_bind().dialect.name == "sqlite":  # the index agrees with its triggers' rows
            s.execute(text("INSERT INTO documents_fts(documents_fts) VALUES ('integrity-check')"))
            match = "SELECT count(*) FROM documents_fts WHERE documents_fts MATCH :words"
            assert s.scalar(text(match), {"words": "document"}) == 7  # D3 and E1 are gone
            assert s.scalar(text(match), {"words": "zebra"}) == 1


def test_only_the_start_of_a_long_text_is_searched_as_the_page_says(
    app: Flask, as_user, world: World
) -> None:
    filler = "lorem " * (search.INDEXED_CHARS // 6)
    with get_store_of(app).session() as s:
        s.add(Document(campaign_id=world.campaign_id, docno="LONG", title="Long one",
                       text=f"early {filler} late", extra={}))  # fmt: skip
    assert _found(app, world.campaign_id, "early") == ["LONG"]
    assert _found(app, world.campaign_id, "late") == []
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}/documents?q=late").text
    assert "Only the first 100,000 characters of each text are searched" in page
    assert "Nothing found" in page


def test_a_search_lists_at_most_max_matches_and_says_so(
    app: Flask, as_user, world: World, monkeypatch
) -> None:
    monkeypatch.setattr(browse, "MAX_MATCHES", 3)
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        first = browse.documents(session, campaign, query="solar", limit=2)
        assert [d.docno for d in first.rows] == ["D1", "D2"]
        assert (first.total, first.capped, first.next_offset) == (3, True, 2)
        rest = browse.documents(session, campaign, query="solar", offset=2, limit=2)
        assert [d.docno for d in rest.rows] == ["D3"] and rest.next_offset is None
        # the exact docno comes first, then the words' matches (without it again)
        both = browse.documents(session, campaign, query="D8", limit=5)
        assert [d.docno for d in both.rows] == ["D8"] and not both.capped
        few = browse.documents(session, campaign, query="5")
        assert [d.docno for d in few.rows] == ["D5"] and not few.capped
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}/documents?q=solar").text
    assert 'id="search-capped"' in page and "More documents match than the 3" in page
    assert "1–3 of 3" in page


def test_the_search_reads_the_index(app: Flask, world: World) -> None:
    with get_store_of(app).read_session() as s:
        words = search.words("Solar panel")
        assert words == ["solar", "panel"]
        statement, match = search._statement(s, words)
        values = {"match": match, "campaign": world.campaign_id, "exclude": -1}
        if s.get_bind().dialect.name == "sqlite":
            plan = [
                str(row[-1]) for row in s.execute(text(f"EXPLAIN QUERY PLAN {statement}"), values)
            ]
            assert plan[0].startswith("SCAN documents_fts VIRTUAL TABLE INDEX"), plan
            assert plan[1:] == ["SEARCH d USING INTEGER PRIMARY KEY (rowid=?)"], plan
        else:
            # the statement's text condition is the indexed expression (on a table this small
            # the planner prefers the campaign's index: ask for the text condition alone)
            assert search.PG_CONDITION in statement
            s.execute(text("SET LOCAL enable_seqscan = off"))
            alone = f"EXPLAIN SELECT documents.id FROM documents WHERE {search.PG_CONDITION}"
            plan = "\n".join(s.scalars(text(alone), {"match": match}))
            assert f"Bitmap Index Scan on {search.PG_INDEX}" in plan, plan
