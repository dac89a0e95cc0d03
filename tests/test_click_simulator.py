"""The click simulator (examples/click_simulator.py) and what click signals recover from it."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from workbench import clicks
from workbench.querylog import normalise_query
from workbench.trec import write_qrels, write_run

REPO = Path(__file__).resolve().parents[1]


def load_simulator():
    name = "click_simulator"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


sim = load_simulator()


def collection(seed: int = 0):
    """20 topics x 30 documents graded 0-2; six runs from good to adversarial."""
    rng = np.random.default_rng(seed)
    qrels, runs, titles = {}, {}, {}
    for t in range(20):
        qid = f"{t + 1}"
        titles[qid] = f"Topic Number {t + 1} about things"
        grades = rng.choice([0, 0, 0, 1, 2], size=30)
        qrels[qid] = {f"D{t}-{i}": int(g) for i, g in enumerate(grades)}
    for r, quality in enumerate([2.0, 1.0, 0.5, 0.0, 0.0, -0.5]):
        runs[f"r{r}"] = {
            q: {d: quality * g + rng.normal() for d, g in docs.items()} for q, docs in qrels.items()
        }
    return qrels, runs, titles


def mapped(impressions, titles):
    """Impressions keyed by qid (the typed query normalised and matched to a title)."""
    by_key = {normalise_query(title): qid for qid, title in titles.items()}
    return [replace(i, query=by_key[normalise_query(i.query)]) for i in impressions]


@pytest.fixture(scope="module", params=sim.MODELS)
def simulated(request):
    qrels, runs, titles = collection()
    model = sim.ClickModel(request.param, max_grade=2)
    log = sim.simulate(qrels, runs, titles, model=model, impressions_per_topic=100, seed=3)
    return qrels, runs, titles, log, model


def test_simulation_is_seeded_and_well_formed(simulated):
    qrels, runs, titles, log, model = simulated
    again = sim.simulate(qrels, runs, titles, model=model, impressions_per_topic=100, seed=3)
    other = sim.simulate(qrels, runs, titles, model=model, impressions_per_topic=100, seed=4)
    assert again == log
    assert [i.clicks for i in again] != [i.clicks for i in other]
    assert len(log) == 20 * 100
    assert all(len(i.results) == 10 for i in log)
    assert {normalise_query(i.query) for i in log} == {normalise_query(t) for t in titles.values()}
    assert len({i.query for i in log}) > len(titles)  # typed in several ways
    times = [i.time for i in log]
    assert times == sorted(times)
    for i, following in zip(log, [*log[1:], None], strict=True):
        click_times = [c.time for c in i.clicks]
        assert click_times == sorted(click_times)
        ends = following.time if following is not None else float("inf")
        assert all(i.time < t < ends for t in click_times)  # before the next list is shown


def test_unknown_model_is_refused():
    qrels, runs, titles = collection()
    with pytest.raises(ValueError, match="click model"):
        sim.simulate(qrels, runs, titles, model=sim.ClickModel("ubm"))


def test_cascade_stops_after_a_satisfying_click():
    rng = np.random.default_rng(0)
    model = sim.ClickModel("cascade", noise=0.0, max_grade=1)
    # a relevant document is always clicked (noise 0) and satisfies with probability 0.8
    stops = [
        len(sim._clicks(["a", "b", "c"], {"a": 1, "b": 1, "c": 1}, model, rng, 0.0)[0])
        for _ in range(2000)
    ]
    assert np.mean(np.array(stops) == 1) == pytest.approx(0.8, abs=0.03)
    # non-relevant documents are never clicked without noise
    assert sim._clicks(["a", "b"], {}, model, rng, 0.0)[0] == []


def test_examination_and_attraction():
    model = sim.ClickModel("pbm", eta=1.0, noise=0.1, max_grade=2)
    assert model.examination(1) == 1.0 and model.examination(4) == 0.25
    assert model.attraction(0) == pytest.approx(0.1)
    assert model.attraction(1) == pytest.approx(0.5)
    assert model.attraction(2) == pytest.approx(0.9)
    assert model.satisfaction(2) == pytest.approx(0.8)


def test_pair_order_accuracy_by_hand():
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    # relevant a, c against non-relevant b and unjudged d: a>b, a=d (1/2), c>b, c<d
    scores = {("q", "a"): 0.5, ("q", "b"): 0.1, ("q", "c"): 0.3, ("q", "d"): 0.5}
    assert sim.pair_order_accuracy(scores, qrels) == pytest.approx(2.5 / 4)


def test_skip_above_preferences_agree_with_the_qrels(simulated):
    qrels, _, titles, log, _ = simulated
    prefs = clicks.aggregate_preferences(mapped(log, titles), clicks.SKIP_ABOVE, min_support=2)
    overall = clicks.pooled_agreement(clicks.preference_agreement(prefs, qrels))
    assert overall.comparable > 100
    assert overall.share > 0.75


def test_click_deviation_orders_documents_better_than_raw_ctr(simulated):
    qrels, _, titles, log, _ = simulated
    log = mapped(log, titles)
    deviation = sim.pair_order_accuracy(clicks.document_deviation(log), qrels)
    ctr = {k: r.value for k, r in clicks.ctr_by_query_document(log).items()}
    raw = sim.pair_order_accuracy(ctr, qrels)
    assert deviation > raw > 0.5


def test_command_line_writes_the_jsonl_log(tmp_path):
    qrels, runs, titles = collection()
    write_qrels(qrels, tmp_path / "qrels.txt")
    (tmp_path / "topics.tsv").write_text(
        "".join(f"{q}\t{t}\n" for q, t in titles.items()), encoding="utf-8"
    )
    for tag, run in runs.items():
        write_run(run, tmp_path / f"{tag}.txt", tag=tag)
    out = tmp_path / "log.jsonl"
    argv = [str(tmp_path / "qrels.txt"), str(tmp_path / "topics.tsv")]
    argv += [str(tmp_path / f"{tag}.txt") for tag in runs]
    assert sim.main([*argv, "-o", str(out), "--impressions", "2", "--model", "cascade"]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 40
    assert [r["rank"] for r in lines[0]["results"]] == list(range(1, 11))
    assert set(lines[0]) == {"session", "user", "query", "time", "results", "clicks"}
