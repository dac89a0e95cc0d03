"""Time ``workbench trec-eval`` against pytrec_eval, ir_measures, ranx and the trec_eval binary.

Every tool runs as a fresh process on the same files and evaluates the same measures
(``map P.10 recall.100,1000 ndcg ndcg_cut.10 recip_rank bpref Rprec``); the whole process is
timed (start-up, parsing, sorting, evaluating, printing). Peak memory is the child's own
``ru_maxrss`` from ``os.wait4``, so it is exact per process. Each measurement is repeated
and the median taken. On W-adhoc every tool evaluates the 100 runs as 100 processes (times
summed, peak memory the largest), and workbench also evaluates them all in one process.

A sanity line compares workbench's per-topic values (``-q``) with pytrec_eval's at 4 dp.

``--workload startup`` times one small run (the bundled example, trec_eval's default measures)
as whole processes, workbench against the trec_eval binary, many times: the start-up cost.
The trec_eval binary is ``--trec-eval PATH``, else ``$WORKBENCH_TREC_EVAL``, else
``trec_eval`` on PATH (a binary built from NIST's sources with -O3).

    python benchmarks/bench_trec_eval.py [--workload marco|adhoc|startup|all] [--repeat N]
        [--tools workbench,pytrec_eval,ir_measures,ranx,trec_eval] [--trec-eval PATH] [--profile]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Run as a script, so this file's directory is on sys.path.
from workloads import DEFAULT_DATA_DIR, generate_adhoc, generate_marco

TREC_EVAL_MEASURES = [
    "map",
    "P.10",
    "recall.100,1000",
    "ndcg",
    "ndcg_cut.10",
    "recip_rank",
    "bpref",
    "Rprec",
]
TOOLS = ("workbench", "pytrec_eval", "ir_measures", "ranx", "trec_eval")

# The usual way to use pytrec_eval on files; prints trec_eval-style lines (per topic with -q).
PYTREC_EVAL_SCRIPT = """
import sys
import pytrec_eval
qrels_path, run_path, per_topic = sys.argv[1], sys.argv[2], sys.argv[3] == "-q"
measures = set(sys.argv[4:])
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = sorted({name for values in results.values() for name in values})
lines = []
for name in names:
    if per_topic:
        for qid in sorted(results):
            lines.append(f"{name:<22}\\t{qid}\\t{results[qid][name]:6.4f}")
    mean = sum(values[name] for values in results.values()) / len(results)
    lines.append(f"{name:<22}\\tall\\t{mean:6.4f}")
print("\\n".join(lines))
"""

# The usual way to use ranx on files.
RANX_SCRIPT = """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
metrics = ["map", "precision@10", "recall@100", "recall@1000", "ndcg", "ndcg@10", "mrr",
           "bpref", "r-precision"]
for name, value in evaluate(qrels, run, metrics).items():
    print(f"{name:<22}\\tall\\t{value:6.4f}")
"""

# The usual way to use ir_measures on files (its default providers: pytrec_eval for these).
IR_MEASURES_SCRIPT = """
import sys
import ir_measures
from ir_measures import AP, P, R, nDCG, RR, Bpref, Rprec
qrels = ir_measures.read_trec_qrels(sys.argv[1])
run = ir_measures.read_trec_run(sys.argv[2])
measures = [AP, P@10, R@100, R@1000, nDCG, nDCG@10, RR, Bpref, Rprec]
for measure, value in ir_measures.calc_aggregate(measures, qrels, run).items():
    print(f"{str(measure):<22}\\tall\\t{value:6.4f}")
"""

# Issue 2's figures (its 2-core machine): wall seconds, peak MiB (None: not given).
REFERENCE = {
    ("W-marco", "trec_eval"): (5.7, 587),
    ("W-marco", "pytrec_eval"): (5.2, 1229),
    ("W-marco", "ranx"): (17.0, 2458),
    ("W-adhoc", "trec_eval"): (3.8, None),
    ("W-adhoc", "pytrec_eval"): (3.7, None),
    ("W-adhoc", "ranx"): (18.0, None),
}


@dataclass(frozen=True)
class Measurement:
    wall: float  # seconds
    cpu: float  # user + system seconds: robust when other processes share the cores
    peak_mib: float


GNU_TIME = "/usr/bin/time"
# The children's environment (set in main()): bytecode cached as an installed package has it.
CHILD_ENV: dict[str, str] = dict(os.environ)


def child_environment(scratch: Path) -> dict[str, str]:
    """This environment with Python's bytecode cache on, kept under ``scratch``.

    ``PYTHONDONTWRITEBYTECODE`` would make every process compile workbench's sources again
    (about 70 ms here), which an installed package never does; the cache goes to a scratch
    directory (``PYTHONPYCACHEPREFIX``) so that the source tree is left as it is.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    return env


def run_process(command: Sequence[str], stdout_path: Path) -> Measurement:
    """Run ``command`` to completion: wall time, CPU time and peak RSS of that process alone.

    The command runs under GNU time, which reports the user+system time and ``ru_maxrss`` of
    its own child: a process forked straight from this (large) Python would carry this
    process's peak RSS into its own across ``exec`` (Linux keeps ``maxrss`` over exec).
    Without GNU time, ``wait4``'s figures are used (peak memory then overstated).
    """
    wrapped = os.access(GNU_TIME, os.X_OK)
    full = [GNU_TIME, "-f", "WBTIME %e %U %S %M", *command] if wrapped else list(command)
    with stdout_path.open("wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(full, stdout=out, stderr=subprocess.PIPE, env=CHILD_ENV)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    err = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {process.returncode}: {err}")
    if wrapped:
        report = [line for line in err.splitlines() if line.startswith("WBTIME ")][-1]
        _, _elapsed, user, system, peak_kib = report.split()
        return Measurement(wall, float(user) + float(system), int(peak_kib) / 1024)
    cpu = usage.ru_utime + usage.ru_stime
    return Measurement(wall, cpu, usage.ru_maxrss / 1024)  # ru_maxrss is in KiB on Linux


def run_sequence(commands: Sequence[Sequence[str]], scratch: Path) -> Measurement:
    """Run the commands one after another: total wall time, largest peak."""
    results = [run_process(c, scratch / f"out{i}.txt") for i, c in enumerate(commands)]
    return Measurement(
        sum(r.wall for r in results),
        sum(r.cpu for r in results),
        max(r.peak_mib for r in results),
    )


def workbench_command(qrels: Path, runs: Sequence[Path], per_topic: bool = False) -> list[str]:
    flags = [arg for m in TREC_EVAL_MEASURES for arg in ("-m", m)]
    return [
        sys.executable,
        "-m",
        "workbench",
        "trec-eval",
        *(["-q"] if per_topic else []),
        *flags,
        str(qrels),
        *map(str, runs),
    ]


def tool_command(tool: str, qrels: Path, run: Path) -> list[str]:
    if tool == "workbench":
        return workbench_command(qrels, [run])
    if tool == "pytrec_eval":
        return [
            sys.executable,
            "-c",
            PYTREC_EVAL_SCRIPT,
            str(qrels),
            str(run),
            "all",
            *TREC_EVAL_MEASURES,
        ]
    if tool == "ranx":
        return [sys.executable, "-c", RANX_SCRIPT, str(qrels), str(run)]
    if tool == "ir_measures":
        return [sys.executable, "-c", IR_MEASURES_SCRIPT, str(qrels), str(run)]
    flags = [arg for m in TREC_EVAL_MEASURES for arg in ("-m", m)]
    return [TREC_EVAL_BINARY[0], *flags, str(qrels), str(run)]


TREC_EVAL_BINARY = ["trec_eval"]  # set from --trec-eval / $WORKBENCH_TREC_EVAL in main()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def bench_startup(tools: Sequence[str], repeat: int, scratch: Path) -> list[str]:
    """Whole-process time on the bundled example (3 topics, 60 lines), default measures."""
    qrels, run = EXAMPLES / "qrels.txt", EXAMPLES / "run.txt"
    commands = {"workbench": [sys.executable, "-m", "workbench", "trec-eval", str(qrels), str(run)]}
    if "trec_eval" in tools:
        commands["trec_eval"] = [TREC_EVAL_BINARY[0], str(qrels), str(run)]
    python = [sys.executable, "-c", "pass"]
    commands["python -c pass"] = python
    commands["python -c 'import numpy'"] = [sys.executable, "-c", "import numpy"]
    samples: dict[str, list[Measurement]] = {label: [] for label in commands}
    for _ in range(repeat):  # interleaved, so that load on the machine hits every tool alike
        for label, command in commands.items():
            samples[label].append(run_process(command, scratch / "out.txt"))
    results = {label: median_measurement(values) for label, values in samples.items()}
    base = results["workbench"]
    lines = [format_row("startup", label, m, base) for label, m in results.items()]
    lines.append(
        "  (wall and cpu in seconds; the python lines are the interpreter's own start-up here,"
        " with and without numpy)"
    )
    lines += [
        startup_summary(base, label, results[label]) for label in results if label != "workbench"
    ]
    return lines


def startup_summary(ours: Measurement, label: str, theirs: Measurement) -> str:
    """workbench's start-up against one baseline: the ratio and the difference in ms."""
    return (
        f"  workbench / {label}: wall {_ratio(ours.wall, theirs.wall)} "
        f"({1000 * (ours.wall - theirs.wall):+.0f} ms), cpu {_ratio(ours.cpu, theirs.cpu)} "
        f"({1000 * (ours.cpu - theirs.cpu):+.0f} ms)"
    )


def median_measurement(samples: Sequence[Measurement]) -> Measurement:
    return Measurement(
        statistics.median(s.wall for s in samples),
        statistics.median(s.cpu for s in samples),
        statistics.median(s.peak_mib for s in samples),
    )


def parse_lines(text: str) -> dict[tuple[str, str], str]:
    """``{(measure, qid): printed value}`` from trec_eval-style output."""
    values = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3:
            values[(fields[0], fields[1])] = fields[2]
    return values


def check_against_pytrec(qrels: Path, runs: Sequence[Path], scratch: Path) -> str:
    """Compare workbench ``-q`` output with pytrec_eval's per-topic values at 4 dp."""
    compared = mismatched = 0
    examples: list[str] = []
    for run in runs:
        ours_out, theirs_out = scratch / "check-ours.txt", scratch / "check-pytrec.txt"
        run_process(workbench_command(qrels, [run], per_topic=True), ours_out)
        pytrec = [sys.executable, "-c", PYTREC_EVAL_SCRIPT, str(qrels), str(run), "-q"]
        run_process([*pytrec, *TREC_EVAL_MEASURES], theirs_out)
        ours = parse_lines(ours_out.read_text())
        theirs = parse_lines(theirs_out.read_text())
        for key, value in theirs.items():
            compared += 1
            if ours.get(key) is None or float(ours[key]) != float(value):
                mismatched += 1
                if len(examples) < 5:
                    examples.append(f"{run.name} {key}: workbench {ours.get(key)} pytrec {value}")
    status = "OK" if mismatched == 0 else "MISMATCH"
    detail = "".join(f"\n    {e}" for e in examples)
    return (
        f"  per-topic check vs pytrec_eval ({len(runs)} run(s)): {compared} values, "
        f"{mismatched} differ at 4 dp: {status}{detail}"
    )


def format_row(workload: str, label: str, m: Measurement, base: Measurement | None) -> str:
    ratio = ""
    if base:
        ratio = " ".join(
            f"{_ratio(a, b):>{width}}"
            for a, b, width in (
                (base.wall, m.wall, 9),
                (base.cpu, m.cpu, 8),
                (base.peak_mib, m.peak_mib, 8),
            )
        )
    return f"{workload:<8} {label:<34} {m.wall:8.3f} {m.cpu:8.2f} {m.peak_mib:9.1f} {ratio}"


def _ratio(ours: float, theirs: float) -> str:
    """ours / theirs to 2 decimals ('-' when theirs is below the clock's resolution)."""
    return f"{ours / theirs:.2f}" if theirs > 0 else "-"


def reference_lines(workload: str, ours: dict[str, Measurement]) -> list[str]:
    """Issue 2's figures, and trec_eval's time here estimated through pytrec_eval's.

    No trec_eval binary here, so its time on this machine is estimated as pytrec_eval's
    time measured in this run times the two tools' ratio in the issue's figures.
    """
    ref = {tool: REFERENCE[(workload, tool)] for tool in ("trec_eval", "pytrec_eval", "ranx")}
    given = "; ".join(
        f"{tool} {wall} s" + (f", {mib} MiB" if mib else "") for tool, (wall, mib) in ref.items()
    )
    lines = [f"  issue 2's figures (their machine): {given}"]
    pytrec = ours.get("pytrec_eval")
    if pytrec and "trec_eval" not in ours:
        factor = ref["trec_eval"][0] / ref["pytrec_eval"][0]
        estimate = pytrec.wall * factor
        mine = ", ".join(
            f"{label} {m.wall / estimate:.2f}" for label, m in ours.items() if "workbench" in label
        )
        lines.append(
            f"  trec_eval here, estimated as pytrec_eval x {factor:.3f} = {estimate:.2f} s; "
            f"workbench / trec_eval: {mine}"
        )
    return lines


def bench_marco(tools: Sequence[str], repeat: int, scratch: Path) -> list[str]:
    run, qrels = generate_marco(DEFAULT_DATA_DIR)
    results = {
        tool: median_measurement(
            [
                run_process(tool_command(tool, qrels, run), scratch / "out.txt")
                for _ in range(repeat)
            ]
        )
        for tool in tools
    }
    base = results.get("workbench")
    lines = [format_row("W-marco", tool, m, base) for tool, m in results.items()]
    lines += reference_lines("W-marco", results)
    if "workbench" in tools and "pytrec_eval" in tools:
        lines.append(check_against_pytrec(qrels, [run], scratch))
    return lines


def bench_adhoc(
    tools: Sequence[str], repeat: int, scratch: Path, check_runs: int, ranx_sample: int
) -> list[str]:
    runs, qrels = generate_adhoc(DEFAULT_DATA_DIR)
    results, labels = {}, {}
    for tool in tools:
        # ranx pays seconds of import and JIT-cache loading per process: time a sample.
        sample = runs[:ranx_sample] if tool == "ranx" and ranx_sample < len(runs) else runs
        commands = [tool_command(tool, qrels, r) for r in sample]
        m = median_measurement([run_sequence(commands, scratch) for _ in range(repeat)])
        scale = len(runs) / len(sample)
        results[tool] = Measurement(m.wall * scale, m.cpu * scale, m.peak_mib)
        labels[tool] = f"{tool} ({len(runs)} processes)"
        if scale != 1:
            labels[tool] = f"{tool} ({len(runs)} processes, from {len(sample)})"
    base = results.get("workbench")
    lines = [format_row("W-adhoc", labels[tool], m, base) for tool, m in results.items()]
    if "workbench" in tools:
        single = median_measurement(
            [
                run_process(workbench_command(qrels, runs), scratch / "out.txt")
                for _ in range(repeat)
            ]
        )
        label = f"workbench (1 process, {len(runs)} runs)"
        lines.append(format_row("W-adhoc", label, single, None))
        results[label] = single
    lines += reference_lines("W-adhoc", results)
    if "workbench" in tools and "pytrec_eval" in tools and check_runs:
        step = max(1, len(runs) // check_runs)
        lines.append(check_against_pytrec(qrels, runs[::step][:check_runs], scratch))
    return lines


def warm_up(tools: Sequence[str], scratch: Path) -> None:
    """One untimed process per tool on a small input: page cache, .pyc and JIT caches."""
    qrels, run = EXAMPLES / "qrels.txt", EXAMPLES / "run.txt"
    for tool in tools:
        run_process(tool_command(tool, qrels, run), scratch / "warm-up.txt")


def profile_workbench(workload: str) -> str:
    """``cProfile`` of one workbench process on the workload, top 30 by cumulative time."""
    if workload == "marco":
        run, qrels = generate_marco(DEFAULT_DATA_DIR)
        runs = [run]
    else:
        runs, qrels = generate_adhoc(DEFAULT_DATA_DIR)
    command = workbench_command(qrels, runs)
    profiled = [sys.executable, "-m", "cProfile", "-s", "cumtime", *command[1:]]
    out = subprocess.run(profiled, capture_output=True, text=True, check=True, env=CHILD_ENV).stdout
    start = out.find("   ncalls")
    return "\n".join(out[start:].splitlines()[:32])


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["marco", "adhoc", "startup", "all"], default="all")
    parser.add_argument(
        "--trec-eval",
        default=os.environ.get("WORKBENCH_TREC_EVAL", "trec_eval"),
        help="the trec_eval binary (default $WORKBENCH_TREC_EVAL, else trec_eval on PATH)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated subset of " + ",".join(TOOLS)
    )
    parser.add_argument(
        "--check-runs", type=int, default=10, help="W-adhoc runs in the pytrec_eval check"
    )
    parser.add_argument(
        "--ranx-sample",
        type=int,
        default=10,
        help="W-adhoc: time ranx on this many runs and scale to all (its start-up is seconds)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of workbench instead of timing"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    workloads = ["startup", "marco", "adhoc"] if args.workload == "all" else [args.workload]
    TREC_EVAL_BINARY[0] = args.trec_eval
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="bench-trec-eval-") as tmp:
            CHILD_ENV.update(child_environment(Path(tmp)))
            for workload in workloads:
                print(f"== cProfile, workbench on W-{workload}\n{profile_workbench(workload)}")
        return 0
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(tools) - set(TOOLS)
    if unknown:
        print(f"unknown tools: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    notes = []
    if "trec_eval" in tools and shutil.which(args.trec_eval) is None:
        tools.remove("trec_eval")
        notes.append(f"trec_eval: no binary {args.trec_eval!r}, skipped")
    header = (
        "workload",
        "tool",
        "wall s",
        "cpu s",
        "peak MiB",
        "wall wb/x",
        "cpu wb/x",
        "mem wb/x",
    )
    print("{:<8} {:<34} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8}".format(*header))
    with tempfile.TemporaryDirectory(prefix="bench-trec-eval-") as tmp:
        scratch = Path(tmp)
        CHILD_ENV.update(child_environment(scratch))
        warm_up(tools, scratch)
        for workload in workloads:
            if workload == "startup":
                lines = bench_startup(tools, max(args.repeat, 21), scratch)
            elif workload == "marco":
                lines = bench_marco(tools, args.repeat, scratch)
            else:
                lines = bench_adhoc(tools, args.repeat, scratch, args.check_runs, args.ranx_sample)
            print("\n".join(lines), flush=True)
    print(
        f"median of {args.repeat}; wb/x = workbench's figure / the tool's (<= 1.0: workbench wins)"
    )
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
