"""A campaign evaluation's run path on W-adhoc: loaded runs -> the runs x measures table.

Times what a report does with a campaign's runs once they are read from the store (issue 24,
§4): `evaluation.evaluate_runs` (map, P.10, ndcg_cut.10 over every judged topic, trec_eval
-c) and `evaluation.precision_recall` over the first N runs of W-adhoc
(`workloads.generate_adhoc`: 50 topics x 1,000 documents per run, 75,000 qrels lines).
Each run is a `LoadedRun` holding its `trec.Run` as `store.runs.load_run` gives it (the file
read afresh before each timing, outside it); CPU time, best of ``--repeat``.

Usage: python benchmarks/bench_campaign_evaluation.py [--runs 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from workbench.services.evaluation import evaluate_runs, precision_recall  # noqa: E402
from workbench.services.evaluation_inputs import LoadedRun, NamedQrels  # noqa: E402
from workbench.trec import read_qrels, read_run  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
MEASURES = ["map", "P.10", "ndcg_cut.10"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="how many of W-adhoc's 100 runs")
    parser.add_argument("--repeat", type=int, default=3, help="timings per step (best kept)")
    args = parser.parse_args(argv)
    from workloads import generate_adhoc

    run_paths, qrels_path = generate_adhoc(DATA)
    qrels = NamedQrels("W-adhoc", read_qrels(qrels_path).to_dict())
    best = {"evaluate_runs": float("inf"), "precision_recall": float("inf")}
    for _ in range(args.repeat):  # runs read afresh: nothing derived from them is cached
        runs = [LoadedRun(r.tag, "", True, r) for r in map(read_run, run_paths[: args.runs])]
        start = time.process_time()
        table = evaluate_runs(runs, qrels, MEASURES, campaign="W-adhoc", relevance_level=1)
        middle = time.process_time()
        precision_recall(runs, qrels, table)
        end = time.process_time()
        best["evaluate_runs"] = min(best["evaluate_runs"], middle - start)
        best["precision_recall"] = min(best["precision_recall"], end - middle)
    print(f"W-adhoc, {len(runs)} runs x {len(table.topics_evaluated)} topics, CPU seconds:")
    for step, seconds in best.items():
        print(f"  {step:<17} {seconds:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
