"""Document imports in short transactions: writers go on while a file is read and written,
readers see all of an import's documents at its commit or none of them, and a failed or
dead import leaves no trace."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from workbench import trec
from workbench.services import campaigns, document_imports
from workbench.services.errors import ServiceError
from workbench.store.models import (
    Document,
    DocumentImport,
    DocumentReplacement,
    DocumentRow,
    Judgement,
    User,
)

from .conftest import GUARD_S, count, in_thread, row_counts


@pytest.fixture
def campaign_id(store) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        session.add(User(username="ann", password_hash="x"))
        return campaign.id


def write_documents(path: Path, count: int, *, text_bytes: int = 2000, word: str = "w") -> Path:
    with path.open("w") as out:
        for k in range(count):
            out.write(json.dumps({"docno": f"doc-{k}", "text": word * text_bytes}) + "\n")
    return path


def judge(store, campaign_id: int, docno: str = "doc-1") -> None:
    with store.session() as session:
        user = session.scalar(select(User).where(User.username == "ann"))
        assert user is not None
        session.add(
            Judgement(campaign_id=campaign_id, qid="1", docno=docno, user_id=user.id, grade=1)
        )


def visible_texts(store, campaign_id: int) -> dict[str, str]:
    """The campaign's documents as every reader sees them (the `documents` view)."""
    with store.read_session() as session:
        rows = session.execute(
            select(Document.docno, Document.text).where(Document.campaign_id == campaign_id)
        )
        return {docno: text for docno, text in rows}


def paused_reader(monkeypatch, at: int):
    """Make the import stop after reading document number `at` until `resume` is set."""
    reading, resume = threading.Event(), threading.Event()
    real = document_imports.read_documents

    def paused(*args, **kwargs):
        for number, document in enumerate(real(*args, **kwargs)):
            if number == at:
                reading.set()
                assert resume.wait(GUARD_S)
            yield document

    monkeypatch.setattr(document_imports, "read_documents", paused)
    return reading, resume


def test_writers_go_on_and_readers_see_nothing_while_an_import_is_written(
    store, campaign_id, tmp_path, monkeypatch
):
    """The import stops in the middle of its file (after several written batches) until a
    judgement has been written by another thread: it would wait forever if the import held
    the write lock; its written rows are invisible until it commits."""
    path = write_documents(tmp_path / "big.jsonl", 2000)  # 4 MB: several write batches
    reading, resume = paused_reader(monkeypatch, 1500)
    thread, outcome = in_thread(
        lambda: document_imports.import_documents_in_steps(store, campaign_id, [path])
    )
    assert reading.wait(GUARD_S)
    assert count(store, DocumentRow) > 0  # batches already written, none of them visible
    assert visible_texts(store, campaign_id) == {}
    judged = threading.Event()
    writer = threading.Thread(target=lambda: (judge(store, campaign_id), judged.set()))
    writer.start()
    assert judged.wait(GUARD_S), "the judgement waited for the document import"
    resume.set()
    thread.join(GUARD_S)
    (report,) = outcome
    assert (report.added, report.updated, report.lines, report.files) == (2000, 0, 2000, 1)
    assert len(visible_texts(store, campaign_id)) == 2000
    with store.read_session() as session:
        docnos = session.scalars(select(Document.docno).order_by(Document.id).limit(3)).all()
        assert docnos == ["doc-0", "doc-1", "doc-2"]  # file order
        state = session.execute(select(DocumentImport.state, DocumentImport.added)).all()
        assert state == [("done", 2000)]


def test_a_reimport_shows_the_old_texts_until_its_commit_then_only_the_new(
    store, campaign_id, tmp_path, monkeypatch
):
    old = write_documents(tmp_path / "old.jsonl", 1500, word="o")
    document_imports.import_documents_in_steps(store, campaign_id, [old])
    new = write_documents(tmp_path / "new.jsonl", 1500, word="n")
    reading, resume = paused_reader(monkeypatch, 1400)
    seen_at_commit: list = []
    real_settle = document_imports._settle

    def settle(steps, import_id):  # just after the commit, before the old rows are deleted
        seen_at_commit.append((visible_texts(store, campaign_id), count(store, DocumentRow)))
        real_settle(steps, import_id)

    monkeypatch.setattr(document_imports, "_settle", settle)
    thread, outcome = in_thread(
        lambda: document_imports.import_documents_in_steps(store, campaign_id, [new])
    )
    assert reading.wait(GUARD_S)
    during = visible_texts(store, campaign_id)
    assert len(during) == 1500 and {text[0] for text in during.values()} == {"o"}
    assert count(store, DocumentReplacement) > 0  # some old rows already marked replaced
    resume.set()
    thread.join(GUARD_S)
    (report,) = outcome
    assert (report.added, report.updated) == (0, 1500)
    ((at_commit, rows_at_commit),) = seen_at_commit
    assert rows_at_commit == 3000  # old and new rows stored, the old ones hidden
    assert len(at_commit) == 1500 and {text[0] for text in at_commit.values()} == {"n"}
    assert visible_texts(store, campaign_id) == at_commit
    assert count(store, DocumentRow) == 1500 and count(store, DocumentReplacement) == 0


def test_an_unchanged_reimport_writes_nothing(store, campaign_id, tmp_path):
    path = write_documents(tmp_path / "docs.jsonl", 20, text_bytes=5)
    document_imports.import_documents_in_steps(store, campaign_id, [path])
    report = document_imports.import_documents_in_steps(store, campaign_id, [path])
    assert (report.added, report.updated) == (0, 20)
    assert count(store, DocumentRow) == 20


def test_a_bad_file_found_after_written_batches_leaves_no_trace(store, campaign_id, tmp_path):
    path = write_documents(tmp_path / "bad.jsonl", 1500)
    with path.open("a") as out:
        out.write('{"docno": "broken"\n')
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises(trec.TrecFormatError, match=f"{path}:1501: expected a JSON object"):
        document_imports.import_documents_in_steps(store, campaign_id, [path])
    with store.read_session() as session:
        assert row_counts(session) == before


def test_a_refused_import_changes_nothing(store, campaign_id, tmp_path):
    first = write_documents(tmp_path / "first.jsonl", 3, text_bytes=5)
    document_imports.import_documents_in_steps(store, campaign_id, [first])
    judge(store, campaign_id)
    changed = write_documents(tmp_path / "changed.jsonl", 3000, text_bytes=50)
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises(ServiceError, match=r"changed\.jsonl: document 'doc-1'"):
        document_imports.import_documents_in_steps(store, campaign_id, [changed])
    with store.read_session() as session:
        assert row_counts(session) == before


def test_a_document_judged_while_the_import_ran_is_refused_or_logged(
    store, campaign_id, tmp_path, monkeypatch
):
    """The judged documents are read when the import starts; one judged later is checked
    by the commit, so that replace=False never changes a judged text."""
    first = write_documents(tmp_path / "first.jsonl", 5, text_bytes=5)
    document_imports.import_documents_in_steps(store, campaign_id, [first])
    changed = write_documents(tmp_path / "changed.jsonl", 5, text_bytes=6)
    for replace in (False, True):
        reading, resume = paused_reader(monkeypatch, 3)
        thread, outcome = in_thread(
            lambda replace=replace: document_imports.import_documents_in_steps(
                store, campaign_id, [changed], replace=replace
            )
        )
        assert reading.wait(GUARD_S)
        judge(store, campaign_id, docno="doc-2")
        resume.set()
        thread.join(GUARD_S)
        monkeypatch.undo()
        if not replace:
            (error,) = outcome
            assert isinstance(error, ServiceError)
            assert "document 'doc-2' has been judged while the import ran" in str(error)
            assert set(visible_texts(store, campaign_id).values()) == {"w" * 5}
        else:
            (report,) = outcome
            assert set(visible_texts(store, campaign_id).values()) == {"w" * 6}
            with store.read_session() as session:
                comments = session.scalars(select(Judgement.comment).order_by(Judgement.id))
                assert list(comments)[-1] == (
                    "[document text replaced by the import of changed.jsonl]"
                )
            assert "1 judged document(s) got a new title or text" in report.warnings[0]


def test_an_import_is_refused_while_another_of_the_campaign_is_under_way(
    store, campaign_id, tmp_path, monkeypatch
):
    big = write_documents(tmp_path / "big.jsonl", 100, text_bytes=5)
    reading, resume = paused_reader(monkeypatch, 50)
    thread, outcome = in_thread(
        lambda: document_imports.import_documents_in_steps(store, campaign_id, [big])
    )
    assert reading.wait(GUARD_S)
    monkeypatch.undo()
    other = write_documents(tmp_path / "other.jsonl", 1, text_bytes=5)
    with pytest.raises(ServiceError, match="another document import into this"):
        document_imports.import_documents_in_steps(store, campaign_id, [other])
    resume.set()
    thread.join(GUARD_S)
    assert outcome[0].added == 100
    document_imports.import_documents_in_steps(store, campaign_id, [other])  # now it may


@pytest.mark.parametrize("state", ["open", "committed"])
def test_an_import_whose_process_died_is_cleared_by_the_next_one(
    store, campaign_id, tmp_path, state
):
    """An open import that died is deleted (its rows were never visible); a committed one
    is finished (its replaced rows deleted). Only once its heartbeat is old."""
    path = write_documents(tmp_path / "docs.jsonl", 2, text_bytes=5)
    document_imports.import_documents_in_steps(store, campaign_id, [path])
    with store.session() as session:
        first_row = session.scalar(select(DocumentRow.id).where(DocumentRow.docno == "doc-0"))
        dead = DocumentImport(campaign_id=campaign_id, state=state, files="dead.jsonl")
        session.add(dead)
        session.flush()
        row = DocumentRow(campaign_id=campaign_id, docno="doc-0", import_id=dead.id, text="dead")
        session.add(row)
        session.flush()
        session.add(DocumentReplacement(import_id=dead.id, document_id=first_row))
    shown = "dead" if state == "committed" else "w" * 5
    assert visible_texts(store, campaign_id)["doc-0"] == shown
    other = tmp_path / "other.jsonl"
    other.write_text('{"docno": "other", "text": "x"}\n')
    with pytest.raises(ServiceError, match="last active 0 s ago"):
        document_imports.import_documents_in_steps(store, campaign_id, [other])
    with store.session() as session:
        session.get(DocumentImport, dead.id).heartbeat_at = dt.datetime(2000, 1, 1)
    document_imports.import_documents_in_steps(store, campaign_id, [other])
    assert visible_texts(store, campaign_id)["doc-0"] == (
        "dead" if state == "committed" else "w" * 5
    )
    with store.read_session() as session:
        states = session.execute(select(DocumentImport.state)).scalars().all()
        assert states == ["done"] * (3 if state == "committed" else 2)
    assert count(store, DocumentRow) == 3 and count(store, DocumentReplacement) == 0


def test_an_import_killed_mid_way_is_cleared_at_once_by_the_next_one(store, campaign_id, tmp_path):
    """`workbench import documents` killed (SIGKILL) with batches written: the next import of
    the campaign sees that the importing process is gone (its owner: host, pid, start time)
    and deletes its hidden rows at once, instead of refusing until its heartbeat is old."""
    fifo = tmp_path / "docs.jsonl"
    os.mkfifo(fifo)
    repo = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, "-m", "workbench", "--db", store.url, "import", "documents"]
    child = subprocess.Popen([*command, "--campaign", "c1", str(fifo)], env=env)
    try:
        with fifo.open("w") as pipe:  # the importer reads it as it comes: never to its end
            for k in range(1500):  # 3 MB: the reader's 1 MiB blocks, batches of 512 KB
                pipe.write(json.dumps({"docno": f"doc-{k}", "text": "w" * 2000}) + "\n")
            pipe.flush()
            deadline = time.monotonic() + GUARD_S
            while count(store, DocumentRow) < 200:
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            child.kill()
            child.wait()
    except BrokenPipeError:  # the importer died before the pipe closed
        pass
    finally:
        child.kill()
        child.wait()
    with store.read_session() as session:
        (dead,) = session.execute(select(DocumentImport.state, DocumentImport.owner)).all()
    assert dead.state == "open" and f" {child.pid} " in dead.owner
    other = write_documents(tmp_path / "other.jsonl", 1, text_bytes=5)
    report = document_imports.import_documents_in_steps(store, campaign_id, [other])
    assert report.added == 1
    assert count(store, DocumentRow) == 1 and visible_texts(store, campaign_id) == {
        "doc-0": "w" * 5
    }
    with store.read_session() as session:
        assert session.execute(select(DocumentImport.state)).scalars().all() == ["done"]


def test_an_import_of_another_machine_is_dead_only_when_silent(store, campaign_id, tmp_path):
    """An owner on another machine cannot be checked: its import is cleared once its
    heartbeat is STALE_DOCUMENT_IMPORT_S old (two minutes), no sooner."""
    with store.session() as session:
        session.add(DocumentImport(campaign_id=campaign_id, files="x", owner="elsewhere 1 1"))
    other = write_documents(tmp_path / "other.jsonl", 1, text_bytes=5)
    with pytest.raises(ServiceError, match="another document import"):
        document_imports.import_documents_in_steps(store, campaign_id, [other])
    silent = document_imports.STALE_DOCUMENT_IMPORT_S + 5
    with store.session() as session:
        for row in session.scalars(select(DocumentImport)):
            row.heartbeat_at = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(
                seconds=silent
            )
    assert document_imports.import_documents_in_steps(store, campaign_id, [other]).added == 1


def test_pools_do_not_import_the_importers() -> None:
    """The run blobs' codec lives in the store: services.pools needs nothing of the
    importers (services.document_imports uses pools), so they form no cycle."""
    import subprocess
    import sys

    code = (
        "import sys, workbench.services.pools\n"
        "importers = ('document_imports', 'run_imports', 'topic_imports', 'qrels_imports')\n"
        "assert not {f'workbench.services.{m}' for m in importers} & set(sys.modules), 'cycle'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("behind", "importer"),
    [
        ({"DocumentRow", "DocumentReplacement"}, "services/document_imports.py"),
        ({"RunTopicRow", "RunVersion"}, "services/run_imports.py"),
    ],
)
def test_only_the_importer_touches_the_rows_behind_the_views(
    behind: set[str], importer: str
) -> None:
    """Every other reader reads `Document` and `RunTopic` (the views), so none can see a half
    import."""
    import ast

    import workbench

    root = Path(workbench.__file__).parent
    users = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module == "workbench.store.models"
        and behind & {alias.name for alias in node.names}
    )
    assert users == [importer]
