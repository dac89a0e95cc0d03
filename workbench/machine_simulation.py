"""Simulate a machine judge before spending on one: per hybrid design and human budget, the
qrels error and how the run ranking agrees with the full qrels' (pure: numpy and the metric
module; `workbench simulate-machine` and benchmarks/bench_machine_judges.py run it).

The pool is the depth-k pool of the runs (`pooling`); the truth of a pooled document is its
grade in the full qrels (absent: 0); topics are those with a relevant document in the full
qrels and a non-empty pool.

The machine judge (`MachineModel`): with probability r it gives the true grade, otherwise a
grade drawn from an error distribution e ("marginal": the pool's grade distribution, for
which the expected Cohen's kappa against the truth is exactly r; "uniform": any grade;
"lenient": any grade at or above the relevance level, as judges that over-rate); r is set by
bisection so that the expected kappa of that confusion matrix,

    P(t = i, m = j) = p_i (r [i = j] + (1 - r) e_j),  kappa = (p_o - p_e) / (1 - p_e),

is the target. Then a share `adversarial` of the non-relevant pooled documents is given the
top grade (documents built to fool the judge: injected instructions, stuffed keywords), of
which a share `detection` is flagged (`judge_prompt.suspicion`). Its certainty (for the
"uncertain" design) is a logistic of N(0, 1) + mu [correct] with mu = sqrt(2) Phi^-1(AUC),
so that certainty tells right from wrong answers with that AUC; adversarial answers are as
confident as right ones. Humans give the true grade (`human_kappa` < 1: the same noise
model as the machine's, with marginal errors).

Designs (`DESIGNS`), with a human budget b (a share of each topic's pool):

- machine: the machine's labels alone (b = 0);
- humans: humans judge b of each topic's pool, best-ranked documents first (depth order);
  the rest is unjudged (not relevant);
- fill: as humans, and the machine labels the rest (humans first, machine fills holes);
- uniform, stratified, positives, uncertain, verify: the machine labels the pool, humans
  judge a sample of b (`hybrid.draw_sample`, flagged documents always in it) and their labels
  replace the machine's there;
- review: as fill, then a second human judges the documents where the machine and the first
  human disagree at the relevance level (counted in the budget); the second human's label is
  final (useful only with human noise).

Reported per design and budget, as the mean over `repetitions` draws: human judgements, qrels
error (pooled documents whose label differs from the truth at the relevance level), the
machine's realised kappa, and for MAP Kendall's tau and tau_AP against the full qrels'
ranking (mean and least over the draws) and the largest rank change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as scipy_stats

from workbench import agreement, hybrid, pooling, stats
from workbench.metrics import evaluate
from workbench.relevance import is_relevant
from workbench.trec import Run

Key = tuple[str, str]
ERROR_MODELS = {
    "marginal": "errors drawn from the pool's grade distribution (expected kappa = r)",
    "uniform": "errors drawn uniformly from the scale",
    "lenient": "errors drawn from the grades at or above the relevance level (over-rating)",
}
DESIGNS: dict[str, str] = {
    "machine": "the machine's labels alone",
    "humans": "humans alone on the best-ranked share of each pool, the rest unjudged",
    "fill": "humans first on the best-ranked share, the machine fills the holes",
    "uniform": "machine first, humans on a uniform sample",
    "stratified": "machine first, humans on a sample stratified by machine grade",
    "positives": "machine first, humans on its relevant documents first (10 % kept for the rest)",
    "uncertain": "machine first, humans on a sample proportional to machine uncertainty",
    "verify": "humans on the best-ranked half of the budget, then on the machine's relevant "
    "documents down the ranks; the machine fills the rest",
    "review": "fill, then a second human where the machine and the first human disagree",
}
DEFAULT_DESIGNS = (
    "machine",
    "humans",
    "fill",
    "uniform",
    "stratified",
    "positives",
    "uncertain",
    "verify",
)
MEASURE = "map"


class MachineSimulationError(ValueError):
    """Bad simulation input."""


@dataclass(frozen=True)
class MachineModel:
    kappa: float = 0.6
    errors: str = "marginal"
    adversarial: float = 0.0
    detection: float = 0.0
    certainty_auc: float = 0.75

    def check(self) -> None:
        if not 0 <= self.kappa <= 1:
            raise MachineSimulationError(f"kappa: expected 0..1, got {self.kappa}")
        if self.errors not in ERROR_MODELS:
            raise MachineSimulationError(
                f"errors: expected one of {', '.join(ERROR_MODELS)}, got {self.errors!r}"
            )
        for name in ("adversarial", "detection"):
            if not 0 <= getattr(self, name) <= 1:
                raise MachineSimulationError(f"{name}: expected a share 0..1")
        if not 0.5 <= self.certainty_auc < 1:
            raise MachineSimulationError("certainty AUC: expected 0.5 <= AUC < 1")


@dataclass(frozen=True)
class Row:
    design: str
    budget: float  # the human budget asked (share of each topic's pool)
    human_judgements: float  # mean over the draws
    human_share: float  # of the pooled documents
    qrels_error: float
    machine_kappa: float
    tau: float
    tau_min: float
    tau_ap: float
    max_rank_change: int


@dataclass(frozen=True)
class MachineSimulation:
    rows: tuple[Row, ...]
    topics: int
    pooled: int
    runs: int
    depth: int
    model: MachineModel
    human_kappa: float
    repetitions: int
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)

    def row(self, design: str, budget: float) -> Row:
        return next(r for r in self.rows if r.design == design and r.budget == budget)


def error_distribution(model: str, grades: Sequence[int], level: int, p: np.ndarray) -> np.ndarray:
    if model == "marginal":
        return p
    if model == "uniform":
        return np.full(len(grades), 1 / len(grades))
    upper = np.array([is_relevant(g, level) for g in grades], dtype=float)
    if not upper.any():
        raise MachineSimulationError(f"no grade of the scale is at or above level {level}")
    return upper / upper.sum()


def expected_kappa(r: float, p: np.ndarray, e: np.ndarray) -> float:
    """Cohen's kappa of the joint P(t = i, m = j) = p_i (r [i = j] + (1 - r) e_j)."""
    joint = np.outer(p, (1 - r) * e) + np.diag(r * p)
    p_o = float(np.trace(joint))
    p_e = float(joint.sum(1) @ joint.sum(0))
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan


def keep_rate(target: float, p: np.ndarray, e: np.ndarray) -> float:
    """r such that expected_kappa(r) = target (bisection; kappa rises with r)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if expected_kappa(middle, p, e) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@dataclass(frozen=True)
class _Pool:
    keys: tuple[Key, ...]  # (qid, docno), topics then best rank then docno
    truth: dict[Key, int]
    depth_order: dict[str, list[Key]]
    ranks: dict[Key, int]  # best rank in the runs


def _pool(
    qrels: Mapping[str, Mapping[str, int]], runs: Sequence[Run], depth: int, level: int
) -> _Pool:
    lists = [pooling.topic_ranked_lists(run) for run in runs]
    tags = [run.tag for run in runs]
    keys: list[Key] = []
    truth: dict[Key, int] = {}
    order: dict[str, list[Key]] = {}
    ranks: dict[Key, int] = {}
    qids = sorted({q for ranked in lists for q in ranked})
    for qid in qids:
        full = qrels.get(qid, {})
        if not any(is_relevant(g, level) for g in full.values()):
            continue
        ranked = {tag: r[qid] for tag, r in zip(tags, lists, strict=True) if qid in r}
        pooled = pooling.pool_topic(ranked, strategy="depth",
                                    params={"depth": depth, "run_order": tags},
                                    rng=pooling.topic_rng(0, qid))  # fmt: skip
        if not pooled:
            continue
        ordered = sorted(pooled, key=lambda d: (d.best_rank, d.docno))
        order[qid] = [(qid, d.docno) for d in ordered]
        for d in ordered:
            key = (qid, d.docno)
            keys.append(key)
            truth[key] = max(int(full.get(d.docno, 0)), 0)
            ranks[key] = d.best_rank
    if not keys:
        raise MachineSimulationError("no topic has a relevant document in the runs' pool")
    return _Pool(tuple(keys), truth, order, ranks)


def _noisy(truth: np.ndarray, keep: float, e: np.ndarray, grades: np.ndarray,
           rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    kept = rng.random(len(truth)) < keep
    drawn = grades[rng.choice(len(grades), size=len(truth), p=e)]
    return np.where(kept, truth, drawn)


def _scores(qrels: dict[str, dict[str, int]], runs: Sequence[Run], level: int) -> dict[str, float]:
    return {
        run.tag: float(evaluate(qrels, run, [MEASURE], relevance_level=level).summary[MEASURE])
        for run in runs
    }


def _as_qrels(labels: Mapping[Key, int], topics: Sequence[str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {q: {} for q in topics}
    for (qid, docno), grade in labels.items():
        out[qid][docno] = grade
    return out


def simulate_machine(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Run],
    *,
    model: MachineModel = MachineModel(),
    designs: Sequence[str] = DEFAULT_DESIGNS,
    budgets: Sequence[float] = (0.05, 0.1, 0.2),
    depth: int = 100,
    relevance_level: int = 1,
    human_kappa: float = 1.0,
    repetitions: int = 5,
    seed: int = 0,
) -> MachineSimulation:
    """Every design at every budget (see the module docstring)."""
    model.check()
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise MachineSimulationError(
            f"unknown design(s) {', '.join(unknown)}; expected {', '.join(DESIGNS)}"
        )
    if not budgets or any(not 0 < b <= 1 for b in budgets):
        raise MachineSimulationError("budgets: expected shares in (0, 1]")
    if len(runs) < 2:
        raise MachineSimulationError("a ranking needs at least two runs")
    if not 0 <= human_kappa <= 1:
        raise MachineSimulationError("human kappa: expected 0..1")
    level = relevance_level
    pool = _pool(qrels, runs, depth, level)
    topics = sorted(pool.depth_order)
    full = {q: {d: int(g) for d, g in qrels[q].items()} for q in topics}
    reference = _scores(full, runs, level)
    keys = pool.keys
    truth = np.array([pool.truth[k] for k in keys])
    grades = np.array(sorted({*truth.tolist(), *(g for q in topics for g in full[q].values()
                                                  if g >= 0), 0}))  # fmt: skip
    p = np.array([(truth == g).mean() for g in grades])
    e = error_distribution(model.errors, grades.tolist(), level, p)
    keep = keep_rate(model.kappa, p, e)
    human_keep = keep_rate(human_kappa, p, p)
    mu = math.sqrt(2) * float(scipy_stats.norm.ppf(model.certainty_auc))
    results: dict[tuple[str, float], list[tuple[int, float, float, float, float, int]]] = {}
    for rep in range(repetitions):
        rng = np.random.default_rng([seed, rep])
        machine = _noisy(truth, keep, e, grades, rng)
        adversarial = (rng.random(len(keys)) < model.adversarial) & ~is_relevant(truth, level)
        machine = np.where(adversarial, grades.max(), machine)
        detected = adversarial & (rng.random(len(keys)) < model.detection)
        right = (machine == truth) | adversarial
        certainty = 1 / (1 + np.exp(-(rng.normal(size=len(keys)) + mu * right - mu / 2)))
        humans = _noisy(truth, human_keep, p, grades, rng)
        second = _noisy(truth, human_keep, p, grades, rng)
        machine_labels = dict(zip(keys, machine.tolist(), strict=True))
        human_labels = dict(zip(keys, humans.tolist(), strict=True))
        kappa = agreement.cohen_kappa(truth, machine, labels=grades.tolist())
        flagged = {k for k, d in zip(keys, detected, strict=True) if d}
        sure = dict(zip(keys, certainty.tolist(), strict=True))
        for design in designs:
            for budget in budgets if design != "machine" else (0.0,):
                labels, judged = _design_labels(
                    design, budget, pool, machine_labels, human_labels,
                    dict(zip(keys, second.tolist(), strict=True)), sure, flagged,
                    level=level, seed=seed * 1000 + rep,
                )  # fmt: skip
                wrong = sum(
                    is_relevant(labels.get(k, 0), level) != is_relevant(pool.truth[k], level)
                    for k in keys
                ) / len(keys)
                scores = _scores(_as_qrels(labels, topics), runs, level)
                with np.errstate(invalid="ignore"):
                    tau = stats.kendall_tau(reference, scores)
                tau_ap = stats.tau_ap_ties(reference, scores)
                moved = max((abs(c.shift) for c in stats.rank_changes(reference, scores)),
                            default=0)  # fmt: skip
                results.setdefault((design, budget), []).append(
                    (judged, wrong, kappa, tau, tau_ap, moved)
                )
    rows = []
    for (design, budget), draws in results.items():
        a = np.array([d[:5] for d in draws], dtype=float)
        rows.append(Row(
            design, budget, float(a[:, 0].mean()), float(a[:, 0].mean() / len(keys)),
            float(a[:, 1].mean()), float(a[:, 2].mean()), float(a[:, 3].mean()),
            float(a[:, 3].min()), float(a[:, 4].mean()), max(d[5] for d in draws),
        ))  # fmt: skip
    return MachineSimulation(tuple(rows), len(topics), len(keys), len(runs), depth, model,
                             human_kappa, repetitions, seed)  # fmt: skip


def _design_labels(
    design: str,
    budget: float,
    pool: _Pool,
    machine: dict[Key, int],
    human: dict[Key, int],
    second: dict[Key, int],
    certainty: dict[Key, float],
    flagged: set[Key],
    *,
    level: int,
    seed: int,
) -> tuple[dict[Key, int], int]:
    """(labels of the pooled documents, human judgements spent) for one design."""
    if design == "machine":
        return dict(machine), 0
    if design in ("humans", "fill", "review"):
        judged = [
            k
            for order in pool.depth_order.values()
            for k in order[: min(len(order), math.ceil(budget * len(order) - 1e-9))]
        ]
        labels = {k: human[k] for k in judged}  # fmt: skip
        spent = len(judged)
        if design == "review":
            differ = [
                k for k in judged if is_relevant(machine[k], level) != is_relevant(human[k], level)
            ]
            labels.update((k, second[k]) for k in differ)  # fmt: skip
            spent += len(differ)
        if design in ("fill", "review"):
            labels = {**machine, **labels}
        return labels, spent
    sample = hybrid.draw_sample(pool.keys, machine, design=design, share=budget, seed=seed,
                                certainty=certainty, always=flagged, level=level,
                                ranks=pool.ranks)  # fmt: skip
    chosen = [s.key for s in sample if s.sampled]
    return {**machine, **{k: human[k] for k in chosen}}, len(chosen)
