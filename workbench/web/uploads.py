"""Uploads: their folders, removed even when a worker dies, and the imports of large uploads
(runs, documents) as background tasks, with a page that follows them.

A request removes its folder when it ends; a worker killed mid-request (kill -9, out of
memory) cannot, so each folder's name carries the worker's process id and every new upload
first removes the folders of processes that no longer run.

A run or document upload is saved to a folder of its own and imported by a task
(`services.jobs`) in the report jobs' child process, so that reading and checking a large
file neither holds a request thread nor competes with the request threads for the
interpreter lock. The upload request waits at most REPORT_JOB_WAIT_SECONDS for the task,
then shows its outcome (the import's summary, or its error naming file and line) or sends the
admin to the task's page, which reloads itself until the import has ended. The task removes
its folder when it ends; folders older than TASK_FOLDER_TTL_S are removed as orphans.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import abort, flash, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import FileStorage
from werkzeug.utils import secure_filename

from workbench.permissions import Permission
from workbench.services import campaigns, document_imports, jobs, run_imports
from workbench.services.errors import ServiceError
from workbench.services.store_handle import Store
from workbench.trec import TrecFormatError
from workbench.web import report_jobs
from workbench.web.access import GuardedBlueprint
from workbench.web.db import get_store

PREFIX = "upload-"
TASK_PREFIX = "task-"
TASK_KIND = "import"
TASK_UPLOADS = ("runs", "documents")
"""The upload kinds imported by a task (the others are small: imported in the request)."""
TASK_FOLDER_TTL_S = 2 * 86_400.0

bp = GuardedBlueprint("uploads", __name__, "/admin/campaigns", permission=Permission.ADMINISTER)


def uploads_root() -> Path:
    """$TMPDIR/workbench-uploads-<uid>: one per user of the machine."""
    return Path(tempfile.gettempdir()) / f"workbench-uploads-{os.getuid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(root: Path | None = None) -> list[Path]:
    """Remove the upload folders of processes that are gone, and task folders older than
    TASK_FOLDER_TTL_S; returns them."""
    root = root or uploads_root()
    removed = []
    for folder in root.glob(f"{PREFIX}*") if root.is_dir() else ():
        pid = folder.name[len(PREFIX) :].partition("-")[0]
        if pid.isdecimal() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    horizon = time.time() - TASK_FOLDER_TTL_S
    for folder in root.glob(f"{TASK_PREFIX}*") if root.is_dir() else ():
        if folder.stat().st_mtime < horizon:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextmanager
def upload_folder(root: Path | None = None) -> Iterator[str]:
    """A new private folder for one request's uploads, removed when the request ends."""
    root = root or uploads_root()
    root.mkdir(mode=0o700, exist_ok=True)
    remove_orphans(root)
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-", dir=root) as folder:
        yield folder


def save_uploads(files: list[FileStorage], folder: Path) -> list[Path]:
    """Store uploads under their own (sanitised, at most 100 characters, the end kept for the
    suffixes) names so importer messages name them."""
    paths = []
    for number, upload in enumerate(files):
        name = secure_filename(upload.filename or "")[-100:] or f"upload-{number}"
        path = folder / f"{number}" / name
        path.parent.mkdir()
        upload.save(path)
        paths.append(path)
    return paths


def named(message: str, paths: list[Path]) -> str:
    """The importer's message with each temporary upload path shown as the uploaded name."""
    for path in paths:
        message = message.replace(str(path), path.name)
    return message


# ------------------------------------------------------------------------- import tasks


def saved_for_task(files: list[FileStorage]) -> tuple[Path, list[Path]]:
    """A new task folder holding the uploads (`save_uploads`), for a task to import and then
    remove; (folder, the saved paths)."""
    root = uploads_root()
    root.mkdir(mode=0o700, exist_ok=True)
    remove_orphans(root)
    folder = Path(tempfile.mkdtemp(prefix=TASK_PREFIX, dir=root))
    try:
        return folder, save_uploads(files, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def import_in_background(
    campaign_id: int, kind: str, files: list[FileStorage], options: dict[str, Any]
) -> ResponseReturnValue | None:
    """Save the uploads and import them in a task: a redirect to the campaign with the
    import's summary, or to the task's page while it runs; None (with the error flashed)
    when the import was refused, for the caller to show the campaign page with a 400."""
    folder, paths = saved_for_task(files)
    params = {
        "upload": uuid.uuid4().hex,
        "kind": kind,
        "folder": str(folder),
        "files": [str(path.relative_to(folder)) for path in paths],
        "options": options,
    }
    state = report_jobs.request(TASK_KIND, campaign_id, params)
    return outcome(campaign_id, state)


def task_page(campaign_id: int, state: jobs.JobState) -> ResponseReturnValue:
    """A redirect to the page that follows a pending task until it has ended."""
    return redirect(url_for("uploads.task", campaign_id=campaign_id, job_id=state.id), 303)


def outcome(
    campaign_id: int, state: jobs.JobState, done: str | None = None
) -> ResponseReturnValue | None:
    """What a task's request shows: its page while it runs; once done, its summary flashed
    and a redirect to `done` (default: the campaign); None, with the error flashed, when it
    was refused."""
    if state.pending:
        return task_page(campaign_id, state)
    if state.status == jobs.FAILED:
        flash(state.error, "error")
        jobs.forget(get_store(), state.id)
        return None
    for report in json.loads(state.result or b"[]"):
        flash(report["summary"], "info")
        for warning in report["warnings"]:
            flash(warning, "warning")
    jobs.forget(get_store(), state.id)
    return redirect(done or url_for("admin.campaign", campaign_id=campaign_id), 303)


@bp.get("/<int:campaign_id>/imports/<int:job_id>")
def task(campaign_id: int, job_id: int) -> ResponseReturnValue:
    """The import task's progress, reloading itself; its outcome once it has ended."""
    found = jobs.task_state(get_store(), campaign_id, job_id)
    if found is None:
        abort(404)
    state = report_jobs.request(found[0], campaign_id, found[1], wait=0)
    if not state.pending:  # its outcome (or refusal) flashed on the campaign page
        shown = outcome(campaign_id, state, found[1].get("done"))
        return shown or redirect(url_for("admin.campaign", campaign_id=campaign_id), 303)
    with get_store().read_session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        name = campaign.name
    return render_template(
        "admin/import_task.html",
        campaign={"id": campaign_id, "name": name},
        state=state,
        kind=found[1]["kind"],
        reload_url=url_for("uploads.task", campaign_id=campaign_id, job_id=job_id),
    )


def _import_task(
    store: Store, campaign_id: int, params: dict[str, Any], progress: jobs.Progress
) -> bytes:
    """Import the saved uploads (in the job's child process); the reports as JSON. Refusals
    and unreadable files raise ServiceError with the uploaded names in the message."""
    folder = Path(params["folder"])
    paths = [folder / name for name in params["files"]]
    kind, options = params["kind"], params["options"]
    try:
        progress(f"reading the {kind}")
        if kind == "runs":  # written in short transactions, shown all at once at the end
            prepared = run_imports.prepare_runs(paths, split_tags=options["split_tags"])
            progress(f"storing the {kind}")
            report = run_imports.import_runs_in_steps(store, campaign_id, prepared, **options)
        else:  # likewise
            report = document_imports.import_documents_in_steps(
                store, campaign_id, paths, progress=progress, **options
            )
    except (ServiceError, TrecFormatError) as error:
        raise ServiceError(named(str(error), paths)) from None
    except (EOFError, OSError, zlib.error) as error:  # a corrupt or truncated .gz
        message = f"cannot read the upload: {error}; nothing was imported"
        raise ServiceError(named(message, paths)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    shown = {
        "summary": report.summary(),
        "warnings": [named(warning, paths) for warning in report.warnings],
    }
    return json.dumps([shown]).encode()


def _abandoned_import(store: Store, campaign_id: int, params: dict[str, Any]) -> None:
    """After the importing process died or was stopped: remove the saved uploads and the
    rows of its unfinished document import at once (not at the next import)."""
    shutil.rmtree(params["folder"], ignore_errors=True)
    if params["kind"] == "documents":
        document_imports.clear_dead_document_imports(store, campaign_id)


jobs.register_task(TASK_KIND, _import_task, abandoned=_abandoned_import)
