"""Folders for uploaded files while they are imported, removed even when a worker dies.

A request removes its folder when it ends; a worker killed mid-request (kill -9, out of
memory) cannot, so each folder's name carries the worker's process id and every new upload
first removes the folders of processes that no longer run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "upload-"


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
    """Remove the upload folders of processes that are gone; returns them."""
    root = root or uploads_root()
    removed = []
    for folder in root.glob(f"{PREFIX}*") if root.is_dir() else ():
        pid = folder.name[len(PREFIX) :].partition("-")[0]
        if pid.isdecimal() and int(pid) != os.getpid() and not _alive(int(pid)):
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
