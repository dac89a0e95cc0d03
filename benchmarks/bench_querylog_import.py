"""Peak memory and time of `workbench querylog import` on a generated log (a fresh process).

Generates a JSONL log of --impressions impressions (--queries distinct queries matching the
campaign's topics or not, --users users, 10 results and up to 3 clicks each), makes a SQLite
store with a campaign and its topics, then runs `python -m workbench querylog import` in a
child process and reports its wall time, CPU time and peak RSS (ru_maxrss from os.wait4: the
child alone). The import used to hold every impression in memory (573 MB for 200,000); it
now holds a batch of 2,000 rows and the distinct queries and users.

    python benchmarks/bench_querylog_import.py [--impressions 200000] [--queries 500]
        [--users 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_log(path: Path, impressions: int, queries: int, users: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    query_of = rng.integers(0, queries, impressions)
    user_of = rng.integers(0, users, impressions)
    with path.open("w") as out:
        for k in range(impressions):
            q = int(query_of[k])
            text = f"topic {q % 50}" if q < 50 else f"other query {q}"
            results = [{"docno": f"D{(q * 7 + r) % 5000}", "rank": r + 1} for r in range(10)]
            clicked = rng.choice(10, size=int(rng.integers(0, 4)), replace=False)
            clicks = [
                {"docno": results[int(c)]["docno"], "time": 1000.0 + k + int(c)} for c in clicked
            ]
            line = {
                "session": f"s{k // 5}",
                "user": f"u{int(user_of[k])}",
                "query": text,
                "time": 1000 + k,
                "results": results,
                "clicks": clicks,
            }
            out.write(json.dumps(line) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impressions", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--users", type=int, default=20_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="workbench-qlog-") as tmp:
        folder = Path(tmp)
        log = folder / "log.jsonl"
        write_log(log, options.impressions, options.queries, options.users)
        topics = folder / "topics.tsv"
        topics.write_text("".join(f"T{t}\ttopic {t}\n" for t in range(50)))
        url = f"sqlite:///{folder / 'store.sqlite'}"
        env = {
            **os.environ,
            "WORKBENCH_QUERYLOG_KEY": "11" * 32,
            "WORKBENCH_IMPORT_PRIORITY": "normal",
        }
        setup = [sys.executable, "-m", "workbench", "--db", url]
        subprocess.run(
            [*setup, "campaign", "create", "c"], check=True, env=env, stdout=subprocess.DEVNULL
        )
        subprocess.run(
            [*setup, "import", "topics", "--campaign", "c", str(topics)],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        command = [*setup, "querylog", "import", "--campaign", "c", str(log), "--min-users", "2"]
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("the import failed")
        size = log.stat().st_size / 2**20
    print(f"log: {options.impressions} impressions, {size:.0f} MiB")
    print(
        f"workbench querylog import: wall {wall:.1f} s, "
        f"CPU {usage.ru_utime + usage.ru_stime:.1f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
