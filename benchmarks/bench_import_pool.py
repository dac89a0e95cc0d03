"""Import the W-adhoc runs into a SQLite campaign and build a depth-100 pool, against trectools.

Each side runs as a fresh process on the same 100 run files (50 topics x 1,000 lines each):

- workbench: a new SQLite store (migrated), a campaign, its 50 topics, `import_runs` of all
  100 runs in one transaction (`--steps`: `import_runs_in_steps`, in short transactions as
  `workbench import runs` and the upload task do, each batch paced while others write), then
  `build_pool(strategy="depth", depth=100)`;
- trectools: `TrecRun(path)` for every run, then
  `TrecPoolMaker().make_pool(runs, strategy="topX", topX=100)`.

The workbench process ends as the `workbench` command does (its objects frozen,
`workbench.bulk.skip_exit_collections`); trectools' as a Python script does. Each side counts
its pool outside the timed phases.

Reported: each side's whole-process wall time and its phases, the ratio, the store's size on
disk, the pool sizes (they may differ by a few documents: trectools breaks score ties at the
depth-100 boundary by docno ascending, trec_eval and workbench by docno descending), and each
process's peak memory (its own ru_maxrss, from os.wait4). Times are medians over --repeat.

    python benchmarks/bench_import_pool.py [--repeat N] [--data-dir DIR] [--steps]
        [--sides workbench,trectools]
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
clock = lambda: (time.perf_counter(), time.process_time())
start = clock()
from workbench.bulk import skip_exit_collections
from workbench.services import campaigns, pools, run_imports, topic_imports
from workbench.store import open_store
from workbench.trec import native
db_path, topics_path, *runs = sys.argv[1:]
store = open_store(f"sqlite:///{db_path}", upgrade=True)
with store.session() as session:
    campaign = campaigns.create_campaign(session, "W-adhoc")
    topic_imports.import_topics(session, campaign, topics_path)
ready = clock()
if %(steps)s:
    report = run_imports.import_runs_in_steps(store, "W-adhoc", runs)
else:
    with store.session() as session:
        campaign = campaigns.get_campaign(session, "W-adhoc")
        report = run_imports.import_runs(session, campaign, runs)
imported = clock()
with store.session() as session:
    campaign = campaigns.get_campaign(session, "W-adhoc")
    pool_id = pools.build_pool(session, campaign, depth=%(depth)d, seed=1).id
pooled = clock()
with store.session() as session:  # counted outside the timed phases (trectools: a len())
    size = session.execute(
        __import__("sqlalchemy").text("select count(*) from pool_entries where pool_id = :p"),
        {"p": pool_id}).scalar_one()
store.dispose()
# the end of a `workbench` command: its objects frozen, the interpreter's exit collections
# skipped (workbench.bulk.skip_exit_collections); trectools' script ends as Python scripts do
skip_exit_collections()
phases = {"setup": (start, ready), "import": (ready, imported), "pool": (imported, pooled)}
print(json.dumps({**{k: b[0] - a[0] for k, (a, b) in phases.items()},
                  **{k + "_cpu": b[1] - a[1] for k, (a, b) in phases.items()},
                  "lines": report.lines, "pool_size": size, "c_reader": native.available()}))
"""

TRECTOOLS_SCRIPT = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
clock = lambda: (time.perf_counter(), time.process_time())
start = clock()
from trectools import TrecPoolMaker, TrecRun
ready = clock()
runs = [TrecRun(path) for path in sys.argv[1:]]
read = clock()
pool = TrecPoolMaker().make_pool(runs, strategy="topX", topX=%(depth)d)
pooled = clock()
size = sum(len(docs) for docs in pool.pool.values())
phases = {"setup": (start, ready), "import": (ready, read), "pool": (read, pooled)}
print(json.dumps({**{k: b[0] - a[0] for k, (a, b) in phases.items()},
                  **{k + "_cpu": b[1] - a[1] for k, (a, b) in phases.items()},
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
    parser.add_argument(
        "--steps", action="store_true", help="workbench imports in short transactions"
    )
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
                    script = WORKBENCH_SCRIPT % {"depth": DEPTH, "steps": options.steps}
                    results[side].append(run_child(script, [str(db), str(topics), *run_args]))
                    db_size = sum(p.stat().st_size for p in Path(tmp).glob("store.sqlite*"))
                else:
                    script = TRECTOOLS_SCRIPT % {"depth": DEPTH}
                    results[side].append(run_child(script, run_args))
    report(results, db_size, len(runs))


def peak_of(side_results: list[tuple[float, float, dict]]) -> float:
    return max(peak for _, peak, _ in side_results)


def report(results: dict, db_size: int, n_runs: int) -> None:
    def median(side: str, key: str) -> float:
        return statistics.median(d[key] for _, _, d in results[side])

    print(f"W-adhoc: {n_runs} runs x 50 topics x 1,000 lines; depth-{DEPTH} pool")
    print("side         process  setup  import  pool  import+pool  (wall s; CPU s below)")
    rows = {}
    for side, measured in results.items():
        wall = statistics.median(w for w, _, _ in measured)
        rows[side] = {k: median(side, k) for k in ("setup", "import", "pool")}
        rows[side] |= {k + "_cpu": median(side, k + "_cpu") for k in ("setup", "import", "pool")}
        rows[side]["wall"] = wall
        r = rows[side]
        print(
            f"{side:<11} {wall:8.2f} {r['setup']:6.2f} {r['import']:7.2f} {r['pool']:5.2f} "
            f"{r['import'] + r['pool']:10.2f}"
        )
        print(
            f"{'  cpu':<11} {'':8} {r['setup_cpu']:6.2f} {r['import_cpu']:7.2f} "
            f"{r['pool_cpu']:5.2f} {r['import_cpu'] + r['pool_cpu']:10.2f}"
        )
        first = measured[0][2]
        print(f"{'':11} lines read {first['lines']}, pool size {first['pool_size']}")
        if first.get("c_reader") is False:
            print(
                f"{'':11} WITHOUT the C run reader (workbench/trec/_fastscan.c not built: "
                "`pip install -e .` compiles it): runs read with numpy, several times slower"
            )
    if "workbench" in rows:
        ours = rows["workbench"]
        print(
            f"workbench import per run: {1000 * ours['import'] / n_runs:.1f} ms wall, "
            f"{1000 * ours['import_cpu'] / n_runs:.1f} ms CPU (all threads)"
        )
        print(f"store size on disk: {db_size / 2**20:.1f} MiB")
    if {"workbench", "trectools"} <= set(rows):
        ours, theirs = rows["workbench"], rows["trectools"]
        for label, key in (("whole process", "wall"),):
            print(f"speed-up over trectools, {label}: {theirs[key] / ours[key]:.2f}x")
        both = ("import", "pool")
        print(
            "speed-up over trectools, import + pool: "
            f"{sum(theirs[k] for k in both) / sum(ours[k] for k in both):.2f}x wall, "
            f"{sum(theirs[k + '_cpu'] for k in both) / sum(ours[k + '_cpu'] for k in both):.2f}x"
            " CPU"
        )
    print("peak RSS of each process (MiB):")
    for side in results:
        print(f"  {side}: {peak_of(results[side]):.0f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
