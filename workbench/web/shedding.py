"""Scripts yield to people when the servers are saturated (load shedding by queue time).

A script (a request with `Authorization: Bearer`) posts as fast as it is allowed; fifty of
them keep every app server's threads busy, and then every request, the assessors' too,
waits in the queue (its latency is the number of requests in flight over the throughput).
Behind a proxy that stamps each request with when it arrived (`X-Request-Start: t=<epoch
seconds>`, nginx's `$msec`, set in deploy/nginx.conf), a script's request that already
waited longer than SCRIPT_QUEUE_MS when its turn comes is answered at once with 429 and
`Retry-After: 1`, before its token is looked up or its body read: the script waits and sends
it again (as it does for the judging rate, docs/api.md), and the queue stays short for the
browsers' requests, which are never shed. This is admission control by queueing delay, as
in CoDel's target delay (Nichols and Jacobson, "Controlling Queue Delay", ACM Queue 10(5),
2012) applied per request; the threshold and shedding only token requests are our own
choices. Off (0) by default and without a trusted proxy (TRUSTED_PROXIES): the stamp is
read only from the proxy, whose clock must be the app server's (the same machine, or NTP).

Queue time sees only the requests that wait for a thread; with several threads per process
the scripts' requests are taken at once and then share the cores with the assessors'. So a
process also serves at most SCRIPT_CONCURRENCY script requests at a time (`ScriptSlots`):
the next is answered 429 with `Retry-After: 1` at once, before its token is looked up. This
is a concurrency limit (Little's law: requests in flight = throughput x latency, so bounding
the scripts' share of what is in flight bounds the latency they add to everyone's), the
form of admission control of e.g. Netflix's concurrency-limits library with a fixed limit;
the fixed limit per process is our own choice. Off (0) by default.
"""

from __future__ import annotations

import threading
import time

from flask import Flask, current_app, g, request
from werkzeug.exceptions import TooManyRequests

HEADER = "X-Request-Start"
RETRY_AFTER_S = 1
EXTENSION = "workbench_script_slots"


def queued_seconds(stamp: str | None, now: float) -> float | None:
    """How long ago the proxy received the request: `stamp` is "t=<epoch seconds>" (or the
    bare number), None when absent or not a finite time (the request is then not shed)."""
    if not stamp:
        return None
    value = stamp.strip().removeprefix("t=")
    if len(value) > 32:
        return None
    try:
        started = float(value)
    except ValueError:
        return None
    if not 0 < started < float("inf"):
        return None
    return now - started


def _busy() -> TooManyRequests:
    return TooManyRequests(
        f"the servers are busy with assessors' requests: try again in {RETRY_AFTER_S} s",
        retry_after=RETRY_AFTER_S,
    )


def _is_script() -> bool:
    return request.headers.get("Authorization", "").lower().startswith("bearer ")


def shed_queued_scripts() -> None:
    """Before every request: a script's request that waited over SCRIPT_QUEUE_MS in the
    proxy's queue is refused with 429 and Retry-After (nothing is read or stored)."""
    limit_ms = current_app.config.get("SCRIPT_QUEUE_MS") or 0
    if not limit_ms or not current_app.config.get("TRUSTED_PROXIES") or not _is_script():
        return
    waited = queued_seconds(request.headers.get(HEADER), time.time())
    if waited is not None and waited * 1000 > limit_ms:
        raise _busy()


class ScriptSlots:
    """At most `slots` script requests of this process in progress; `take` is False when all
    are taken (never waits), `give_back` frees one taken slot."""

    def __init__(self, slots: int) -> None:
        self._free = threading.BoundedSemaphore(slots)

    def take(self) -> bool:
        return self._free.acquire(blocking=False)

    def give_back(self) -> None:
        self._free.release()


def limit_concurrent_scripts(app: Flask) -> None:
    """With SCRIPT_CONCURRENCY > 0, a script's request that finds every slot of this process
    taken is answered 429 with Retry-After at once; a taken slot is given back when the
    request ends, whatever its outcome."""
    slots = int(app.config.get("SCRIPT_CONCURRENCY") or 0)
    if slots <= 0:
        return
    app.extensions[EXTENSION] = ScriptSlots(slots)

    @app.before_request
    def _take_a_slot() -> None:
        if not _is_script():
            return
        if not app.extensions[EXTENSION].take():
            raise _busy()
        g.script_slot = True

    @app.teardown_request
    def _give_the_slot_back(_error: BaseException | None) -> None:
        if g.pop("script_slot", False):
            app.extensions[EXTENSION].give_back()
