"""Probes that tell where a stall of the judgements came from, for the load benchmarks'
timelines: this process (the load generator) falling behind its own clock, its garbage
collector, a separate process on the same machine falling behind (the machine itself), and,
on PostgreSQL, the longest-running judgement INSERT and what it waits for.

Each probe records events (time.monotonic, seconds, detail) in memory; `events()` returns
those at least `threshold` long. Nothing here is measured in the benchmark's own figures.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
from typing import Any

TICK_S = 0.01
MACHINE_PROBE = """
import sys, time
tick, threshold = float(sys.argv[1]), float(sys.argv[2])
while True:
    before = time.monotonic()
    time.sleep(tick)
    late = time.monotonic() - before - tick
    if late >= threshold:
        print(f"{before:.4f} {late:.4f}", flush=True)
"""
PG_LONGEST = """
select coalesce(extract(epoch from max(now() - query_start)), 0),
       string_agg(distinct coalesce(wait_event_type || ':' || wait_event, 'cpu'), ',')
  from pg_stat_activity
 where state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'
   and query ilike 'insert into judgements%'
"""

Event = tuple[float, float, str]


class StallProbes:
    """Start with `start()`, stop with `stop()`, then read `events()`."""

    def __init__(self, *, threshold: float = 0.1, postgres_url: str | None = None) -> None:
        self.threshold = threshold
        self.postgres_url = postgres_url
        self._events: list[Event] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._machine: subprocess.Popen[str] | None = None
        self._gc_started = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._on_gc)
        self._threads = [threading.Thread(target=self._tick, daemon=True)]
        if self.postgres_url is not None:
            self._threads.append(threading.Thread(target=self._postgres, daemon=True))
        for thread in self._threads:
            thread.start()
        self._machine = subprocess.Popen(
            [sys.executable, "-c", MACHINE_PROBE, str(TICK_S), str(self.threshold)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> None:
        self._stop.set()
        gc.callbacks.remove(self._on_gc)
        for thread in self._threads:
            thread.join()
        if self._machine is not None:
            self._machine.terminate()
            output, _ = self._machine.communicate()
            for line in output.splitlines():
                at, late = line.split()
                self._events.append((float(at), float(late), "machine: a separate process late"))

    def events(self) -> list[Event]:
        return sorted(e for e in self._events if e[1] >= self.threshold)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.monotonic()
        elif info.get("generation") == 2:
            took = time.monotonic() - self._gc_started
            self._events.append((self._gc_started, took, "generator: full garbage collection"))

    def _tick(self) -> None:
        while not self._stop.is_set():
            before = time.monotonic()
            time.sleep(TICK_S)
            late = time.monotonic() - before - TICK_S
            if late >= self.threshold:
                self._events.append((before, late, "generator: its probe thread late"))

    def _postgres(self) -> None:
        import psycopg

        assert self.postgres_url is not None
        dsn = self.postgres_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, autocommit=True) as connection:
            while not self._stop.is_set():
                at = time.monotonic()
                longest, waits = connection.execute(PG_LONGEST).fetchone() or (0, None)
                if float(longest) >= self.threshold:
                    where = f"postgres: a judgement's INSERT, {waits}"
                    self._events.append((at, float(longest), where))
                time.sleep(0.05)
