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
"""

from __future__ import annotations

import time

from flask import current_app, request
from werkzeug.exceptions import TooManyRequests

HEADER = "X-Request-Start"
RETRY_AFTER_S = 1


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


def shed_queued_scripts() -> None:
    """Before every request: a script's request that waited over SCRIPT_QUEUE_MS in the
    proxy's queue is refused with 429 and Retry-After (nothing is read or stored)."""
    limit_ms = current_app.config.get("SCRIPT_QUEUE_MS") or 0
    if not limit_ms or not current_app.config.get("TRUSTED_PROXIES"):
        return
    if not request.headers.get("Authorization", "").lower().startswith("bearer "):
        return
    waited = queued_seconds(request.headers.get(HEADER), time.time())
    if waited is not None and waited * 1000 > limit_ms:
        raise TooManyRequests(
            f"the servers are busy with assessors' requests: try again in {RETRY_AFTER_S} s",
            retry_after=RETRY_AFTER_S,
        )
