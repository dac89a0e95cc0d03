"""Run imports in short transactions: writers go on while runs are written, readers see all
of an import's runs at its commit (a replaced run: the old lines until then, under the same
id) or none of them, and a refused, failed or dead import leaves nothing visible."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from workbench import trec
from workbench.services import campaigns, pools, run_imports, topic_imports
from workbench.services.errors import ServiceError
from workbench.store.models import (
    Judgement,
    PoolRun,
    Run,
    RunTopic,
    RunTopicRow,
    RunVersion,
    Topic,
    User,
)
from workbench.store.runs import NUMBERED_RANKS, load_run, run_topic_rows

from .conftest import GUARD_S, count, in_thread, row_counts, write_run

QIDS = [str(q) for q in range(1, 9)]


@pytest.fixture
def campaign_id(store, tmp_path) -> int:
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q}\n" for q in QIDS))
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        topic_imports.import_topics(session, campaign, topics)
        session.add(User(username="ann", password_hash="x"))
        return campaign.id


def a_run(folder: Path, tag: str, docno: str = "d", per_topic: int = 3) -> Path:
    """A run with lines for every topic of QIDS: `docno`-<qid>-<k>, scores descending."""
    lines = [(q, f"{docno}-{q}-{k}", float(per_topic - k)) for q in QIDS for k in range(per_topic)]
    return write_run(folder / f"{tag}-{docno}.txt", tag, lines)


def visible_runs(store, campaign_id: int) -> dict[str, dict[str, dict[str, float]]]:
    """Every run of the campaign as readers see it: tag -> qid -> docno -> score."""
    with store.read_session() as session:
        runs = session.scalars(select(Run).where(Run.campaign_id == campaign_id)).all()
        return {run.tag: load_run(session, run).to_dict() for run in runs}


def judge(store, campaign_id: int) -> None:
    with store.session() as session:
        user = session.scalar(select(User).where(User.username == "ann"))
        assert user is not None
        session.add(
            Judgement(campaign_id=campaign_id, qid="1", docno="d", user_id=user.id, grade=1)
        )


def paused_at(monkeypatch, name: str, call: int = 1):
    """Make the import stop before its `call`-th call of run_imports.`name` (between two of its
    transactions) until `resume` is set."""
    reached, resume = threading.Event(), threading.Event()
    real = getattr(run_imports, name)
    calls = [0]

    def paused(*args, **kwargs):
        calls[0] += 1
        if calls[0] == call:
            reached.set()
            assert resume.wait(GUARD_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(run_imports, name, paused)
    return reached, resume


def test_readers_see_no_run_until_the_commit_and_judgements_go_on(
    store, campaign_id, tmp_path, monkeypatch
):
    """The import stops after its first run is written (several committed batches) until a
    judgement has been written by another thread: it would wait forever if the import held
    the write lock; nothing it wrote is visible until both runs are shown at once."""
    monkeypatch.setattr(run_imports, "WRITE_BATCH_BYTES", 1)  # one topic per transaction
    paths = [a_run(tmp_path, "A"), a_run(tmp_path, "B")]
    reached, resume = paused_at(monkeypatch, "_write_version", call=2)
    thread, outcome = in_thread(lambda: run_imports.import_runs_in_steps(store, campaign_id, paths))
    assert reached.wait(GUARD_S)
    assert count(store, RunTopicRow) == len(QIDS)  # run A written, invisible
    assert visible_runs(store, campaign_id) == {} and count(store, RunTopic) == 0
    judged = threading.Event()
    writer = threading.Thread(target=lambda: (judge(store, campaign_id), judged.set()))
    writer.start()
    assert judged.wait(GUARD_S), "the judgement waited for the run import"
    resume.set()
    thread.join(GUARD_S)
    (report,) = outcome
    assert (report.added, report.updated, report.files, report.lines) == (2, 0, 2, 48)
    shown = visible_runs(store, campaign_id)
    assert shown == {
        tag: trec.read_run(path).to_dict() for tag, path in zip("AB", paths, strict=True)
    }
    with store.read_session() as session:
        states = session.execute(select(RunVersion.run_id, RunVersion.state)).all()
        ids = dict(session.execute(select(Run.tag, Run.id)).all())
    assert sorted(states) == sorted([(ids["A"], "live"), (ids["B"], "live")])


def test_each_write_transaction_holds_at_most_a_batch_of_lines(
    store, campaign_id, tmp_path, monkeypatch
):
    """The lines go in transactions of about WRITE_BATCH_BYTES (a topic's blobs are never
    split): a run of eight topics written with a batch of two topics' size takes four."""
    path = a_run(tmp_path, "A", per_topic=200)
    sizes = [sum(len(blob) for blob in row[2:]) for row in run_topic_rows(trec.read_run(path))]
    monkeypatch.setattr(run_imports, "WRITE_BATCH_BYTES", sizes[0] + sizes[1])
    inserted: list[int] = []
    real = run_imports.bulk_insert
    monkeypatch.setattr(
        run_imports,
        "bulk_insert",
        lambda db, t, c, rows: (inserted.append(len(rows)), real(db, t, c, rows)),
    )
    run_imports.import_runs_in_steps(store, campaign_id, [path])
    assert sum(inserted) == len(QIDS) and len(inserted) >= 3 and max(inserted) <= 3


def test_a_replaced_run_keeps_its_id_and_shows_the_old_lines_until_the_commit(
    store, campaign_id, tmp_path, monkeypatch
):
    old = a_run(tmp_path, "A", docno="old")
    run_imports.import_runs_in_steps(store, campaign_id, [old])
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign, strategy="depth", depth=2)
        old_id = session.scalar(select(Run.id).where(Run.tag == "A"))
        pool_id = pool.id
    new = a_run(tmp_path, "A", docno="new", per_topic=2)
    reached, resume = paused_at(monkeypatch, "_commit_runs")
    thread, outcome = in_thread(
        lambda: run_imports.import_runs_in_steps(store, campaign_id, [new], replace=True)
    )
    assert reached.wait(GUARD_S)
    assert visible_runs(store, campaign_id) == {"A": trec.read_run(old).to_dict()}
    assert count(store, RunTopicRow) == 2 * len(QIDS)  # old and new lines stored
    resume.set()
    thread.join(GUARD_S)
    (report,) = outcome
    assert (report.added, report.updated) == (0, 1)
    assert visible_runs(store, campaign_id) == {"A": trec.read_run(new).to_dict()}
    with store.read_session() as session:
        run = session.scalar(select(Run).where(Run.tag == "A"))
        assert (run.id, run.file_name, run.line_count) == (old_id, new.name, 2 * len(QIDS))
        assert session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool_id)).all() == [
            old_id
        ]
        assert session.execute(select(RunVersion.run_id, RunVersion.state)).all() == [
            (old_id, "live")
        ]
    assert count(store, RunTopicRow) == len(QIDS)  # the replaced version deleted


@pytest.mark.parametrize("replace", [False, True])
def test_a_tag_stored_while_the_import_ran_is_refused_unless_replacing(
    store, campaign_id, tmp_path, monkeypatch, replace
):
    """Run B's tag is free when the import starts; another import stores a run B before
    the commit, which refuses the whole import (run A too, and nothing stays behind), unless
    replacing: then B is replaced (keeping the other import's id)."""
    mine = [a_run(tmp_path, "A"), a_run(tmp_path, "B")]
    theirs = a_run(tmp_path, "B", docno="theirs")
    reached, resume = paused_at(monkeypatch, "_commit_runs")
    thread, outcome = in_thread(
        lambda: run_imports.import_runs_in_steps(store, campaign_id, mine, replace=replace)
    )
    assert reached.wait(GUARD_S)
    monkeypatch.undo()
    run_imports.import_runs_in_steps(store, campaign_id, [theirs])
    with store.read_session() as session:
        before = row_counts(session)
        their_id = session.scalar(select(Run.id).where(Run.tag == "B"))
    resume.set()
    thread.join(GUARD_S)
    if not replace:
        (error,) = outcome
        assert isinstance(error, ServiceError)
        assert "already has a run tagged 'B'" in str(error)
        assert visible_runs(store, campaign_id) == {"B": trec.read_run(theirs).to_dict()}
        with store.read_session() as session:
            after = row_counts(session)
        assert after == {
            **before,
            "run_topic_rows": before["run_topic_rows"] - 2 * len(QIDS),
            "run_versions": before["run_versions"] - 2,
        }
    else:
        (report,) = outcome
        assert (report.added, report.updated) == (1, 1)
        assert visible_runs(store, campaign_id) == {
            tag: trec.read_run(path).to_dict() for tag, path in zip("AB", mine, strict=True)
        }
        with store.read_session() as session:
            assert session.scalar(select(Run.id).where(Run.tag == "B")) == their_id
        assert count(store, RunVersion) == 2 and count(store, RunTopicRow) == 2 * len(QIDS)


def test_a_topic_deleted_while_the_import_ran_refuses_it(store, campaign_id, tmp_path, monkeypatch):
    with store.read_session() as session:
        before = row_counts(session)
    reached, resume = paused_at(monkeypatch, "_commit_runs")
    thread, outcome = in_thread(
        lambda: run_imports.import_runs_in_steps(store, campaign_id, [a_run(tmp_path, "A")])
    )
    assert reached.wait(GUARD_S)
    with store.session() as session:
        session.execute(delete(Topic).where(Topic.qid == "8"))
    resume.set()
    thread.join(GUARD_S)
    (error,) = outcome
    assert isinstance(error, ServiceError)
    assert "topic(s) 8 were deleted from the campaign while the import ran" in str(error)
    with store.read_session() as session:
        assert row_counts(session) == {**before, "topics": before["topics"] - 1}


def test_a_bad_file_after_written_runs_leaves_no_trace(store, campaign_id, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 x 1 1.0 Z\n1 Q0 y\n")
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises(trec.TrecFormatError, match=r"bad\.txt:2"):
        run_imports.import_runs_in_steps(
            store,
            campaign_id,
            [a_run(tmp_path, "A"), a_run(tmp_path, "B"), a_run(tmp_path, "C"), bad],
        )
    with store.read_session() as session:
        assert row_counts(session) == before


def test_a_refused_import_writes_nothing(store, campaign_id, tmp_path):
    run_imports.import_runs_in_steps(store, campaign_id, [a_run(tmp_path, "A")])
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises(ServiceError, match="already has a run tagged 'A'"):
        run_imports.import_runs_in_steps(
            store, campaign_id, [a_run(tmp_path, "B"), a_run(tmp_path, "A", docno="again")]
        )
    with store.read_session() as session:
        assert row_counts(session) == before


def test_versions_of_an_import_that_died_are_never_seen_and_cleared_by_the_next(
    store, campaign_id, tmp_path
):
    """An open version whose heartbeat is old (its process died) and a dead version left
    behind are invisible and deleted by the next run import; a fresh open version (an
    import under way) is kept."""
    run_imports.import_runs_in_steps(store, campaign_id, [a_run(tmp_path, "A")])
    row = next(run_topic_rows(trec.read_run(a_run(tmp_path, "Z", docno="z"))))
    with store.session() as session:
        run_id = session.scalar(select(Run.id))
        long_ago = dt.datetime(2000, 1, 1)
        for state, run, heartbeat in [
            ("open", None, long_ago),  # a new run of a dead import
            ("open", run_id, long_ago),  # a replacement by a dead import
            ("dead", run_id, long_ago),  # replaced, its deletion interrupted
            ("open", None, dt.datetime.now(dt.UTC).replace(tzinfo=None)),  # under way
        ]:
            version = RunVersion(
                campaign_id=campaign_id, run_id=run, state=state, heartbeat_at=heartbeat
            )
            session.add(version)
            session.flush()
            session.add(
                RunTopicRow(
                    version_id=version.id,
                    qid=row[0],
                    n_lines=row[1],
                    docnos=row[2],
                    scores=row[3],
                    ranks=row[4],
                )
            )
    shown = {"A": trec.read_run(a_run(tmp_path, "A")).to_dict()}
    assert visible_runs(store, campaign_id) == shown
    with store.read_session() as session:
        assert session.scalar(select(func.count()).select_from(RunTopic)) == len(QIDS)
    run_imports.import_runs_in_steps(store, campaign_id, [a_run(tmp_path, "B")])
    assert visible_runs(store, campaign_id) == {
        **shown,
        "B": trec.read_run(a_run(tmp_path, "B")).to_dict(),
    }
    with store.read_session() as session:
        states = sorted(session.execute(select(RunVersion.state)).scalars())
    assert states == ["live", "live", "open"]
    assert count(store, RunTopicRow) == 2 * len(QIDS) + 1


def test_the_in_transaction_import_and_the_import_in_steps_store_the_same(
    store, campaign_id, tmp_path
):
    paths = [a_run(tmp_path, "A"), a_run(tmp_path, "B", per_topic=5)]
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        first = run_imports.import_runs(session, campaign, paths, group="g")
    in_one = visible_runs(store, campaign_id)
    second = run_imports.import_runs_in_steps(store, campaign_id, paths, group="g", replace=True)
    assert (first.added, second.updated, first.lines) == (2, 2, second.lines)
    assert visible_runs(store, campaign_id) == in_one
    assert count(store, RunVersion) == 2 and count(store, RunTopicRow) == 2 * len(QIDS)


def test_ranks_come_back_as_the_file_gave_them_numbered_or_not(store, campaign_id, tmp_path):
    """Topic 1's ranks are 1..n (stored as the empty NUMBERED_RANKS stream); topic 2's start
    at 0, topic 3's repeat and skip, topic 4 has one line ranked 7: each line's rank comes back
    as written, in file order."""
    ranks = {"1": [1, 2, 3], "2": [0, 1, 2], "3": [5, 5, 9], "4": [7]}
    path = tmp_path / "ranked.txt"
    path.write_text(
        "".join(
            f"{qid} Q0 d{qid}-{k} {rank} {10 - k} ranked\n"
            for qid, listed in ranks.items()
            for k, rank in enumerate(listed)
        )
    )
    with store.session() as session:
        run_imports.import_runs(session, campaigns.get_campaign(session, campaign_id), [path])
    with store.read_session() as session:
        run = session.scalar(select(Run).where(Run.tag == "ranked"))
        loaded = load_run(session, run)
        blobs = {qid: blob for qid, blob in session.execute(select(RunTopic.qid, RunTopic.ranks))}
    got = {qid: loaded.ranks[loaded.topic_slice(qid)].tolist() for qid in loaded.topics()}
    assert got == ranks
    assert [qid for qid, blob in blobs.items() if blob == NUMBERED_RANKS] == ["1"]
