"""Job children forked from a fork server: `fork("module:function", env)` starts `function()`
in a new process with `env` as its environment and its stdin and stdout on pipes to this
process, like `subprocess.Popen([python, -m, module], stdin=PIPE, stdout=PIPE)`, but forked
from `multiprocessing`'s fork server (one per process, started at the first fork), which
imported the module once. A child costs a fork, not a new interpreter importing numpy, scipy,
SQLAlchemy and the web modules (about a second of CPU each). The function is named, not passed:
this process never imports the module (a web app's process imports none of what its report
jobs use: 2-3 s of CPU at each server's start).

The fork server is a single-threaded process that only imports and forks (the safe way to fork
after importing libraries that may start threads); it exits with this process, and a child
whose stdin closes (this process ending) ends its `main`.

`compute_apart(work)` is the other kind of child: forked from this process itself (sharing
its memory, nothing imported or sent), computing `work()` on another core while this
process goes on, its result pickled back (the evaluation report's independent sections).
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import IO, Generic, Protocol, TypeVar

T = TypeVar("T")

_context = multiprocessing.get_context("forkserver")
_preloaded: set[str] = set()


class Child(Protocol):
    """What the Worker uses of a child: `subprocess.Popen[bytes]` or a `ForkedChild`."""

    stdin: IO[bytes] | None
    stdout: IO[bytes] | None

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class ForkedChild:
    """A forked child as `subprocess.Popen` shows one: pid, pipes, poll, wait, kill."""

    def __init__(
        self, process: multiprocessing.process.BaseProcess, stdin: IO[bytes], stdout: IO[bytes]
    ) -> None:
        self.process = process
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        code = self.process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(f"forked {self.process.name}", timeout or 0.0)
        return code

    def kill(self) -> None:
        self.process.kill()


def fork(main: str, env: Mapping[str, str]) -> ForkedChild:
    """The function `main` names ("module:function") called in a child forked from the fork
    server (which imports the module before its first fork), with `env` as its environment and
    stdin and stdout on pipes to this process."""
    module, _, function = main.partition(":")
    if not (module and function):
        raise ValueError(f"{main!r}: expected 'module:function'")
    if module not in _preloaded:
        _preloaded.add(module)
        # modules named before the fork server starts are imported by it; later ones by each child
        _context.set_forkserver_preload(sorted(_preloaded))
    requests_in, requests_out = os.pipe()
    answers_in, answers_out = os.pipe()
    ends = Connection(requests_in), Connection(answers_out)  # handed to the child
    process = _context.Process(
        target=_child,
        args=(module, function, dict(env), *ends),
        name=f"{module}.{function}",
        daemon=True,  # terminated when this process exits normally; EOF ends it otherwise
    )
    try:
        process.start()
    except BaseException:
        os.close(requests_out)
        os.close(answers_in)
        raise
    finally:
        for end in ends:
            end.close()
    return ForkedChild(process, os.fdopen(requests_out, "wb"), os.fdopen(answers_in, "rb"))


def _child(
    module: str, function: str, env: dict[str, str], requests: Connection, answers: Connection
) -> None:
    """In the child: the environment, stdin and stdout of a `subprocess` child, then
    `module.function()` (the module imported by the fork server already, or here)."""
    _freeze_inherited()
    os.environ.clear()
    os.environ.update(env)
    os.dup2(requests.fileno(), 0)
    os.dup2(answers.fileno(), 1)
    requests.close()
    answers.close()
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the process's own stdin)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    getattr(importlib.import_module(module), function)()


def _freeze_inherited() -> None:
    """In a forked child: the objects it inherited (the fork server's or the parent's
    imports, 100,000s) out of the garbage collector's walks (`gc.freeze`, a constant-time
    move). Unfrozen, the child's first full collection walked them all, 0.1-0.3 s of CPU in
    each report job (`workbench.web.worker_process.freeze_startup_objects` does the same for
    a server's workers)."""
    gc.freeze()


class Apart(Generic[T]):
    """A child computing a value apart (`compute_apart`): `result()` waits for it, `stop()`
    ends it unheard (this process failed meanwhile). Call exactly one of them, once. A
    thread of this process reads the child's answer as it comes, so the child ends (and
    gives its memory back) as soon as it is done."""

    def __init__(self, pid: int | None, source: int | None) -> None:
        self._pid = pid
        self._chunks: list[bytes] = []
        self._reader: threading.Thread | None = None
        if source is not None:
            self._reader = threading.Thread(
                target=self._read, args=(source,), name="apart-reader", daemon=True
            )
            self._reader.start()

    def _read(self, source: int) -> None:
        with os.fdopen(source, "rb") as answer:
            while chunk := answer.read(1 << 20):
                self._chunks.append(chunk)

    def _wait(self) -> int:
        assert self._pid is not None and self._reader is not None
        _, status = os.waitpid(self._pid, 0)
        self._reader.join()
        return status

    def result(self) -> T | None:
        """The child's value, or None when it failed (or none was forked)."""
        if self._pid is None:
            return None
        status = self._wait()
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            return None
        value: T = pickle.loads(b"".join(self._chunks))
        return value

    def stop(self) -> None:
        if self._pid is not None:
            os.kill(self._pid, signal.SIGKILL)
            self._wait()


def compute_apart(work: Callable[[], T]) -> Apart[T]:
    """Start `work()` in a child forked from this process (`os.fork`: the child shares this
    process's memory copy-on-write, so nothing is sent to it, and keeps its CPU priority)
    while this process goes on; `Apart.result()` waits for the child and gives the value it
    pickled through a pipe, or None when the child failed (`work` raised, the child was
    killed, or no fork is possible): the caller then computes it itself.

    The child ends with `os._exit`, running none of this process's exit handlers and
    finalisers: the store connections it inherited belong to this process, and closing or
    using them from the child would break this process's transaction. So `work` must read
    nothing from the store; what it needs is read before the fork."""
    if not hasattr(os, "fork"):
        return Apart(None, None)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return Apart(None, None)
    if pid == 0:  # the child
        code = 1
        try:
            _freeze_inherited()
            os.close(read_end)
            data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return Apart(pid, read_end)
