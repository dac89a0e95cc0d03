"""Imports into a campaign: good files, and malformed ones leave the store exactly as it was."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sqlalchemy import select

from workbench import limits, trec
from workbench.services import (
    campaigns,
    document_imports,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import NotFound, ServiceError
from workbench.services.topics import MAX_LISTED, campaign_qids
from workbench.store.models import (
    Document,
    Judgement,
    PoolEntry,
    QrelsEntry,
    Run,
    RunTopic,
    Topic,
    User,
)
from workbench.store.runs import load_run

from .conftest import row_counts, write_run


@pytest.fixture
def campaign_id(store, files) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        topic_imports.import_topics(session, campaign, files["topics"])
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
    assert campaigns.parse_scale("1:Relevant:r, 0:Not relevant:x") == [
        (0, "Not relevant", "x"),
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
        report = topic_imports.import_topics(session, campaign, again)
        assert (report.added, report.updated) == (1, 1)
        titles = dict(session.execute(select(Topic.qid, Topic.title)).all())
    assert titles == {"1": "first topic", "2": "second, revised", "3": "third"}


def test_runs_are_stored_whole_and_load_back_identically(store, files, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = run_imports.import_runs(
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
        loaded = load_run(session, run)
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
        run_imports.import_runs(session, campaigns.get_campaign(session, campaign_id), [files["A"]])
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [files["B"], files["A"]]),
        ServiceError,
        "already has a run tagged 'A'",
    )
    shorter = write_run(tmp_path / "runA2.txt", "A", [("2", "y1", 1.0)])
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        old_id = session.scalar(select(Run.id).where(Run.tag == "A"))
        report = run_imports.import_runs(session, campaign, [shorter], replace=True)
        assert report.updated == 1
    with store.session() as session:
        run = session.scalar(select(Run).where(Run.tag == "A"))
        assert run.id == old_id and run.line_count == 1 and run.file_name == "runA2.txt"
        assert load_run(session, run).to_dict() == {"2": {"y1": 1.0}}
        assert session.scalar(select(Run.id).where(Run.tag == "B")) is None


def test_same_tag_twice_in_one_import_is_refused(store, files, campaign_id, tmp_path):
    twin = write_run(tmp_path / "twin.txt", "A", [("1", "q", 1.0)])
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [files["A"], twin]),
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
        lambda s, c: run_imports.import_runs(s, c, [files["A"], stray]),
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
        lambda s, c: run_imports.import_runs(s, c, [files["A"], bad]),
        trec.TrecFormatError,
        f"{bad}:2: ",
    )
    assert caught.value.line_number == 2


def test_documents_import_streams_updates_and_filters(store, files, campaign_id, tmp_path):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = document_imports.import_documents(session, campaign, [files["docs"]])
        assert (report.added, report.updated) == (3, 0)
    newer = tmp_path / "newer.jsonl"
    newer.write_text('{"docno": "d1", "text": "delta 2"}\n{"docno": "d1", "text": "dup"}\n')
    with store.session() as session:
        report = document_imports.import_documents(
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
        run_imports.import_runs(session, campaign, [files["A"], files["B"], files["C"]])
        pools.build_pool(session, campaign, depth=1, seed=1)  # topic 1: a1 d1 c1; topic 2: x1 x2
        report = document_imports.import_documents(
            session, campaign, [files["docs"]], only_pooled=True
        )
        assert (report.added, report.skipped) == (2, 1)
        assert report.warnings == [
            "3 pooled document(s) of pool 1 have neither a title nor a text in the store: "
            "c1, x1, x2"
        ]


def test_malformed_documents_change_nothing(store, files, campaign_id, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"docno": "ok", "text": "x"}\n{"docno": "broken"\n')
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: document_imports.import_documents(s, c, [files["docs"], bad]),
        trec.TrecFormatError,
        f"{bad}:2: expected a JSON object",
    )


def test_qrels_import_and_its_failures(store, files, campaign_id, tmp_path):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = qrels_imports.import_qrels(session, campaign, files["qrels"], name="official")
        assert report.added == 3 and report.warnings == []
        entries = session.execute(select(QrelsEntry.qid, QrelsEntry.docno, QrelsEntry.rel)).all()
        assert sorted(entries) == [("1", "a1", 1), ("1", "d1", 2), ("2", "x2", 0)]
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: qrels_imports.import_qrels(s, c, files["qrels"], name="official"),
        ServiceError,
        "already has qrels named 'official'",
    )
    bad = tmp_path / "bad_qrels"
    bad.write_text("1 0 a 1\n1 0 b\n")
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: qrels_imports.import_qrels(s, c, bad),
        trec.TrecFormatError,
        f"{bad}:2:",
    )
    other = tmp_path / "other_qrels"
    other.write_text("1 0 a 1\n77 0 b 0\n")
    with store.session() as session:
        report = qrels_imports.import_qrels(
            session, campaigns.get_campaign(session, campaign_id), other
        )
        assert report.warnings == ["1 qrels topic(s) are not topics of the campaign: 77"]


def test_malformed_topics_change_nothing(store, files, campaign_id, tmp_path):
    bad = tmp_path / "topics.jsonl"
    bad.write_text('{"qid": "9", "title": "fine"}\n{"title": "no id"}\n')
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: topic_imports.import_topics(s, c, bad),
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
        run_imports.import_runs(session, campaign, [at_limit], group="g" * limits.RUN_GROUP)
        qrels_imports.import_qrels(session, campaign, qrels, name="n" * limits.QRELS_SET_NAME)
        stored = session.scalar(select(Run).where(Run.tag == tag))
        assert load_run(session, stored).topic_lines(qid).docnos == [docno]
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
            lambda s, c, path=path, options=options: run_imports.import_runs(
                s, c, [path], **options
            ),
            (trec.TrecFormatError, ServiceError),
            f"a {what} of at most 200 characters",
        )
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: qrels_imports.import_qrels(
            s, c, qrels, name="n" * (limits.QRELS_SET_NAME + 1)
        ),
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


# ---------------------------------------------------------------- imports that never guess


def test_a_run_file_with_two_tags_is_refused_unless_split(store, campaign_id, tmp_path):
    both = tmp_path / "both.txt"
    both.write_text("1 Q0 a1 1 3 X\n1 Q0 d1 2 2 X\n2 Q0 x1 1 5 Y\n1 Q0 a1 1 9 Y\n")
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [both]),
        trec.TrecFormatError,
        r"both.txt:3: expected one run tag per file \('X', as on line 1; --split-tags",
    )
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = run_imports.import_runs(session, campaign, [both], split_tags=True)
        assert (report.added, report.files, report.lines) == (2, 1, 4)
    with store.session() as session:
        runs = {run.tag: run for run in session.scalars(select(Run))}
        assert {tag: run.line_count for tag, run in runs.items()} == {"X": 2, "Y": 2}
        assert runs["X"].file_name == runs["Y"].file_name == "both.txt"
        assert load_run(session, runs["Y"]).to_dict() == {
            "2": {"x1": 5.0},
            "1": {"a1": 9.0},
        }


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("", r"empty.txt:1: expected run lines"),
        ("1 Q0 a1 1 3 X\n1 Q0 a2 2 2\n", r"empty.txt:2: expected exactly 6 fields"),
        ("1 Q0 a1 99999999999999999999 3 X\n", r"empty.txt:1: expected an integer from"),
        ("1 Q0 a\xff 1 3 X\n", r"empty.txt:1: expected UTF-8 text"),
    ],
)
def test_bad_run_files_are_refused_and_change_nothing(store, campaign_id, tmp_path, content, match):
    path = tmp_path / "empty.txt"
    path.write_bytes(content.encode("latin-1"))
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [path]),
        trec.TrecFormatError,
        match,
    )


def test_qrels_grades_beyond_32_bits_bad_bytes_and_empty_files_are_refused(
    store, campaign_id, tmp_path
):
    for content, match in [
        (b"1 0 a1 1\n1 0 d1 2147483648\n", r"q.txt:2: expected an integer from -2147483648"),
        (b"1 0 a\xe91 1\n", r"q.txt:1: expected UTF-8 text"),
        (b"", r"q.txt:1: expected qrels lines \(qid iteration docno rel\); got ''"),
        (b"\n# only a comment\n", r"q.txt:1: expected qrels lines"),
    ]:
        path = tmp_path / "q.txt"
        path.write_bytes(content)
        failed_import_changes_nothing(
            store,
            campaign_id,
            lambda s, c, path=path: qrels_imports.import_qrels(s, c, path),
            trec.TrecFormatError,
            match,
        )


def test_topics_files_with_a_qid_twice_or_a_header(store, campaign_id, tmp_path):
    twice = tmp_path / "twice.tsv"
    twice.write_text("7\tseven\n8\teight\n7\tseven again\n")
    failed_import_changes_nothing(  # an IntegrityError from the database before
        store,
        campaign_id,
        lambda s, c: topic_imports.import_topics(s, c, twice),
        trec.TrecFormatError,
        r"twice.tsv:3: expected each qid once \(qid '7' is also on line 1\)",
    )
    header = tmp_path / "header.tsv"
    header.write_text("qid\ttitle\n7\tseven\n")
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = topic_imports.import_topics(session, campaign, header)
        assert report.added == 1
        assert report.warnings == [f"{header}:1: header line 'qid\\ttitle' skipped"]
        assert "qid" not in campaign_qids(session, campaign)


def test_runs_with_unknown_topics_can_skip_them_and_say_so(store, campaign_id, tmp_path):
    run = write_run(tmp_path / "r.txt", "R", [("1", "a1", 3), ("9", "z", 2), ("10", "z", 1)])
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = run_imports.import_runs(session, campaign, [run], skip_unknown_topics=True)
        assert report.added == 1
        assert f"{run}: run 'R': 2 topic(s) the campaign lacks were skipped: 9, 10" in (
            report.warnings
        )
        stored = session.scalar(select(Run).where(Run.tag == "R"))
        assert stored.line_count == 1
        assert load_run(session, stored).to_dict() == {"1": {"a1": 3.0}}
    only_unknown = write_run(tmp_path / "u.txt", "U", [("9", "z", 2)])
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [only_unknown], skip_unknown_topics=True),
        ServiceError,
        "has no line for any chosen campaign topic",
    )


def test_runs_keep_only_the_chosen_topics(store, files, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = run_imports.import_runs(session, campaign, [files["A"]], topics=["2"])
        assert f"{files['A']}: run 'A': 1 topic(s) outside the chosen topics were left out: 1" in (
            report.warnings
        )
        stored = session.scalar(select(Run).where(Run.tag == "A"))
        assert load_run(session, stored).topics() == ["2"]
        assert stored.line_count == 2
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: run_imports.import_runs(s, c, [files["B"]], topics=["2", "77"]),
        ServiceError,
        r"has no topic\(s\) 77 \(chosen topics\)",
    )
    assert run_imports.topic_list(" 1, 2\n3 ,1 ") == ["1", "2", "3"]
    with pytest.raises(ServiceError, match="the topic list is empty"):
        run_imports.topic_list(" , ")


def test_run_docnos_the_documents_lack_are_reported(store, files, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = run_imports.import_runs(session, campaign, [files["C"]])
        assert report.warnings == [
            "run 'C': its 3 docno(s) have no text: the campaign has no documents yet (pooled, "
            "they show 'no text' until imported)"
        ]
        document_imports.import_documents(session, campaign, [files["docs"]])  # a1, d1, zz
        report = run_imports.import_runs(session, campaign, [files["A"]])
        assert report.added == 1
        assert report.warnings == [
            "run 'A': 5 docno(s) are not among the campaign's documents (3 documents; "
            "pooled, they show 'no text' until imported): a2, a3, d2, x1, x2"
        ]


def test_a_campaign_without_documents_counts_each_docno_of_the_kept_topics_once(
    store, campaign_id, tmp_path
):
    """No documents yet: the warning counts the distinct docnos of the topics imported (a
    docno in two topics once; a left-out topic's docnos not at all)."""
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 3 R\n1 Q0 b 2 2 R\n1 Q0 c 3 1 R\n2 Q0 b 1 2 R\n2 Q0 d 2 1 R\n")
    warning = "docno(s) have no text: the campaign has no documents yet"
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        every = run_imports.import_runs(session, campaign, [run])
        some = run_imports.import_runs(session, campaign, [run], topics=["2"], replace=True)
    assert every.warnings == [
        f"run 'R': its 4 {warning} (pooled, they show 'no text' until imported)"
    ]
    assert some.warnings[0].endswith("1 topic(s) outside the chosen topics were left out: 1")
    assert some.warnings[1:] == [
        f"run 'R': its 2 {warning} (pooled, they show 'no text' until imported)"
    ]


def test_distinct_count_equals_numpy_unique():
    rng = np.random.default_rng(11)
    for size in (0, 1, 2, 1000):
        hashes = rng.integers(0, 50, size).astype(np.uint64)
        assert run_imports.distinct_count(hashes) == len(np.unique(hashes))


def test_many_lacking_docnos_are_counted_and_the_first_listed_in_text_order(
    store, campaign_id, tmp_path
):
    """Over MAX_LISTED lacking docnos (some repeated across topics, some not ASCII): the count
    is of distinct docnos and the list is the first MAX_LISTED in text order, as sorting
    every one of them would give."""
    rng = np.random.default_rng(5)
    names = [f"doc-{k}" for k in range(60)] + ["\u00e9t\u00e9-1", "z\u00fcrich", "\u4e2d-3"]
    lines = [
        f"{qid} Q0 {names[k]} {rank} {100 - rank} R\n"
        for qid in ("1", "2")
        for rank, k in enumerate(rng.permutation(len(names))[:50], 1)
    ]
    run = tmp_path / "r.txt"
    run.write_text("".join(lines), encoding="utf-8")
    used = sorted({line.split()[2] for line in lines})
    documents = tmp_path / "docs.jsonl"
    documents.write_text('{"docno": "other", "text": "x"}\n{"docno": "doc-7", "text": "y"}\n')
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        document_imports.import_documents(session, campaign, [documents])
        report = run_imports.import_runs(session, campaign, [run])
    lacking = [name for name in used if name != "doc-7"]
    shown = ", ".join(lacking[:MAX_LISTED])
    assert report.warnings == [
        f"run 'R': {len(lacking)} docno(s) are not among the campaign's documents (2 "
        f"documents; pooled, they show 'no text' until imported): {shown} and "
        f"{len(lacking) - MAX_LISTED} more"
    ]


def test_judged_documents_change_only_when_replacing_and_the_log_says_so(
    store, files, campaign_id, tmp_path
):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        document_imports.import_documents(session, campaign, [files["docs"]])
        user = User(username="ann", password_hash="x")
        session.add(user)
        session.flush()
        session.add(
            Judgement(
                campaign_id=campaign.id,
                qid="1",
                docno="d1",
                user_id=user.id,
                grade=2,
                comment="clear",
                time_spent_ms=900,
            )
        )
    same = tmp_path / "same.jsonl"
    same.write_text('{"docno": "d1", "text": "delta"}\n{"docno": "a1", "text": "new alpha"}\n')
    with store.session() as session:  # d1 unchanged, a1 not judged: both fine
        report = document_imports.import_documents(
            session, campaigns.get_campaign(session, campaign_id), [same]
        )
        assert report.updated == 2
    changed = tmp_path / "changed.jsonl"
    changed.write_text('{"docno": "d1", "text": "delta, rewritten"}\n')
    failed_import_changes_nothing(
        store,
        campaign_id,
        lambda s, c: document_imports.import_documents(s, c, [changed]),
        ServiceError,
        "document 'd1' has been judged and this file changes its title or text",
    )
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = document_imports.import_documents(session, campaign, [changed], replace=True)
        assert (
            "1 judged document(s) got a new title or text, recorded as 1 judgement log"
            in (report.warnings[0])
        )
        log = session.scalars(select(Judgement).order_by(Judgement.id)).all()
        assert [(j.docno, j.grade, j.comment, j.time_spent_ms) for j in log] == [
            ("d1", 2, "clear", 900),
            ("d1", 2, "clear [document text replaced by the import of changed.jsonl]", 0),
        ]
        text = session.scalar(select(Document.text).where(Document.docno == "d1"))
        assert text == "delta, rewritten"


def test_pools_and_assignments_of_a_topic_subset(store, files, campaign_id):
    from workbench.services import assignments, pools

    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        run_imports.import_runs(session, campaign, [files["A"], files["B"]])
        pool = pools.build_pool(session, campaign, depth=2, seed=1, topics=["2"])
        assert pool.params["topics"] == ["2"]
        assert {e.qid for e in session.scalars(select(PoolEntry))} == {"2"}
        with pytest.raises(ServiceError, match=r"has no topic\(s\) 5"):
            pools.build_pool(session, campaign, depth=2, topics=["5"])
        full = pools.build_pool(session, campaign, depth=2, seed=1)
        users = [User(username=name, password_hash="x") for name in ("ann", "bob")]
        session.add_all(users)
        session.flush()
        created = assignments.auto_assign(
            session, full, judges_per_topic=1, assessors=users, topics=["1"]
        )
        assert [a.qid for a in created] == ["1"]
        with pytest.raises(ServiceError, match=r"no documents to judge for topic\(s\) 9"):
            assignments.auto_assign(
                session, full, judges_per_topic=1, assessors=users, topics=["9"]
            )


def test_the_import_options_from_the_command_line(database_url, files, tmp_path):
    from click.testing import CliRunner

    from workbench.cli import main

    runner = CliRunner()

    def cli(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(main, ["--db", database_url, *args], input=stdin)

    assert cli("campaign", "create", "c").exit_code == 0
    assert cli("import", "topics", "--campaign", "c", str(files["topics"])).exit_code == 0
    both = tmp_path / "both.txt"
    both.write_text("1 Q0 a1 1 3 X\n2 Q0 x1 1 5 X\n9 Q0 z 1 1 X\n1 Q0 d1 1 9 Y\n")
    refused = cli("import", "runs", "--campaign", "c", str(both))
    assert refused.exit_code == 1 and "both.txt:4: expected one run tag per file" in refused.stderr
    unknown = cli("import", "runs", "--campaign", "c", "--split-tags", str(both))
    assert unknown.exit_code == 1 and "lacks: 9" in unknown.stderr
    chosen = tmp_path / "chosen.txt"
    chosen.write_text("1\n")
    imported = cli(
        "import",
        "runs",
        "--campaign",
        "c",
        "--split-tags",
        "--skip-unknown-topics",
        "--topics",
        f"@{chosen}",
        str(both),
    )
    assert imported.exit_code == 0, imported.output
    assert "runs: 2 added" in imported.stdout
    assert "topic(s) the campaign lacks were skipped: 9" in imported.stderr
    assert "outside the chosen topics were left out: 2" in imported.stderr
    assert "docno(s) have no text: the campaign has no documents yet" in imported.stderr
    assert cli("import", "runs", "--campaign", "c", str(files["A"])).exit_code == 0
    built = cli("pool", "build", "--campaign", "c", "--depth", "1", "--topics", "2")
    assert built.exit_code == 0 and "over 1 topics" in built.output
    bad_topics = cli("pool", "build", "--campaign", "c", "--topics", "@" + str(tmp_path / "no"))
    assert bad_topics.exit_code == 1 and "cannot read the topic list" in bad_topics.stderr
    for name in ("ann", "bob"):
        added = cli("user", "add", name, "--password-stdin", stdin="a long passphrase 42\n")
        assert added.exit_code == 0, added.output
    assert cli("pool", "build", "--campaign", "c", "--depth", "1").exit_code == 0
    assigned = cli("assign", "--campaign", "c", "--judges-per-topic", "1", "--topics", "1")
    assert assigned.exit_code == 0 and "1 new assignments" in assigned.output
    corrupt = tmp_path / "docs.jsonl.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    broken = cli("import", "documents", "--campaign", "c", str(corrupt))
    assert broken.exit_code == 1
    assert "docs.jsonl.gz:1: expected a complete, valid gzip file" in broken.stderr
    assert "Traceback" not in broken.output
    replaced = cli("import", "documents", "--campaign", "c", "--replace", str(files["docs"]))
    assert replaced.exit_code == 0 and "documents: 3 added" in replaced.stdout
