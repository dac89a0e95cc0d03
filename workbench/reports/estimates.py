"""Tables of the estimates from sampled judgements and of the stopping rules: their
simulations (`estimate_simulation`, `stopping_simulation`) and a campaign's estimates
(`services.estimates`)."""

from __future__ import annotations

from workbench.estimate_simulation import EstimateSimulation
from workbench.services.estimates import PoolEstimates
from workbench.stopping_simulation import StoppingSimulation
from workbench.tabular import Table, cells


def pool_estimates_tables(estimates: PoolEstimates) -> list[Table]:
    """The runs' estimated MAP with intervals, and each topic's relevant documents left."""
    level = f"{100 * estimates.confidence:g} %"
    runs = Table(
        ["Run", "statAP", f"statAP {level} interval", "xinfAP", f"xinfAP {level} interval",
         "MAP judged only"],
        [
            cells(
                r.tag, r.statap.estimate, f"{r.statap.low:.4f} - {r.statap.high:.4f}",
                r.xinfap.estimate if r.xinfap else None,
                f"{r.xinfap.low:.4f} - {r.xinfap.high:.4f}" if r.xinfap else None,
                r.judged_map,
            )
            for r in estimates.runs
        ],
        caption=(
            f"MAP estimated from the sample of pool {estimates.pool} of {estimates.campaign} "
            f"({estimates.design}), {estimates.qrels} qrels; statAP and xinfAP are "
            "design-unbiased up to their ratio; 'judged only' counts every unjudged document "
            "non-relevant."
        ),
        label="tab:pool-estimates",
        digits=4,
        notes=list(estimates.notes),
    )  # fmt: skip
    topics = Table(
        ["Topic", "Pool", "Judged", "Relevant judged", "Relevant (est.)", "Left (est.)",
         f"Left {level} interval"],
        [
            cells(
                t.qid, t.pool_size, t.judged, t.judged_relevant, t.relevant_estimate,
                t.left.estimate if t.left else None,
                f"{t.left.low:g} - {t.left.high:g}" if t.left else None,
            )
            for t in estimates.topics
        ],
        caption=(
            "Relevant documents per topic: judged, estimated in the pool (Horvitz-Thompson), "
            "and left unjudged with the exact hypergeometric interval (one sampled stratum) or "
            "a normal one."
        ),
        label="tab:pool-estimates-topics",
        digits=1,
    )  # fmt: skip
    return [runs, topics]


def estimate_simulation_table(simulation: EstimateSimulation) -> Table:
    """Per design or strategy, budget and estimator: bias, RMSE, tau, interval coverage."""
    rows = [
        cells(r.source, r.budget, r.estimator, 100 * r.judged_share, r.bias, r.rmse,
              r.kendall_tau, r.coverage, r.left_estimated, r.left_true, r.left_coverage)
        for r in simulation.results
    ]  # fmt: skip
    level = f"{100 * simulation.confidence:g} %"
    return Table(
        [
            "source",
            "budget",
            "estimator",
            "judged %",
            "bias",
            "RMSE",
            "tau",
            f"{level} cover",
            "left est.",
            "left true",
            "left cover",
        ],
        rows,
        caption=(
            f"MAP estimated from sampled judgements: {simulation.runs} runs, "
            f"{simulation.topics} topics, depth-{simulation.depth} pools of "
            f"{simulation.pool_documents} documents; {simulation.repeats} samples per row, "
            f"{simulation.replicates} bootstrap replicates, seed {simulation.seed}."
        ),
        label="tab:estimates-simulation",
        digits=4,
        notes=[
            "bias and RMSE of MAP-hat against the MAP of the pool judged in full (the estimand; "
            f"it exceeds the full qrels' MAP by {simulation.full_qrels_gap:.4f} on average, "
            "the relevant documents no run retrieves within the depth), over runs and samples; "
            "tau: Kendall's tau-b between the runs' ranking by MAP-hat and by MAP; cover: share "
            f"of the {level} intervals holding the true MAP.",
            "Sources: a sampling design (uniform, stratified by best rank, prior: Poisson by "
            "the AP prior), or an adaptive strategy with a reserved random sample of "
            f"{100 * simulation.sample_share:g} % of the budget: judged = AP on the judged "
            "documents, infAP = trec_eval's (biased: the judged documents are not a uniform "
            "sample), xinfAP and statAP = the two-strata estimates (chosen; unchosen, sampled). "
            "left: relevant documents left unjudged, summed over topics (estimated, true), and "
            "the share of topics whose exact interval holds the truth.",
            *simulation.notes,
        ],
    )


def stopping_simulation_table(simulation: StoppingSimulation) -> Table:
    """Per strategy and rule: recall reached and judgements used."""
    rows = [
        cells(r.strategy, r.rule, 100 * r.reached, r.mean_recall, r.min_recall, r.judgements,
              100 * r.judged_share, 100 * (1 - r.judged_share))
        for r in simulation.results
    ]  # fmt: skip
    target = f"{simulation.target:g}"
    return Table(
        [
            "strategy",
            "rule",
            f"recall >= {target} (% topics)",
            "mean recall",
            "min recall",
            "judgements",
            "judged %",
            "saved %",
        ],
        rows,
        caption=(
            f"Stopping rules: {simulation.runs} runs, {simulation.topics} topics, "
            f"depth-{simulation.depth} pools of {simulation.pool_documents} documents; target "
            f"recall {target} at {100 * simulation.confidence:g} % confidence; the rules are "
            f"consulted every {simulation.check_every} judgements; seed {simulation.seed}."
        ),
        label="tab:stopping-simulation",
        digits=3,
        notes=[
            "Recall is relative to the pool (relevant judged / relevant pooled). saved % = "
            "100 - judged %: the judgements saved against judging the depth pool in full. "
            "target and sample first judge a reserved random sample of "
            f"{100 * simulation.sample_share:g} % of the pool (counted in the judgements).",
            *simulation.notes,
        ],
    )
