"""Imports into a campaign: good files, and malformed ones leave the store exactly as it was."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sqlalchemy import select

from workbench import limits, trec
from workbench.services import campaigns, importing
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import Document, QrelsEntry, Run, RunTopic, Topic

from .conftest import row_counts, write_run


@pytest.fixture
def campaign_id(store, files) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        importing.import_topics(session, campaign, files["topics"])
        return campaign.id


def failed_import_changes_nothing(store, campaign_id, action, error=Exception, match=None):
    with store.session() as session:
        before = row_counts(session)
    with pytest.raises(error, match=match), store.session() as session:
        action(session, campaigns.get_campaign(session, campaign_id))
    with store.session() as session:
        assert row_counts(session) == before


def test_campaign_scale_parsing_and_lookup(store):
    assert campaigns.parse_scale("0=Not relevant,1=Relevant,2=Highly relevant") == [
        (0, "Not relevant", "0"),
        (1, "Relevant", "1"),
        (2, "Highly relevant", "2"),
    ]
    assert campaigns.parse_scale("1:Relevant:r, 0:Not relevant:n") == [
        (0, "Not relevant", "n"),
        (1, "Relevant", "r"),
    ]
    for bad, message in [
        ("a=Relevant,1=x", "integer value"),
        ("0=No,0=Again", "unique"),
        ("0:No:k,1:Yes:k", "unique"),
        ("1=Only", "at least two"),
        ("-1=Neg,1=Pos", "non-negative"),
    ]:
        with pytest.raises(ServiceError, match=message):
            campaigns.parse_scale(bad)
    with store.session() as session:
        created = campaigns.create_campaign(
            session, "graded", scale="0=No,1=Yes,3=Key", relevance_level=3
        )
        assert [(g.value, g.key) for g in created.grades] == [(0, "0"), (1, "1"), (3, "3")]
        with pytest.raises(ServiceError, match="already exists"):
            campaigns.create_campaign(session, "graded")
        with pytest.raises(ServiceError, match="not a grade"):
            campaigns.create_campaign(session, "other", relevance_level=5)
        assert campaigns.get_campaign(session, "graded").relevance_level == 3
        assert campaigns.get_campaign(session, created.id).name == "graded"
        assert campaigns.get_campaign(session, str(created.id)).name == "graded"
        assert [c.name for c in campaigns.list_campaigns(session)] == ["graded"]
        with pytest.raises(NotFound):
            campaigns.get_campaign(session, "missing")


def test_topics_import_adds_then_updates(store, files, campaign_id, tmp_path):
    again = tmp_path / "topics2.tsv"
    again.write_text("2\tsecond, revised\n3\tthird\n")
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = importing.import_topics(session, campaign, again)
        assert (report.added, report.updated) == (1, 1)
        titles = dict(session.execute(select(Topic.qid, Topic.title)).all())
    assert titles == {"1": "first topic", "2": "second, revised", "3": "third"}


def test_runs_are_stored_whole_and_load_back_identically(store, files, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = importing.import_runs(
            session, campaign, [files["A"], files["B"]], group="team1", contributes=False
        )
        assert (report.added, report.lines, report.files) == (2, 12, 2)
    with store.session() as session:
        run = session.scalar(select(Run).where(Run.tag == "A"))
        assert run.file_name == "runA.txt"
        assert run.checksum == hashlib.sha256(files["A"].read_bytes()).hexdigest()
        assert (run.group, run.contributes, run.line_count) == ("team1", False, 7)
        # one blob row per run and topic, never one row per line
        assert (
            session.scalar(
                select(RunTopic.n_lines).where(RunTopic.qid == "1", RunTopic.run_id == run.id)
            )
            == 5
        )
        loaded = importing.load_run(session, run)
    original = trec.read_run(files["A"])
    assert loaded.tag == "A" and loaded.n_lines == original.n_lines == 7
    assert loaded.topics() == original.topics()
    for qid in original.topics():
        mine, theirs = loaded.topic_lines(qid), original.topic_lines(qid)
        assert mine.docnos == theirs.docnos
        np.testing.assert_array_equal(mine.scores, theirs.scores)
        np.testing.assert_array_equal(mine.ranks, theirs.ranks)


def test_reimporting_a_tag_is_refused_unless_replacing(store, files, campaign_id, tmp_path):
    with store.session() as session:
        importing.import_runs(session, campaigns.get_campaign(session, campaign_id), [files["A"]])
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_runs(s, c, [files["B"], files["A"]]),
        ServiceError,
        "already has a run tagged 'A'",
    )
    shorter = write_run(tmp_path / "runA2.txt", "A", [("2", "y1", 1.0)])
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        old_id = session.scalar(select(Run.id).where(Run.tag == "A"))
        report = importing.import_runs(session, campaign, [shorter], replace=True)
        assert report.updated == 1
    with store.session() as session:
        run = session.scalar(select(Run).where(Run.tag == "A"))
        assert run.id == old_id and run.line_count == 1 and run.file_name == "runA2.txt"
        assert importing.load_run(session, run).to_dict() == {"2": {"y1": 1.0}}
        assert session.scalar(select(Run.id).where(Run.tag == "B")) is None


def test_same_tag_twice_in_one_import_is_refused(store, files, campaign_id, tmp_path):
    twin = write_run(tmp_path / "twin.txt", "A", [("1", "q", 1.0)])
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_runs(s, c, [files["A"], twin]),
        ServiceError,
        "also the tag of",
    )


def test_run_with_unknown_topics_lists_them_and_changes_nothing(
    store, files, campaign_id, tmp_path
):
    stray = write_run(
        tmp_path / "stray.txt", "S", [("1", "a", 2.0), ("9", "b", 1.0), ("404", "c", 1.0)]
    )
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_runs(s, c, [files["A"], stray]),
        ServiceError,
        r"names 2 topic\(s\) the campaign 'c1' lacks: 9, 404",
    )


def test_malformed_run_gives_the_format_error_and_changes_nothing(
    store, files, campaign_id, tmp_path
):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a 1 2.0 R\n1 Q0 b 2 high R\n")
    with pytest.raises(trec.TrecFormatError) as caught:
        trec.read_run(bad)
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_runs(s, c, [files["A"], bad]),
        trec.TrecFormatError,
        f"{bad}:2: ",
    )
    assert caught.value.line_number == 2


def test_documents_import_streams_updates_and_filters(store, files, campaign_id, tmp_path):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = importing.import_documents(session, campaign, [files["docs"]])
        assert (report.added, report.updated) == (3, 0)
    newer = tmp_path / "newer.jsonl"
    newer.write_text('{"docno": "d1", "text": "delta 2"}\n{"docno": "d1", "text": "dup"}\n')
    with store.session() as session:
        report = importing.import_documents(
            session, campaigns.get_campaign(session, campaign_id), [newer]
        )
        assert (report.added, report.updated) == (0, 1)
        assert any("more than once" in w for w in report.warnings)
        texts = dict(session.execute(select(Document.docno, Document.text)).all())
    assert texts == {"a1": "alpha", "d1": "delta 2", "zz": "never pooled"}


def test_documents_only_pooled_and_missing_text_warning(store, files, campaign_id):
    from workbench.services import pools

    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        importing.import_runs(session, campaign, [files["A"], files["B"], files["C"]])
        pools.build_pool(session, campaign, depth=1, seed=1)  # topic 1: a1 d1 c1; topic 2: x1 x2
        report = importing.import_documents(session, campaign, [files["docs"]], only_pooled=True)
        assert (report.added, report.skipped) == (2, 1)
        assert report.warnings == [
            "3 pooled document(s) of pool 1 have no text in the store: c1, x1, x2"
        ]


def test_malformed_documents_change_nothing(store, files, campaign_id, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"docno": "ok", "text": "x"}\n{"docno": "broken"\n')
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_documents(s, c, [files["docs"], bad]),
        trec.TrecFormatError,
        f"{bad}:2: expected a JSON object",
    )


def test_qrels_import_and_its_failures(store, files, campaign_id, tmp_path):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = importing.import_qrels(session, campaign, files["qrels"], name="official")
        assert report.added == 3 and report.warnings == []
        entries = session.execute(select(QrelsEntry.qid, QrelsEntry.docno, QrelsEntry.rel)).all()
        assert sorted(entries) == [("1", "a1", 1), ("1", "d1", 2), ("2", "x2", 0)]
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_qrels(s, c, files["qrels"], name="official"),
        ServiceError,
        "already has qrels named 'official'",
    )
    bad = tmp_path / "bad_qrels"
    bad.write_text("1 0 a 1\n1 0 b\n")
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_qrels(s, c, bad),
        trec.TrecFormatError,
        f"{bad}:2:",
    )
    other = tmp_path / "other_qrels"
    other.write_text("1 0 a 1\n77 0 b 0\n")
    with store.session() as session:
        report = importing.import_qrels(
            session, campaigns.get_campaign(session, campaign_id), other
        )
        assert report.warnings == ["1 qrels topic(s) are not topics of the campaign: 77"]


def test_malformed_topics_change_nothing(store, files, campaign_id, tmp_path):
    bad = tmp_path / "topics.jsonl"
    bad.write_text('{"qid": "9", "title": "fine"}\n{"title": "no id"}\n')
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_topics(s, c, bad),
        trec.TrecFormatError,
        f"{bad}:2: expected",
    )


def test_ids_as_long_as_their_columns_are_stored_and_longer_ones_refused(
    store, files, campaign_id, tmp_path
):
    """At the limit: stored and read back whole (PostgreSQL too); one over: a clear error."""
    qid, docno, tag = "1", "d" * limits.DOCNO, "t" * limits.RUN_TAG
    at_limit = write_run(tmp_path / "at_limit.txt", tag, [(qid, docno, 1.0)])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{qid} {'i' * limits.QRELS_ITERATION} {docno} 1\n")
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        importing.import_runs(session, campaign, [at_limit], group="g" * limits.RUN_GROUP)
        importing.import_qrels(session, campaign, qrels, name="n" * limits.QRELS_SET_NAME)
        stored = session.scalar(select(Run).where(Run.tag == tag))
        assert importing.load_run(session, stored).topic_lines(qid).docnos == [docno]
        assert session.scalar(select(QrelsEntry.docno)) == docno
    over = [
        ("docno", write_run(tmp_path / "d.txt", "r", [(qid, docno + "d", 1.0)]), {}),
        ("run tag", write_run(tmp_path / "t.txt", tag + "t", [(qid, "x", 1.0)]), {}),
        (
            "run group",
            write_run(tmp_path / "g.txt", "r", [(qid, "x", 1.0)]),
            {"group": "g" * (limits.RUN_GROUP + 1)},
        ),
    ]
    for what, path, options in over:
        failed_import_changes_nothing(
            store,
            campaign_id,
            lambda s, c, path=path, options=options: importing.import_runs(s, c, [path], **options),
            (trec.TrecFormatError, ServiceError),
            f"a {what} of at most 200 characters",
        )
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: importing.import_qrels(s, c, qrels, name="n" * (limits.QRELS_SET_NAME + 1)),
        ServiceError,
        "a qrels name of at most 120 characters",
    )


def test_campaign_names_and_grade_labels_longer_than_their_columns_are_refused(store):
    name, label = "c" * limits.CAMPAIGN_NAME, "l" * limits.GRADE_LABEL
    with store.session() as session:
        created = campaigns.create_campaign(session, name, scale=f"0={label},1=yes")
        assert (created.name, created.grades[0].label) == (name, label)
        with pytest.raises(ServiceError, match="a campaign name of at most 120 characters"):
            campaigns.create_campaign(session, name + "c")
        with pytest.raises(ServiceError, match="a grade label of at most 80 characters"):
            campaigns.create_campaign(session, "other", scale=f"0={label}l,1=yes")
