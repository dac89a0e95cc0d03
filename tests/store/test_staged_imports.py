"""Document imports staged in short transactions: writers go on while a file is read, the
documents appear at the import's commit or never, and a failure leaves no trace."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from workbench import trec
from workbench.services import campaigns, importing
from workbench.store.models import Document, Judgement, StagedDocument, User

from .conftest import row_counts

GUARD_S = 60.0
"""How long a test waits for another thread before it fails (a hang guard, not a timing)."""


@pytest.fixture
def campaign_id(store) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        session.add(User(username="ann", password_hash="x"))
        return campaign.id


def write_documents(path: Path, count: int, *, text_bytes: int = 2000) -> Path:
    with path.open("w") as out:
        for k in range(count):
            out.write(json.dumps({"docno": f"doc-{k}", "text": "w" * text_bytes}) + "\n")
    return path


def judge(store, campaign_id: int) -> None:
    with store.session() as session:
        user = session.scalar(select(User).where(User.username == "ann"))
        assert user is not None
        session.add(
            Judgement(campaign_id=campaign_id, qid="1", docno="doc-1", user_id=user.id, grade=1)
        )


def campaign_documents(store, campaign_id: int) -> int:
    with store.read_session() as session:
        query = select(func.count()).where(Document.campaign_id == campaign_id)
        return session.scalar(query) or 0


def test_a_judgement_is_written_while_a_document_import_is_being_read(
    store, campaign_id, tmp_path, monkeypatch
):
    """The import stops in the middle of its file (after some staged batches) until a
    judgement has been written by another thread: it would wait forever if the import held
    the write lock while reading."""
    path = write_documents(tmp_path / "big.jsonl", 2000)  # 4 MB: several staged batches
    reading, resume = threading.Event(), threading.Event()
    real = importing.read_documents

    def paused(*args, **kwargs):
        for number, document in enumerate(real(*args, **kwargs)):
            if number == 1500:
                reading.set()
                assert resume.wait(GUARD_S)
            yield document

    monkeypatch.setattr(importing, "read_documents", paused)
    staged: list[importing.StagedDocuments] = []
    reader = threading.Thread(
        target=lambda: staged.append(importing.stage_documents(store, [path])), daemon=True
    )
    reader.start()
    assert reading.wait(GUARD_S)
    with store.read_session() as session:  # batches already written, none of them visible
        assert session.scalar(select(func.count()).select_from(StagedDocument)) > 0
    judged = threading.Event()
    writer = threading.Thread(target=lambda: (judge(store, campaign_id), judged.set()))
    writer.start()
    assert judged.wait(GUARD_S), "the judgement waited for the document import"
    resume.set()
    reader.join(GUARD_S)
    assert campaign_documents(store, campaign_id) == 0
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        report = importing.import_documents(session, campaign, staged[0])
        assert (report.added, report.lines, report.files) == (2000, 2000, 1)
    importing.discard_staged(store, staged[0].batch)
    assert campaign_documents(store, campaign_id) == 2000
    with store.read_session() as session:
        assert session.scalar(select(func.count()).select_from(StagedDocument)) == 0
        texts = session.scalars(select(Document.docno).order_by(Document.id).limit(3)).all()
        assert texts == ["doc-0", "doc-1", "doc-2"]  # file order


def test_a_bad_file_found_after_staged_batches_leaves_no_trace(store, campaign_id, tmp_path):
    path = write_documents(tmp_path / "bad.jsonl", 1500)
    with path.open("a") as out:
        out.write('{"docno": "broken"\n')
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises(trec.TrecFormatError, match=f"{path}:1501: expected a JSON object"):
        importing.stage_documents(store, [path])
    with store.read_session() as session:
        assert row_counts(session) == before


def test_a_refused_import_of_staged_documents_changes_nothing(store, campaign_id, tmp_path):
    first = write_documents(tmp_path / "first.jsonl", 3, text_bytes=5)
    with store.session() as session:
        importing.import_documents(session, campaigns.get_campaign(session, campaign_id), [first])
    judge(store, campaign_id)
    changed = write_documents(tmp_path / "changed.jsonl", 3000, text_bytes=50)
    with store.read_session() as session:
        before = row_counts(session)
    refused = pytest.raises(importing.ServiceError, match=r"changed\.jsonl: document 'doc-1'")
    with importing.staged_documents(store, [changed]) as staged, refused, store.session() as s:
        importing.import_documents(s, campaigns.get_campaign(s, campaign_id), staged)
    with store.read_session() as session:
        assert row_counts(session) == before


def test_rows_of_an_import_that_died_are_deleted_by_the_next_one(store, campaign_id, tmp_path):
    old = dt.datetime(2000, 1, 1)
    with store.session() as session:
        session.add(StagedDocument(batch="dead", docno="x", staged_at=old))
        session.add(StagedDocument(batch="alive", docno="y"))
    path = write_documents(tmp_path / "one.jsonl", 1, text_bytes=5)
    with importing.staged_documents(store, [path]), store.read_session() as session:
        batches = set(session.scalars(select(StagedDocument.batch)))
    assert "dead" not in batches and "alive" in batches


def test_pools_do_not_import_the_importers() -> None:
    """The run blobs' codec lives in the store: services.pools needs nothing of
    services.importing (which uses pools), so the two modules form no cycle."""
    import subprocess
    import sys

    code = (
        "import sys, workbench.services.pools\n"
        "assert 'workbench.services.importing' not in sys.modules, 'cycle'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
