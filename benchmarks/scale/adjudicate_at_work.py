"""A merge rule over a store `run_scale.py` filled, while an assessor process judges beside it.

A second process submits a judgement (`judging.submit_judgement`, a random pooled document
of one of the campaign's assignments, a random grade) every `--every` seconds and times each
one; meanwhile this process applies the majority rule (ties higher, as the fill did) to the
whole campaign: in steps (`adjudication_steps.apply_rule_in_steps`, what the web and the
CLI run) or, with --one-transaction, in one write transaction (`adjudication.apply_rule`, as
before). Prints the rule's wall and CPU time, its write transactions, the longest holds of
SQLite's write lock by the rule's process ($WORKBENCH_WRITE_LOCK_LOG), the CPU time of the
rule's process inside each write batch (the hold without the machine's load), and the
judgements' latency while the rule ran (p50/p99/max, how many).

Writes to the store: run it on a copy.

    python benchmarks/scale/adjudicate_at_work.py copy.sqlite [--one-transaction] [--every 0.05]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from workbench.store.db import WRITE_LOCK_LOG_ENV


def judge(url: str, every: float, stop, started, out: str) -> None:  # type: ignore[no-untyped-def]
    """Judge until `stop` is set; write [(start, end), ...] (time.monotonic) to `out`."""
    from sqlalchemy import select

    from workbench.services import judging
    from workbench.store import open_store
    from workbench.store.models import Assignment, PoolEntry

    store = open_store(url)
    rng = random.Random(7)
    with store.read_session() as s:
        made = [
            tuple(row)
            for row in s.execute(
                select(Assignment.id, Assignment.user_id, Assignment.qid, Assignment.pool_id)
            )
        ]
        chosen = rng.sample(made, min(20, len(made)))
        docnos = {
            (pool_id, qid): list(
                s.scalars(
                    select(PoolEntry.docno).where(
                        PoolEntry.pool_id == pool_id, PoolEntry.qid == qid
                    )
                )
            )
            for _, _, qid, pool_id in chosen
        }
    times: list[tuple[float, float]] = []
    started.set()
    while not stop.is_set():
        assignment, user, qid, pool_id = rng.choice(chosen)
        data = judging.JudgementInput(rng.choice(docnos[pool_id, qid]), rng.randrange(3))
        begin = time.monotonic()
        judging.submit_judgement(store, assignment, user, data)
        times.append((begin, time.monotonic()))
        time.sleep(every)
    Path(out).write_text(json.dumps(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a copy of a filled store (it is written)")
    parser.add_argument("--one-transaction", action="store_true", help="the rule as before")
    parser.add_argument("--every", type=float, default=0.05, help="seconds between judgements")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    lock_log = folder / "write-lock.log"
    os.environ[WRITE_LOCK_LOG_ENV] = str(lock_log)  # before any store is opened
    from workbench.services import adjudication, adjudication_steps, campaigns
    from workbench.store import open_store

    url = f"sqlite:///{args.store}"
    store = open_store(url)
    with store.read_session() as s:
        campaign_id = max(c.id for c in campaigns.list_campaigns(s) if c.name.startswith("scale"))
    context = multiprocessing.get_context("spawn")
    stop, started = context.Event(), context.Event()
    out = folder / "judgements.json"
    judging_process = context.Process(target=judge, args=(url, args.every, stop, started, str(out)))
    judging_process.start()
    started.wait()
    time.sleep(2)  # judging before the rule: a baseline
    rule = adjudication.MergeSpec("majority", tie="higher")
    batch_cpu: list[float] = []  # CPU seconds of this process inside each write batch
    batch_connection = store.batch_connection

    @contextmanager
    def timed_batch() -> Iterator[Any]:
        started = time.process_time()
        with batch_connection() as connection:
            yield connection
        batch_cpu.append(time.process_time() - started)

    store.batch_connection = timed_batch  # type: ignore[method-assign]
    wall, cpu = time.monotonic(), time.process_time()
    if args.one_transaction:
        with store.session() as s:
            summary = adjudication.apply_rule(s, campaigns.get_campaign(s, campaign_id), rule)
    else:
        summary = adjudication_steps.apply_rule_in_steps(store, campaign_id, rule)
    ended = time.monotonic()
    wall, cpu = ended - wall, time.process_time() - cpu
    stop.set()
    judging_process.join()
    times = json.loads(out.read_text())
    during = [end - begin for begin, end in times if end >= ended - wall and begin <= ended]
    holds = []
    for line in lock_log.read_text().splitlines() if lock_log.exists() else []:
        held, _at, pid, *_ = line.split(" ")
        if int(pid) == os.getpid():
            holds.append(float(held))
    holds.sort(reverse=True)
    print(summary.message())
    print(
        f"rule ({'one transaction' if args.one_transaction else 'in steps'}): wall {wall:.1f} s,"
        f" CPU {cpu:.1f} s, {summary.transactions} write transaction(s), redecided"
        f" {summary.redecided} topic(s)"
    )
    print(
        "write lock held by the rule's process (s): longest "
        + ", ".join(f"{h:.3f}" for h in holds[:5])
        + f"; {len(holds)} holds >= 5 ms, {sum(holds):.1f} s in all"
    )
    if batch_cpu:
        batch_cpu.sort(reverse=True)
        print(
            "CPU of the rule's process per write batch (s): longest "
            + ", ".join(f"{c:.3f}" for c in batch_cpu[:5])
            + f"; median {np.median(batch_cpu):.3f}"
        )
    if during:
        ms = np.array(during) * 1000
        print(
            f"judgements while the rule ran: {len(ms)}, p50 {np.percentile(ms, 50):.0f} ms, "
            f"p99 {np.percentile(ms, 99):.0f} ms, max {ms.max():.0f} ms"
        )
    else:
        print("judgements while the rule ran: none acknowledged")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
