"""Import the W-adhoc runs into a SQLite campaign and build a depth-100 pool, against trectools.

Each side runs as a fresh process on the same 100 run files (50 topics x 1,000 lines each):

- workbench: a new SQLite store (migrated), a campaign, its 50 topics, `import_runs` of all
  100 runs in one transaction, then `build_pool(strategy="depth", depth=100)`;
- trectools: `TrecRun(path)` for every run, then
  `TrecPoolMaker().make_pool(runs, strategy="topX", topX=100)`.

Reported: each side's whole-process wall time and its phases, the ratio, the store's size on
disk, the pool sizes (they may differ by a few documents: trectools breaks score ties at the
depth-100 boundary by docno ascending, trec_eval and workbench by docno descending), and each
process's peak memory (its own ru_maxrss, from os.wait4). Times are medians over --repeat.

    python benchmarks/bench_import_pool.py [--repeat N] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, so this file's directory is on sys.path.
from workloads import DEFAULT_DATA_DIR, generate_adhoc

DEPTH = 100

WORKBENCH_SCRIPT = """
import json, sys, time
from pathlib import Path
start = time.perf_counter()
from workbench.services import campaigns, importing, pools
from workbench.store import open_store
db_path, topics_path, *runs = sys.argv[1:]
store = open_store(f"sqlite:///{db_path}", upgrade=True)
with store.session() as session:
    campaign = campaigns.create_campaign(session, "W-adhoc")
    importing.import_topics(session, campaign, topics_path)
ready = time.perf_counter()
with store.session() as session:
    campaign = campaigns.get_campaign(session, "W-adhoc")
    report = importing.import_runs(session, campaign, runs)
imported = time.perf_counter()
with store.session() as session:
    campaign = campaigns.get_campaign(session, "W-adhoc")
    pool = pools.build_pool(session, campaign, depth=%(depth)d, seed=1)
    size = len(session.execute(
        __import__("sqlalchemy").text("select 1 from pool_entries where pool_id = :p"),
        {"p": pool.id}).all())
pooled = time.perf_counter()
store.dispose()
print(json.dumps({"setup": ready - start, "import": imported - ready, "pool": pooled - imported,
                  "lines": report.lines, "pool_size": size}))
"""

TRECTOOLS_SCRIPT = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
from trectools import TrecPoolMaker, TrecRun
ready = time.perf_counter()
runs = [TrecRun(path) for path in sys.argv[1:]]
read = time.perf_counter()
pool = TrecPoolMaker().make_pool(runs, strategy="topX", topX=%(depth)d)
pooled = time.perf_counter()
size = sum(len(docs) for docs in pool.pool.values())
print(json.dumps({"setup": ready - start, "import": read - ready, "pool": pooled - read,
                  "lines": sum(len(r.run_data) for r in runs), "pool_size": size}))
"""


def run_child(script: str, args: list[str]) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS in MiB, the JSON the child printed) of one fresh process.

    The peak is the child's own ru_maxrss (KiB on Linux) from os.wait4, so each side is
    measured alone (RUSAGE_CHILDREN would be a running maximum over all children).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", script, *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"child failed:\n{err.read().decode()}")
        return wall, usage.ru_maxrss / 1024, json.loads(out.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--sides", default="workbench,trectools")
    options = parser.parse_args()
    runs, qrels = generate_adhoc(options.data_dir)
    run_args = [str(path) for path in runs]
    sides = options.sides.split(",")
    results: dict[str, list[tuple[float, float, dict]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        topics = Path(tmp) / "topics.tsv"
        qids = sorted({line.split()[0] for line in qrels.read_text().splitlines() if line})
        topics.write_text("".join(f"{qid}\ttopic {qid}\n" for qid in qids))
        db_size = 0
        for _ in range(options.repeat):
            for side in sides:
                if side == "workbench":
                    db = Path(tmp) / "store.sqlite"
                    for leftover in Path(tmp).glob("store.sqlite*"):
                        leftover.unlink()
                    script = WORKBENCH_SCRIPT % {"depth": DEPTH}
                    results[side].append(run_child(script, [str(db), str(topics), *run_args]))
                    db_size = sum(p.stat().st_size for p in Path(tmp).glob("store.sqlite*"))
                else:
                    script = TRECTOOLS_SCRIPT % {"depth": DEPTH}
                    results[side].append(run_child(script, run_args))
    report(results, db_size, len(runs))


def peak_of(side_results: list[tuple[float, float, dict]]) -> float:
    return max(peak for _, peak, _ in side_results)


def report(results: dict, db_size: int, n_runs: int) -> None:
    rows = {}
    for side, measured in results.items():
        rows[side] = {
            "wall": statistics.median(w for w, _, _ in measured),
            "import": statistics.median(d["import"] for _, _, d in measured),
            "pool": statistics.median(d["pool"] for _, _, d in measured),
            "setup": statistics.median(d["setup"] for _, _, d in measured),
            "lines": measured[0][2]["lines"],
            "pool_size": measured[0][2]["pool_size"],
        }
    print(f"W-adhoc: {n_runs} runs, depth-{DEPTH} pool")
    header = "side        wall s   setup s  import s  pool s   import+pool s  lines     pool size"
    print(header)
    for side, row in rows.items():
        print(
            f"{side:<11} {row['wall']:7.2f}  {row['setup']:7.2f}  {row['import']:7.2f}  "
            f"{row['pool']:6.2f}   {row['import'] + row['pool']:11.2f}  {row['lines']:<9} "
            f"{row['pool_size']}"
        )
    if "workbench" in rows:
        ours = rows["workbench"]
        print(f"workbench import per run: {1000 * ours['import'] / n_runs:.1f} ms")
        print(f"store size on disk: {db_size / 2**20:.1f} MiB")
    if {"workbench", "trectools"} <= set(rows):
        ours, theirs = rows["workbench"], rows["trectools"]
        print(f"ratio trectools / workbench, whole process: {theirs['wall'] / ours['wall']:.2f}x")
        print(
            "ratio trectools / workbench, import + pool: "
            f"{(theirs['import'] + theirs['pool']) / (ours['import'] + ours['pool']):.2f}x"
        )
    print("peak RSS of each process (MiB):")
    for side in results:
        print(f"  {side}: {peak_of(results[side]):.0f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
