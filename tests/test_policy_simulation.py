"""Simulated assessors comparing assignment policies (`workbench.policy_simulation`) and the
`workbench simulate-policies` command."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from tests.conftest import SHARED
from workbench import policy_simulation as sim
from workbench.cli import main

CACM = SHARED / "data" / "cacm"


def test_models_are_confusion_matrices_and_bad_ones_are_refused() -> None:
    model = sim.flip_model("x", 3, flip=0.3, up=0.2)
    assert all(math.isclose(sum(row), 1.0) for row in model.confusion)
    assert model.confusion[0] == pytest.approx((0.7 - 0.2, 0.15 + 0.2, 0.15))
    assert model.answer(0, 0.0) == 0 and model.answer(0, 0.999) == 2
    parsed = sim.parse_models(["a:flip=0.1:seconds=12", "b:matrix=0.9,0.1/0.3,0.7"], 2)
    assert parsed[0].seconds == 12 and parsed[1].confusion == ((0.9, 0.1), (0.3, 0.7))
    for bad in ["a:flip=x", "a:matrix=0.5,0.4/0,1", "a:speed=3", ":flip=0.1", "a:matrix=1"]:
        with pytest.raises(sim.PolicySimulationError):
            sim.parse_models([bad], 2)
    with pytest.raises(sim.PolicySimulationError, match="share a name"):
        sim.parse_models(["a:flip=0.1", "a:flip=0.2"], 2)


def test_policies_parse_from_the_registry() -> None:
    specs = sim.parse_policies(sim.DEFAULT_POLICIES)
    assert [s.policy for s in specs] == ["topics", "topics", "primary", "adaptive"]
    for bad, message in [
        ("nope", "unknown assignment policy"),
        ("topics:judges=2", "no parameter"),
        ("primary:secondary_share=2", "between"),
        ("topics:judges_per_topic", "expected NAME"),
        (" ; ", "no policy"),
    ]:
        with pytest.raises(sim.PolicySimulationError, match=message):
            sim.parse_policies(bad)


@pytest.fixture(scope="module")
def generated() -> sim.Collection:
    return sim.generated_collection(topics=12, universe=200, runs=8, seed=3)


def _run(collection, policies, panel, adjudicator, reps=2):  # type: ignore[no-untyped-def]
    return {
        r.policy: r
        for r in sim.simulate_policies(
            [collection],
            sim.parse_policies(policies),
            panel,
            adjudicator=adjudicator,
            depth=10,
            repetitions=reps,
            seed=1,
        ).results
    }


def test_perfect_assessors_make_the_true_qrels(generated) -> None:
    perfect = [sim.flip_model(n, 3, flip=0.0) for n in ("a", "b", "c")]
    results = _run(generated, sim.DEFAULT_POLICIES, perfect, sim.flip_model("adj", 3, flip=0.0))
    for r in results.values():
        assert r.qrels_error == 0 and r.tau == pytest.approx(1.0) and r.adjudications == 0
    pooled = results["topics:judges_per_topic=1"].pool_documents
    assert results["topics:judges_per_topic=1"].judgements == pooled
    assert results["topics:judges_per_topic=2"].judgements == 2 * pooled
    assert results["adaptive:distance=0:max_judges=3"].judgements == 2 * pooled  # never disagree
    assert results["topics:judges_per_topic=2"].kappa == 1.0


def test_policies_trade_judgements_for_agreement_and_qrels_error(generated) -> None:
    panel = sim.default_panel(3)
    results = _run(generated, sim.DEFAULT_POLICIES, panel, sim.flip_model("adj", 3, flip=0.0))
    one = results["topics:judges_per_topic=1"]
    two = results["topics:judges_per_topic=2"]
    primary = results["primary:secondary_share=0.1"]
    adaptive = results["adaptive:distance=0:max_judges=3"]
    pooled = one.pool_documents
    assert one.overlap_documents == 0 and math.isnan(one.kappa)
    assert primary.judgements == pytest.approx(pooled + primary.overlap_documents)
    assert 0.09 * pooled <= primary.overlap_documents <= 0.15 * pooled
    assert primary.kappa_high - primary.kappa_low > two.kappa_high - two.kappa_low  # wider
    assert 2 * pooled < adaptive.judgements <= 3 * pooled
    assert adaptive.adjudications < two.adjudications  # the third judge settles most ties
    assert two.qrels_error < one.qrels_error and adaptive.qrels_error < one.qrels_error


@pytest.mark.skipif(not CACM.is_dir(), reason=f"CACM not found at {CACM} (../shared is absent)")
def test_simulate_policies_command_on_cacm_and_a_generated_collection() -> None:
    result = CliRunner().invoke(
        main,
        [
            "simulate-policies",
            "--cacm",
            str(CACM),
            "--topics",
            "6",
            "--repetitions",
            "1",
            "--policies",
            "topics:judges_per_topic=2; primary",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {(r["collection"], r["policy"]) for r in data["results"]}
    assert rows == {
        (c, p) for c in ("CACM", "generated") for p in ("topics:judges_per_topic=2", "primary")
    }
    assert any("CACM: 52 topics, 15 runs" in n for n in data["notes"])
    bad = CliRunner().invoke(main, ["simulate-policies", "--no-generated"])
    assert bad.exit_code == 1 and "choose a collection" in bad.output
    wrong = CliRunner().invoke(main, ["simulate-policies", "--assessor", "x:flip=2"])
    assert wrong.exit_code == 1 and "flip" in wrong.output
