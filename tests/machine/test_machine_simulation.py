"""The machine-judge simulation: the calibrated confusion matrix, the designs' boundaries, the
command (pure; small synthetic collections)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from workbench import machine_simulation as ms
from workbench.cli import main
from workbench.trec import Run

pytestmark = pytest.mark.slow


def test_the_expected_kappa_is_cohens_kappa_of_the_confusion_matrix():
    p = np.array([0.7, 0.2, 0.1])
    for errors in ms.ERROR_MODELS:
        e = ms.error_distribution(errors, [0, 1, 2], 1, p)
        r = ms.keep_rate(0.6, p, e)
        assert ms.expected_kappa(r, p, e) == pytest.approx(0.6, abs=1e-9)
        joint = np.outer(p, (1 - r) * e) + np.diag(r * p)
        truth, machine = np.divmod(np.arange(9), 3)
        weights = joint.ravel()
        assert cohen_kappa_score(truth, machine, sample_weight=weights) == pytest.approx(0.6)
    # marginal errors: the keep rate is the kappa itself
    assert ms.keep_rate(0.6, p, p) == pytest.approx(0.6, abs=1e-9)
    lenient = ms.error_distribution("lenient", [0, 1, 2], 1, p)
    assert lenient.tolist() == [0.0, 0.5, 0.5]


def collection(topics=8, docs=60, runs=6, seed=0):
    """Graded truth and runs of rising quality (run r scores truth * quality + noise)."""
    rng = np.random.default_rng(seed)
    qrels, lines = {}, {r: [] for r in range(runs)}
    for t in range(topics):
        qid = str(t + 1)
        grades = rng.choice([0, 0, 0, 0, 1, 2], size=docs)
        qrels[qid] = {f"d{t}-{i}": int(g) for i, g in enumerate(grades)}
        for r in range(runs):
            scores = grades * (0.3 + r * 0.4) + rng.normal(size=docs)
            for i, s in enumerate(scores):
                lines[r].append((qid, f"d{t}-{i}", float(s)))
    run_objects = []
    for r, rows in lines.items():
        text = "".join(f"{q} Q0 {d} 0 {s:.6f} r{r}\n" for q, d, s in rows)
        run_objects.append((f"r{r}", text))
    return qrels, run_objects


def parsed_runs(run_texts, tmp_path):
    from workbench.trec import read_run

    paths = []
    for tag, text in run_texts:
        path = tmp_path / f"{tag}.txt"
        path.write_text(text)
        paths.append(path)
    return [read_run(p) for p in paths], paths


def test_designs_at_their_boundaries(tmp_path):
    qrels, texts = collection()
    runs, _ = parsed_runs(texts, tmp_path)
    assert all(isinstance(r, Run) for r in runs)
    perfect = ms.simulate_machine(qrels, runs, model=ms.MachineModel(kappa=1.0),
                                  budgets=(0.1, 1.0), repetitions=2)  # fmt: skip
    for row in perfect.rows:  # a perfect machine: every design is exact
        assert row.qrels_error == 0 or row.design == "humans"
        assert row.machine_kappa == pytest.approx(1.0)
    assert perfect.row("machine", 0.0).tau == pytest.approx(1.0)
    noisy = ms.simulate_machine(qrels, runs, model=ms.MachineModel(kappa=0.5),
                                budgets=(0.2, 1.0), repetitions=3, seed=4)  # fmt: skip
    assert 0.4 < noisy.row("machine", 0.0).machine_kappa < 0.6
    full = [noisy.row(d, 1.0) for d in ("humans", "fill", "uniform", "stratified", "verify")]
    assert all(r.qrels_error == 0 and r.tau == pytest.approx(1.0) for r in full)  # all judged
    assert all(r.human_judgements == noisy.pooled for r in full)
    assert noisy.row("humans", 0.2).human_share == pytest.approx(0.2, abs=0.01)
    # hybrids correct the machine where humans judge: less qrels error than the machine alone
    machine_error = noisy.row("machine", 0.0).qrels_error
    for design in ("fill", "uniform", "stratified", "positives", "verify"):
        assert noisy.row(design, 0.2).qrels_error < machine_error


def test_adversarial_documents_and_their_detection(tmp_path):
    qrels, texts = collection(seed=1)
    runs, _ = parsed_runs(texts, tmp_path)
    plain = ms.simulate_machine(qrels, runs, model=ms.MachineModel(0.8), designs=("machine",),
                                repetitions=2)  # fmt: skip
    fooled = ms.simulate_machine(qrels, runs, model=ms.MachineModel(0.8, adversarial=0.3),
                                 designs=("machine", "uniform"), budgets=(0.1,),
                                 repetitions=2)  # fmt: skip
    caught = ms.simulate_machine(
        qrels,
        runs,
        model=ms.MachineModel(0.8, adversarial=0.3, detection=1.0),
        designs=("uniform",),
        budgets=(0.1,),
        repetitions=2,
    )
    assert fooled.row("machine", 0.0).qrels_error > plain.row("machine", 0.0).qrels_error + 0.1
    assert fooled.row("machine", 0.0).machine_kappa < plain.row("machine", 0.0).machine_kappa
    # flagged documents go to humans: more judgements, fewer errors
    assert caught.row("uniform", 0.1).human_judgements > fooled.row("uniform", 0.1).human_judgements
    assert caught.row("uniform", 0.1).qrels_error < fooled.row("uniform", 0.1).qrels_error


def test_bad_input_is_refused(tmp_path):
    qrels, texts = collection()
    runs, _ = parsed_runs(texts, tmp_path)
    for kwargs, message in (
        ({"designs": ("oracle",)}, "unknown design"),
        ({"budgets": (0,)}, "budgets"),
        ({"model": ms.MachineModel(errors="wild")}, "errors"),
        ({"model": ms.MachineModel(kappa=1.5)}, "kappa"),
    ):
        with pytest.raises(ms.MachineSimulationError, match=message):
            ms.simulate_machine(qrels, runs, **kwargs)
    with pytest.raises(ms.MachineSimulationError, match="two runs"):
        ms.simulate_machine(qrels, runs[:1])


def test_the_command(tmp_path):
    qrels, texts = collection()
    _, paths = parsed_runs(texts, tmp_path)
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                                  for d, g in docs.items()))  # fmt: skip
    runner = CliRunner()
    args = ["simulate-machine", "--qrels", str(qrels_path), "--runs", str(paths[0]),
            *map(str, paths[1:]), "--budgets", "10%,0.5", "--repetitions", "2"]  # fmt: skip
    text = runner.invoke(main, args)
    assert text.exit_code == 0, text.output
    assert "tau (MAP)" in text.output and "verify" in text.output
    data = json.loads(runner.invoke(main, [*args, "--format", "json"]).output)
    assert {r["budget"] for r in data["rows"]} == {0.0, 0.1, 0.5}
    bad = runner.invoke(main, [*args, "--budgets", "ten"])
    assert bad.exit_code == 1 and "bad budget 'ten'" in bad.output
