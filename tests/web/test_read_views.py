"""Admin read views run in read transactions: a judgement submit completes while one is open.

Each case holds an admin GET request inside its store transaction (a service function it calls
is made to wait) and submits a judgement meanwhile. On SQLite a view in a write transaction
holds the database's write lock, so the submit would wait until the view ends.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import World, get_store_of
from workbench.services import adjudication_queue, campaign_pages, exports, pool_statistics
from workbench.services import users as user_service
from workbench.store.models import Document, Judgement, Run
from workbench.web import admin

HOLD_S = 20.0


def _views(world: World) -> list[tuple[str, Any, str]]:
    """(admin GET path, module, function the view calls inside its transaction)."""
    c = world.campaign_id
    return [
        (f"/admin/campaigns/{c}/download/qrels", exports, "export_qrels"),
        (f"/admin/campaigns/{c}/download/log", exports, "export_judgement_log"),
        (f"/admin/campaigns/{c}", pool_statistics, "current_contributions"),
        # the judging figures are computed by a report job (its own read transaction, in
        # the job process): the view's own transaction is held
        (f"/admin/campaigns/{c}/progress", admin, "pool_scope"),
        (f"/admin/campaigns/{c}/assignments", campaign_pages, "assignments_page"),
        ("/admin/users", user_service, "list_users"),
        # the disagreements are found by a report job; the page's window is read in the view
        (f"/reports/{c}/adjudication", adjudication_queue, "withdrawn_note"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_a_judgement_is_stored_while_an_admin_read_view_is_open(
    app: Flask, as_user, world: World, monkeypatch: pytest.MonkeyPatch, case: int
) -> None:
    path, module, name = _views(world)[case]
    admin, alice = as_user("admin"), as_user("alice")
    inside, release = threading.Event(), threading.Event()
    original = getattr(module, name)

    def held(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        release.wait(HOLD_S)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, held)
    statuses: list[int] = []
    reader = threading.Thread(target=lambda: statuses.append(admin.get(path).status_code))
    reader.start()
    try:
        assert inside.wait(HOLD_S), f"{path} never reached {name}"
        submit = alice.post(
            f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
            json={"docno": "D1", "grade": 2, "client_id": f"while-{case}"},
        )
        still_reading = reader.is_alive() and not release.is_set()
    finally:
        release.set()
        reader.join(HOLD_S)
    assert submit.status_code in (200, 201), submit.text
    assert still_reading, "the submit only went through after the read view had ended"
    assert statuses in ([200], [303])  # the page, or a refused export back to its page
    with get_store_of(app).read_session() as session:
        stored = select(func.count()).where(Judgement.client_id == f"while-{case}")
        assert session.scalar(stored) == 1


@pytest.mark.parametrize("kind", ["runs", "documents"])
def test_a_large_upload_is_read_by_a_task_outside_the_server(
    world_url, world: World, monkeypatch: pytest.MonkeyPatch, tmp_path, kind: str
) -> None:
    """A run or document upload is saved and handed to an import task: the request answers
    at once with the task's page (nothing is parsed in the server process: the readers are
    made to fail here), a judgement goes through meanwhile, and the page shows the import's
    summary once the task (in the report jobs' child process) has stored it."""
    import time

    from tests.web.conftest import client_factory, make_app
    from workbench import trec
    from workbench.services import document_imports

    app = make_app(world_url[0], tmp_path, REPORT_JOB_WAIT_SECONDS=0)
    for module, name in ((trec, "read_runs"), (document_imports, "read_documents")):
        monkeypatch.setattr(module, name, _not_in_the_server)
    admin, alice = client_factory(app)("admin"), client_factory(app)("alice")
    upload = tmp_path / ("new.run" if kind == "runs" else "new.jsonl")
    if kind == "runs":
        upload.write_text("T1 Q0 D1 1 9 runC\nT1 Q0 D2 2 8 runC\n")
    else:
        upload.write_text('{"docno": "D99", "title": "new", "text": "new text"}\n')
    with upload.open("rb") as file:
        path = f"/admin/campaigns/{world.campaign_id}/upload/{kind}"
        queued = admin.post(path, data={"files": (file, upload.name)})
    assert queued.status_code == 303 and "/imports/" in queued.location
    submit = alice.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D2", "grade": 1, "client_id": f"during-{kind}"},
    )
    assert submit.status_code == 201, submit.text
    page = admin.get(queued.location)
    deadline = time.monotonic() + 120  # a hang guard: the child process imports the file
    while page.status_code == 200 and time.monotonic() < deadline:
        assert 'id="import-task"' in page.text
        time.sleep(0.2)
        page = admin.get(queued.location)
    assert page.status_code == 303 and page.location.endswith(f"/campaigns/{world.campaign_id}")
    assert f"{kind}: 1 added" in admin.get(page.location).text
    with get_store_of(app).read_session() as session:
        stored = select(func.count()).where(Judgement.client_id == f"during-{kind}")
        assert session.scalar(stored) == 1
        if kind == "runs":
            assert session.scalar(select(Run.id).where(Run.tag == "runC")) is not None
        else:
            assert session.scalar(select(Document.id).where(Document.docno == "D99")) is not None
    get_store_of(app).dispose()


def _not_in_the_server(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("an upload was read in the server process")


def test_a_killed_import_task_is_cleaned_up_at_once(
    world_url, world: World, tmp_path: Path
) -> None:
    """The report jobs' child dies (SIGKILL) while it imports a document upload: the server's
    job thread fails the task and removes its saved upload and the import's hidden rows at
    once; the task's page says what happened and a new upload is accepted."""
    import json
    import os
    import signal
    import time

    from tests.web.conftest import client_factory, make_app
    from workbench.store.models import DocumentImport, DocumentRow, ReportJob

    app = make_app(world_url[0], tmp_path, REPORT_JOB_WAIT_SECONDS=0)
    store = get_store_of(app)
    admin = client_factory(app)("admin")
    with store.read_session() as session:
        before = session.scalar(select(func.count()).select_from(DocumentRow))
    upload = tmp_path / "big.jsonl"
    with upload.open("w") as out:
        for k in range(40_000):
            out.write(json.dumps({"docno": f"B{k}", "text": "word " * 400}) + "\n")
    path = f"/admin/campaigns/{world.campaign_id}/upload/documents"
    with upload.open("rb") as file:
        queued = admin.post(path, data={"files": (file, upload.name)})
    assert queued.status_code == 303 and "/imports/" in queued.location
    deadline = time.monotonic() + 120
    while True:  # until the child has written a batch of hidden rows
        with store.read_session() as session:
            owner = session.scalar(
                select(DocumentImport.owner).where(DocumentImport.state == "open")
            )
            rows = session.scalar(select(func.count()).select_from(DocumentRow))
            params = json.loads(session.scalar(select(ReportJob.params)) or "{}")
        if owner and rows and rows > before + 300:
            break
        assert time.monotonic() < deadline
        time.sleep(0.02)
    folder = Path(params["folder"])
    assert folder.is_dir()
    pid = int(owner.split()[1])
    assert pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    while True:
        with store.read_session() as session:
            imports = session.scalar(select(func.count()).where(DocumentImport.state != "done"))
            rows = session.scalar(select(func.count()).select_from(DocumentRow))
        if not imports and not folder.exists():
            break
        assert time.monotonic() < deadline, (imports, rows, folder.exists())
        time.sleep(0.1)
    with store.read_session() as session:
        assert session.scalar(select(func.count()).select_from(DocumentRow)) == before
    outcome = admin.get(queued.location, follow_redirects=True)
    assert "exited with status -9" in outcome.text
    small = tmp_path / "small.jsonl"
    small.write_text('{"docno": "S1", "text": "small"}\n')
    with small.open("rb") as file:
        again = admin.post(path, data={"files": (file, small.name)})
    page = admin.get(again.location)
    while page.status_code == 200:
        assert time.monotonic() < deadline
        time.sleep(0.2)
        page = admin.get(again.location)
    assert "documents: 1 added" in admin.get(page.location).text
    store.dispose()
