"""The judging simulator against a hand-computed case, and its command."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from workbench import simulation
from workbench.cli import main
from workbench.trec import Run

# One topic, depth 3. Depth order of the pool: d1 d4 d6 (rank 1), d2 d7 (rank 2), d3 d5.
RUNS = {
    "A": {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
    "B": {"1": {"d4": 3.0, "d1": 2.0, "d5": 1.0}},
    "C": {"1": {"d6": 3.0, "d7": 2.0, "d1": 1.0}},
}
QRELS = {"1": {"d1": 1, "d3": 1, "d5": 1, "d9": 1, "d2": 0}}


def runs() -> list[Run]:
    return [Run.from_dict(data, tag=tag) for tag, data in RUNS.items()]


def run_depth(**kw):
    return simulation.simulate(
        QRELS,
        runs(),
        strategies=["depth"],
        budgets=simulation.parse_budgets("50%,100%"),
        depth=3,
        **kw,
    )


def test_relevant_found_and_cost_by_hand():
    result = run_depth()
    assert result.pool_documents == 7 and result.relevant_in_pool == 3
    assert result.relevant_in_qrels == 4  # d9 is never pooled
    half, full = result.results
    # 50%: ceil(3.5) = 4 judgements: d1 d4 d6 d2, one relevant (d1)
    assert (half.judgements, half.relevant_found) == (4, 1)
    assert half.relevant_share == pytest.approx(1 / 3)
    assert (full.judgements, full.relevant_found, full.relevant_share) == (7, 3, 1.0)


def test_ranking_agreement_by_hand():
    # full qrels MAP (R = 4): A (1 + 2/3)/4, B (1/2 + 2/3)/4, C (1/3)/4: A > B > C
    # at 50% (only d1 relevant): A 1, B 1/2, C 1/3: the same order
    half = run_depth().results[0]
    for measure in ("MAP", "nDCG@10"):
        agreement = half.agreement(measure)
        assert (agreement.kendall_tau, agreement.tau_ap, agreement.max_rank_change) == (1, 1, 0)
    # P@10 under the full qrels: A 2/10, B 2/10, C 1/10; at 50%: 1/10 each -> tau-b undefined
    p10 = half.agreement("P@10")
    assert p10.kendall_tau != p10.kendall_tau  # NaN: one ranking is all ties


def test_leave_one_group_out_by_hand():
    half = run_depth().results[0]
    # A out: pool of B, C = d4 d6 d1 d7 d5, 4 judged -> d1 relevant: A's MAP 1 vs 5/12
    # B out: pool of A, C = d1 d6 d2 d7 d3 -> d1: B's MAP 1/2 vs 7/24
    # C out: pool of A, B = d1 d4 d2 d3 d5 -> d1, d3: C's MAP (1/3)/2 vs 1/12
    errors = [1 - 5 / 12, 1 / 2 - 7 / 24, 1 / 6 - 1 / 12]
    assert half.logo_mean_error == pytest.approx(sum(errors) / 3)
    assert half.logo_max_error == pytest.approx(max(errors))
    grouped = simulation.simulate(
        QRELS,
        runs(),
        strategies=["depth"],
        budgets=simulation.parse_budgets("50%"),
        depth=3,
        groups={"A": "g1", "B": "g1"},
    ).results[0]
    # g1 out: pool of C = d6 d7 d1 -> d1: A 1 vs 5/12, B 1/2 vs 7/24; C out as above
    expected = [1 - 5 / 12, 1 / 2 - 7 / 24, 1 / 6 - 1 / 12]
    assert grouped.logo_mean_error == pytest.approx(sum(expected) / 3)


def test_noise_is_the_same_judge_for_every_strategy_and_a_majority_of_reads():
    docnos = [f"d{i}" for i in range(200)]
    full = {d: 1 for d in docnos[:100]}
    once = simulation.noisy_grades("1", docnos, full, level=1, noise=0.2, judges=1, seed=3)
    again = simulation.noisy_grades(
        "1", list(reversed(docnos)), full, level=1, noise=0.2, judges=1, seed=3
    )
    assert once == again
    flipped = sum(once[d] != full.get(d, 0) for d in docnos)
    assert 20 <= flipped <= 60  # about 40 of 200
    majority = simulation.noisy_grades("1", docnos, full, level=1, noise=0.2, judges=5, seed=3)
    assert sum(majority[d] != full.get(d, 0) for d in docnos) < flipped  # 5.8 % expected


def test_strategies_see_the_same_pool_and_all_end_with_everything():
    result = simulation.simulate(
        QRELS,
        runs(),
        strategies=["depth", "mtf", "mtf-cormack", "hedge", "mm-discounted", "ts", "take", "rrf"],
        budgets=simulation.parse_budgets("100%"),
        depth=3,
        reusability=False,
    )
    assert {(r.judgements, r.relevant_found) for r in result.results} == {(7, 3)}
    assert all(r.logo_mean_error is None for r in result.results)


@pytest.mark.parametrize(
    "text",
    ["0%", "101%", "x", "-3", ""],
)
def test_bad_budgets_are_refused(text):
    with pytest.raises(simulation.SimulationError, match="budget"):
        simulation.parse_budgets(text)


def test_budget_counts_are_capped_by_the_pool():
    five, big = simulation.parse_budgets("5,200")
    assert (five.for_pool(7), big.for_pool(7)) == (5, 7)


def test_bad_inputs_are_refused():
    with pytest.raises(simulation.SimulationError, match="at least two runs"):
        simulation.simulate(
            QRELS, runs()[:1], strategies=["depth"], budgets=simulation.parse_budgets("10%")
        )
    with pytest.raises(simulation.SimulationError, match="needs the documents' texts"):
        simulation.simulate(
            QRELS, runs(), strategies=["al"], budgets=simulation.parse_budgets("10%")
        )
    with pytest.raises(simulation.SimulationError, match="noise"):
        simulation.simulate(
            QRELS, runs(), strategies=["depth"], budgets=simulation.parse_budgets("10%"), noise=0.5
        )


def _write_inputs(tmp_path):
    paths = []
    for tag, data in RUNS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(
            "".join(f"1 Q0 {d} {i} {s} {tag}\n" for i, (d, s) in enumerate(data["1"].items(), 1))
        )
        paths.append(str(path))
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"1 0 {d} {g}\n" for d, g in QRELS["1"].items()))
    return str(qrels), paths


def test_the_command_prints_the_table_and_writes_plots(tmp_path):
    qrels, paths = _write_inputs(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            "--qrels",
            qrels,
            "--runs",
            *paths,
            "--methods",
            "depth,mm-discounted",
            "--budgets",
            "50%,100%",
            "--depth",
            "3",
            "--format",
            "csv",
            "--plots",
            str(tmp_path / "plots"),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("strategy,budget,judged,judged %,rel found,rel %,tau MAP")
    assert lines[1].startswith("depth,50%,4,57.14")
    assert (tmp_path / "plots" / "relevant-found.svg").read_text().startswith("<?xml")
    as_json = CliRunner().invoke(
        main,
        [
            "simulate",
            "--qrels",
            qrels,
            "--runs",
            *paths,
            "--strategies",
            "depth",
            "--budgets",
            "100%",
            "--depth",
            "3",
            "--format",
            "json",
            "--no-reusability",
        ],
    )
    document = json.loads(as_json.stdout)  # --strategies: the old spelling of --methods
    assert document["results"][0]["relevant_found"] == 3
    assert as_json.stderr == (
        "warning: --strategies is deprecated: give the adaptive methods as --methods (the old "
        "spelling will be refused in the next release)\n"
    )
    both = CliRunner().invoke(
        main,
        ["simulate", "--qrels", qrels, "--runs", *paths, "--methods", "mm", "--strategies", "ts"],
    )
    assert both.exit_code == 2
    assert "give --methods only (--strategies is its old name)" in both.output


def test_the_command_reports_bad_input_clearly(tmp_path):
    qrels, paths = _write_inputs(tmp_path)
    result = CliRunner().invoke(
        main,
        ["simulate", "--qrels", qrels, "--runs", *paths, "--methods", "nope"],
    )
    assert result.exit_code == 1
    assert "unknown adaptive method 'nope'" in result.output
