"""Which process owns a piece of work, and whether that process still runs (pure).

An owner is written as ``host pid start``: the machine's name, the process id and the time
the process started (clock ticks since boot, /proc/<pid>/stat field 22 on Linux; empty
elsewhere), so that a process id reused after the owner's death is not mistaken for it.
Only an owner on this machine can be known dead; one on another machine is left to its
heartbeat.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def _started(pid: int) -> str | None:
    """The start time of process `pid` ('' where /proc does not tell); None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else _alive_without_proc(pid)
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]  # field 22 of the line, 20 after the name


def _alive_without_proc(pid: int) -> str | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return ""
    return ""


def this_process() -> str:
    """The owner string of the calling process."""
    pid = os.getpid()
    return f"{socket.gethostname()} {pid} {_started(pid) or ''}".strip()


def is_dead(owner: str) -> bool:
    """Whether `owner` (`this_process` of some process) is a process of this machine that no
    longer runs: its id is gone, or now belongs to a process started at another time."""
    host, _, rest = owner.partition(" ")
    pid, _, start = rest.partition(" ")
    if host != socket.gethostname() or not pid.isdecimal():
        return False
    now = _started(int(pid))
    return now is None or bool(start and now and now != start)
