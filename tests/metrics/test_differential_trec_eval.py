"""``workbench trec-eval`` against a real trec_eval binary on random hard cases, byte for byte.

Set ``WORKBENCH_TREC_EVAL=/path/to/trec_eval`` (10.0) and, for ``--compat 9``,
``WORKBENCH_TREC_EVAL_9=/path/to/trec_eval`` (9.0.8), each built from NIST's
usnistgov/trec_eval sources with their own Makefile.
``WORKBENCH_DIFF_CASES`` sets the number of cases per version (default 200) and
``WORKBENCH_DIFF_SEED`` the first seed.  Every case runs in process; every 25th also through
the ``workbench trec-eval`` command.  A failing case is written to a directory named in the
failure, with the command to reproduce it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.metrics.trec_eval_cases import compare, make_case

BUILD_HINT = (
    "point it at a trec_eval binary built from NIST's https://github.com/usnistgov/trec_eval "
    "sources with their Makefile (tag v10.0; v9.0.8 for --compat 9)"
)
CASES = int(os.environ.get("WORKBENCH_DIFF_CASES", "200"))
FIRST_SEED = int(os.environ.get("WORKBENCH_DIFF_SEED", "0"))
COMMAND_EVERY = 25


def _binary(variable: str) -> str:
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{variable} is not set: {BUILD_HINT}")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"{variable}={path} is not an executable file: {BUILD_HINT}")
    return path


def _differential(binary: str, compat: int, tmp_path: Path) -> None:
    failures: list[str] = []
    compared = 0
    for seed in range(FIRST_SEED, FIRST_SEED + CASES):
        compared += 1
        case = make_case(seed, compat)
        directory = tmp_path / f"case-{seed}"
        directory.mkdir()
        why = compare(binary, case, directory, compat, command=seed % COMMAND_EVERY == 0)
        if why is None:
            shutil.rmtree(directory)
            continue
        flag = "--compat 9 " if compat < 10 else ""
        failures.append(
            f"seed {seed}: {why}\n  in {directory}: workbench trec-eval {flag}"
            + " ".join(case.args)
        )
        if len(failures) >= 10:
            break
    print(
        f"\ndifferential vs {binary} (compat {compat}): {compared} cases from seed {FIRST_SEED}, "
        f"{len(failures)} differ"
    )
    assert not failures, f"{len(failures)} case(s) differ:\n" + "\n".join(failures)


def test_same_bytes_as_trec_eval_10(tmp_path: Path) -> None:
    _differential(_binary("WORKBENCH_TREC_EVAL"), 10, tmp_path)


def test_same_bytes_as_trec_eval_9_with_compat_9(tmp_path: Path) -> None:
    _differential(_binary("WORKBENCH_TREC_EVAL_9"), 9, tmp_path)


def test_cases_cover_the_hard_corners() -> None:
    """The generator does produce each kind of case the harness promises to check."""
    cases = [make_case(seed) for seed in range(600)]
    args = [" ".join(case.args) for case in cases]
    for flag in ("-c", "-J", "-l", "-M", "-N", "-q", "all_trec", "qrels_jg", "prefs"):
        assert any(flag in a for a in args), flag
    runs = [case.files["run"] for case in cases if case.rel_format == "qrels"]
    assert any(_has_duplicate(run) for run in runs)
    qrels = [case.files["qrels"] for case in cases if case.rel_format == "qrels"]
    assert any(_has_duplicate(text) for text in qrels)
    assert any(" -2\n" in case.files["qrels"] for case in cases)


def _has_duplicate(text: str) -> bool:
    """Whether a run or qrels text has a (qid, docno) twice (fields 1 and 3)."""
    pairs = [tuple(line.split()[0:3:2]) for line in text.splitlines()]
    return len(pairs) != len(set(pairs))
