"""Estimates from sampled judgements and stopping rules on W-adhoc (issue 28, §2 and §3).

Generates W-adhoc (`workloads.generate_adhoc`: 20 runs x 50 topics, depth 100) and runs the
two simulations behind `workbench simulate-estimates` and `workbench simulate-stopping`:

- estimates: the uniform, stratified and prior designs and the adaptive strategies mm, hedge
  and mtf with a reserved sample of 20 % of the budget, at 10 %, 20 % and 30 % of each topic's
  pool, 5 samples per row, 100 bootstrap replicates, seed 1;
- stopping: the strategies mm, hedge, mm-discounted and ts under the knee, hypergeometric,
  target and sample rules (recall target 0.9 at 95 %, reserved sample 20 % of the pool for
  target and sample, rules consulted every 5 judgements), seed 1;

and prints the Markdown tables, the issue's target checks and the CPU time of each. The
tables go to benchmarks/results/estimates-adhoc.md and stopping-adhoc.md. The same tables come
from the commands printed at the start (see README, "Estimates from sampled judgements").

Usage: python benchmarks/bench_estimates.py [--only estimates|stopping]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from workbench import estimate_simulation, simulation, stopping_simulation  # noqa: E402
from workbench.reports.estimates import (  # noqa: E402
    estimate_simulation_table,
    stopping_simulation_table,
)
from workbench.reports.tables import to_markdown  # noqa: E402
from workbench.trec import read_qrels, read_run  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results"
DESIGNS = ["uniform", "stratified", "prior"]
ESTIMATE_STRATEGIES = ["mm", "hedge", "mtf"]
STOPPING_STRATEGIES = ["mm", "hedge", "mm-discounted", "ts"]
RULES = ["knee", "hypergeometric", "target", "sample"]


def adhoc() -> tuple[dict, list, Path, list[Path]]:
    from workloads import generate_adhoc

    run_paths, qrels_path = generate_adhoc(DATA, n_runs=20, n_topics=50, depth=100)
    runs = [read_run(p) for p in run_paths]
    return read_qrels(qrels_path).to_dict(), runs, qrels_path, run_paths


def estimate_checks(result: estimate_simulation.EstimateSimulation) -> list[str]:
    """The issue's target at 20 % of the pool: |bias| <= 0.01, RMSE <= 0.02, tau >= 0.9."""
    lines = []
    for r in result.results:
        if r.budget != "20%" or r.estimator in ("judged", "infAP"):
            continue
        met = abs(r.bias) <= 0.01 and r.rmse <= 0.02 and r.kendall_tau >= 0.9
        lines.append(
            f"{r.source} {r.estimator} at 20 %: bias {r.bias:+.4f}, RMSE {r.rmse:.4f}, "
            f"tau {r.kendall_tau:.3f}: {'target met' if met else 'target NOT met'}"
        )
    return lines


def stopping_checks(result: stopping_simulation.StoppingSimulation) -> list[str]:
    """The issue's target: recall >= 0.9 on >= 95 % of topics with >= 30 % fewer judgements."""
    return [
        f"{r.strategy} {r.rule}: recall >= 0.9 on {100 * r.reached:.0f} % of topics, "
        f"{100 * (1 - r.judged_share):.1f} % fewer judgements: "
        + ("target met" if r.reached >= 0.95 and r.judged_share <= 0.7 else "target NOT met")
        for r in result.results
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("estimates", "stopping"), default=None)
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    qrels, runs, qrels_path, run_paths = adhoc()
    folder = run_paths[0].parent.relative_to(ROOT)
    files = f"--qrels {qrels_path.relative_to(ROOT)} --runs {folder}/run*.txt"
    if args.only in (None, "estimates"):
        print(
            f"workbench simulate-estimates {files} --designs {','.join(DESIGNS)} "
            f"--methods {','.join(ESTIMATE_STRATEGIES)} --budgets 10%,20%,30% "
            "--sample-share 0.2 --repeats 5 --bootstrap 100 --seed 1 --format md\n"
        )
        started = time.process_time()
        result = estimate_simulation.simulate_estimates(
            qrels,
            runs,
            designs=DESIGNS,
            strategies=ESTIMATE_STRATEGIES,
            budgets=simulation.parse_budgets("10%,20%,30%"),
            sample_share=0.2,
            repeats=5,
            replicates=100,
            seed=1,
        )
        cpu = time.process_time() - started
        table = to_markdown(estimate_simulation_table(result))
        (RESULTS / "estimates-adhoc.md").write_text(table, encoding="utf-8")
        print(table)
        for line in estimate_checks(result):
            print(f"- {line}")
        print(f"- simulation CPU time: {cpu:.1f} s\n")
    if args.only in (None, "stopping"):
        print(
            f"workbench simulate-stopping {files} --methods {','.join(STOPPING_STRATEGIES)} "
            f"--rules {','.join(RULES)} --sample-share 0.2 --seed 1 --format md\n"
        )
        started = time.process_time()
        stops = stopping_simulation.simulate_stopping(
            qrels,
            runs,
            strategies=STOPPING_STRATEGIES,
            rules=RULES,
            sample_share=0.2,
            seed=1,
        )
        cpu = time.process_time() - started
        table = to_markdown(stopping_simulation_table(stops))
        (RESULTS / "stopping-adhoc.md").write_text(table, encoding="utf-8")
        print(table)
        for line in stopping_checks(stops):
            print(f"- {line}")
        print(f"- simulation CPU time: {cpu:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
