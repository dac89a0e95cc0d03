"""Machine judges simulated on CACM and on W-adhoc: per hybrid design and human budget, the
qrels error and the agreement of the MAP ranking with the full qrels' (issue 27).

Runs `workbench.machine_simulation.simulate_machine` (the engine of `workbench
simulate-machine`) on

- CACM (../shared/data/cacm): the 52 topics with a relevant document, the ten lexical runs of
  bench_adaptive_judging.py (BM25 variants, TF-IDF, query likelihood, title-only), a depth-100
  pool (10,957 documents);
- W-adhoc (`workloads.generate_adhoc`): 20 runs x 25 topics x depth 100, graded 0/1/2;

with a machine judge of Cohen's kappa 0.6 against the truth (marginal errors), without and
with 5 % of the non-relevant pooled documents over-rated (adversarial), and prints the
Markdown tables and the target check: with humans judging 10 % of the pool, a hybrid design
reaches Kendall's tau >= 0.93 against the full qrels. Tables go to
benchmarks/results/machine-<dataset>.md.

With --robustness it measures instead the robustness of the judge (the default template,
`workbench.judge_robustness`) against the local test server on CACM: two non-relevant pooled
documents per topic (the best-ranked ones of the BM25 run), each attacked in six ways, graded
under each of the server's behaviours towards instructions (obey, delimited, ignore), with the
marker-like lines of documents neutralised (the default) or not; and how many clean CACM
documents `judge_prompt.suspicion` flags (its false alarms).

Usage: python benchmarks/bench_machine_judges.py [--datasets cacm,adhoc] [--repetitions 5]
       [--kappa 0.6] [--errors marginal|uniform|lenient] [--budgets 0.05,0.1,0.2]
       python benchmarks/bench_machine_judges.py --robustness
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_adaptive_judging import adhoc_inputs, cacm_inputs  # noqa: E402

from workbench import machine_simulation as ms  # noqa: E402
from workbench.reports.machine_simulation import simulation_table  # noqa: E402
from workbench.reports.tables import to_markdown  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
HYBRIDS = ("fill", "uniform", "stratified", "positives", "uncertain", "verify")


def check_target(result: ms.MachineSimulation, budget: float = 0.1, target: float = 0.93) -> str:
    best = max((result.row(d, budget) for d in HYBRIDS), key=lambda r: r.tau)
    reached = "reached" if best.tau >= target else "NOT reached"
    return (
        f"target tau >= {target} at {budget:.0%} human judgements: {reached} by {best.design} "
        f"(mean tau {best.tau:.3f}, least {best.tau_min:.3f}; machine alone "
        f"{result.row('machine', 0.0).tau:.3f}; humans alone "
        f"{result.row('humans', budget).tau:.3f})"
    )


def robustness() -> str:
    from workbench import cacm, judge_prompt, judge_robustness
    from workbench.judge_client import ChatClient, Endpoint
    from workbench.llm_test_server import INJECTIONS, Behaviour, StubServer
    from workbench.tabular import Table, cells

    inputs = cacm_inputs()
    collection = cacm.load(ROOT.parent / "shared" / "data" / "cacm")
    documents = {d.docno: judge_prompt.Document(d.title, d.text) for d in collection.documents}
    topics = {t.qid: judge_prompt.Topic(t.title) for t in collection.topics}
    bm25 = next(run for run in inputs["runs"] if run.tag == "bm25")
    bases = {}
    for qid in sorted(inputs["qrels"], key=int):
        if qid not in bm25:
            continue
        lines = bm25.topic_lines(qid)
        ranked = [d for _, d in sorted(zip(-lines.scores, lines.docnos, strict=True))]
        wrong = [d for d in ranked if inputs["qrels"][qid].get(d, 0) <= 0][:2]
        bases.update({(qid, d): documents[d] for d in wrong})
    scale = [(0, "not relevant"), (1, "relevant")]
    cases = judge_robustness.attack_cases(bases, topics, top=1)
    columns: dict[str, list[judge_robustness.AttackResult]] = {}
    for injection in INJECTIONS:
        for neutralise in (True, False) if injection == "delimited" else (True,):
            with StubServer(Behaviour(injection, logprobs=False)) as server:
                client = ChatClient(Endpoint(server.url, "stub"))
                grades = judge_robustness.grade_cases(
                    client, judge_prompt.DEFAULT_TEMPLATE, scale, {"max_tokens": 200}, cases,
                    neutralise=neutralise,
                )  # fmt: skip
                client.close()
            name = injection + ("" if neutralise else ", markers not neutralised")
            columns[name] = judge_robustness.summarise(cases, grades, top=1)
    flagged_clean = sum(
        1 for d in collection.documents
        if "instructions" in judge_prompt.suspicion(
            judge_prompt.Document(d.title, d.text), judge_prompt.Topic("")).flags
    )  # fmt: skip
    stuffing = [
        "stuffing" in judge_prompt.suspicion(documents[docno], topics[qid]).flags
        for qid in inputs["qrels"] for docno in inputs["qrels"][qid] if docno in documents
    ]  # fmt: skip
    first = next(iter(columns.values()))
    rows = [
        cells(r.attack, r.flagged, *(results[i].inflated for results in columns.values()))
        for i, r in enumerate(first)
    ]
    table = Table(
        ["Attack", "Flagged", *(f"Inflated: {name}" for name in columns)],
        rows,
        caption=f"Robustness on {len(bases)} non-relevant CACM documents (2 per topic): the "
        "share graded above the same document without the attack, per server behaviour",
        digits=3,
    )
    return (
        to_markdown(table)
        + f"\nFalse alarms on clean documents: 'instructions' on {flagged_clean} of "
        f"{len(collection.documents)} CACM documents; 'stuffing' on {sum(stuffing)} of "
        f"{len(stuffing)} judged (topic, document) pairs.\n"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="cacm,adhoc")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--kappa", type=float, default=0.6)
    parser.add_argument("--errors", default="marginal", choices=tuple(ms.ERROR_MODELS))
    parser.add_argument("--budgets", default="0.05,0.1,0.2")
    parser.add_argument("--robustness", action="store_true")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.robustness:
        text = robustness()
        print(text)
        (RESULTS / "machine-robustness.md").write_text(text, encoding="utf-8")
        return 0
    budgets = [float(b) for b in args.budgets.split(",")]
    for name in args.datasets.split(","):
        inputs = {"cacm": cacm_inputs, "adhoc": adhoc_inputs}[name]()
        out = []
        for adversarial in (0.0, 0.02):
            model = ms.MachineModel(args.kappa, args.errors, adversarial=adversarial)
            started = time.process_time()
            result = ms.simulate_machine(
                inputs["qrels"], inputs["runs"], model=model, budgets=budgets,
                repetitions=args.repetitions, seed=1,
            )  # fmt: skip
            seconds = time.process_time() - started
            table = simulation_table(result)
            out.append(f"### {name}, adversarial share {adversarial:.0%}\n\n"
                       + to_markdown(table) + f"\n{check_target(result)}\n"
                       f"({seconds:.0f} s of CPU)\n")  # fmt: skip
            print(out[-1], flush=True)
        suffix = "" if args.errors == "marginal" else f"-{args.errors}"
        (RESULTS / f"machine-{name}{suffix}.md").write_text("\n".join(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
