"""Compare assignment policies before a campaign: simulated assessors judge a depth-k pool routed
by each policy (`workbench.routing`), and the qrels they produce are compared with the truth
(pure: no store).

Assessors are models: a confusion matrix (row: the true grade, column: the probability of
each grade given) and a speed (seconds per document, log-normal around a median). An
assessor's answer and time for a document depend on (seed, repetition, assessor, topic,
document) alone, so that every policy meets the same assessors (common random numbers).

Per policy: every document of the pool is routed as `routing.plan` routes it (the adaptive
policy then gives a judge more, least loaded first, while `routing.needs_another_judge`
says so). Labels: the primary judge's grade under the primary policy (TREC's practice);
otherwise the majority grade, a tie going to an adjudicator (a model too, counted apart).
Reported, as the mean over repetitions (with the standard deviation where it varies):
judgements, hours, adjudications, documents with two judges or more, Cohen's kappa (linear
weights) of the first two judges of those documents with its 95 % interval, the qrels error
(pooled documents whose relevance, grade >= level, differs from the truth) and Kendall's
tau-b between the runs' MAP ranking under the simulated qrels and under the true labels of
the same pooled documents (so that it measures judging error, not pool incompleteness).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from workbench import agreement, baselines, cacm, pooling, routing, stats
from workbench.metrics import evaluate
from workbench.relevance import is_relevant
from workbench.trec import Qrels, Run

_NORMAL = statistics.NormalDist()


class PolicySimulationError(ValueError):
    """Bad simulation input (models, policies, runs)."""


@dataclass(frozen=True)
class AssessorModel:
    """A simulated assessor: confusion[i][j] = P(grade scale[j] given | true grade scale[i]);
    seconds: median time per document; sigma: log-normal spread of the time."""

    name: str
    confusion: tuple[tuple[float, ...], ...]
    seconds: float = 30.0
    sigma: float = 0.5

    def check(self, grades: int) -> None:
        if len(self.confusion) != grades or any(len(r) != grades for r in self.confusion):
            raise PolicySimulationError(
                f"assessor {self.name}: the confusion matrix must be {grades} x {grades}"
            )
        for row in self.confusion:
            if any(p < 0 for p in row) or not math.isclose(sum(row), 1.0, abs_tol=1e-6):
                raise PolicySimulationError(
                    f"assessor {self.name}: each row of the confusion matrix must be "
                    "probabilities summing to 1"
                )
        if self.seconds <= 0 or self.sigma < 0:
            raise PolicySimulationError(f"assessor {self.name}: seconds > 0 and sigma >= 0")

    def answer(self, true_index: int, u: float) -> int:
        """The index of the grade given for `u` uniform in [0, 1)."""
        total = 0.0
        row = self.confusion[true_index]
        for j, p in enumerate(row):
            total += p
            if u < total:
                return j
        return len(row) - 1

    def time(self, u: float) -> float:
        return self.seconds * math.exp(self.sigma * _NORMAL.inv_cdf(min(max(u, 1e-12), 1 - 1e-12)))


def flip_model(
    name: str, grades: int, *, flip: float, up: float = 0.0, seconds: float = 30.0
) -> AssessorModel:
    """An assessor who gives another grade (each equally likely) with probability `flip`,
    and moreover grades one step up with probability `up` (a lenient judge)."""
    if not 0 <= flip < 1 or not 0 <= up < 1 or flip + up >= 1:
        raise PolicySimulationError(f"assessor {name}: flip and up in [0, 1), together below 1")
    rows = []
    for i in range(grades):
        row = [flip / (grades - 1) if j != i else 1 - flip for j in range(grades)]
        if i + 1 < grades and up:
            row[i] -= up
            row[i + 1] += up
        rows.append(tuple(row))
    return AssessorModel(name, tuple(rows), seconds)


def default_panel(grades: int) -> list[AssessorModel]:
    """Six assessors (our own illustration): two careful, two typical, a lenient and a hasty
    one."""
    return [
        flip_model("careful1", grades, flip=0.05, seconds=40),
        flip_model("careful2", grades, flip=0.05, seconds=40),
        flip_model("typical1", grades, flip=0.12, seconds=30),
        flip_model("typical2", grades, flip=0.12, seconds=30),
        flip_model("lenient", grades, flip=0.08, up=0.25, seconds=25),
        flip_model("hasty", grades, flip=0.30, seconds=8),
    ]


def parse_models(specs: Sequence[str], grades: int) -> list[AssessorModel]:
    """Models from `NAME:flip=0.1[:up=0.2][:seconds=30][:sigma=0.5]` or
    `NAME:matrix=0.9,0.1/0.2,0.8[:seconds=30]` (rows separated by '/')."""
    models = []
    for spec in specs:
        name, *parts = spec.split(":")
        values: dict[str, str] = {}
        for part in parts:
            key, sep, value = part.partition("=")
            if not sep or key not in {"flip", "up", "seconds", "sigma", "matrix"}:
                raise PolicySimulationError(
                    f"bad assessor {spec!r}: expected NAME:flip=0.1[:up=0.2][:seconds=30]"
                    "[:sigma=0.5] or NAME:matrix=ROW/ROW...[:seconds=30]"
                )
            values[key] = value
        try:
            seconds = float(values.get("seconds", 30))
            sigma = float(values.get("sigma", 0.5))
            if "matrix" in values:
                rows = tuple(
                    tuple(float(x) for x in row.split(",")) for row in values["matrix"].split("/")
                )
                model = AssessorModel(name, rows, seconds, sigma)
            else:
                flip = float(values.get("flip", 0.1))
                up = float(values.get("up", 0))
                model = flip_model(name, grades, flip=flip, up=up, seconds=seconds)
                model = AssessorModel(name, model.confusion, seconds, sigma)
        except ValueError as error:
            if isinstance(error, PolicySimulationError):
                raise
            raise PolicySimulationError(f"bad assessor {spec!r}: {error}") from None
        if not name:
            raise PolicySimulationError(f"bad assessor {spec!r}: no name")
        model.check(grades)
        models.append(model)
    if len({m.name for m in models}) != len(models):
        raise PolicySimulationError("two assessors share a name")
    return models


@dataclass(frozen=True)
class PolicySpec:
    """A policy to compare: its label in the table, the registered name and its values."""

    label: str
    policy: str
    values: Mapping[str, str] = field(default_factory=dict)


DEFAULT_POLICIES = (
    "topics:judges_per_topic=1; topics:judges_per_topic=2; primary:secondary_share=0.1; "
    "adaptive:distance=0:max_judges=3"
)


def parse_policies(text: str) -> list[PolicySpec]:
    """'topics:judges_per_topic=2; primary:secondary_share=0.1; adaptive' -> specs."""
    specs = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, *pairs = part.split(":")
        values = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise PolicySimulationError(f"bad policy {part!r}: expected NAME[:key=value...]")
            values[key.strip()] = value.strip()
        try:
            chosen = routing.get_policy(name.strip())
            chosen.parse(values)
        except routing.RoutingError as error:
            raise PolicySimulationError(str(error)) from None
        unknown = set(values) - {f.name for f in chosen.fields()}
        if unknown:
            raise PolicySimulationError(
                f"policy {chosen.name} has no parameter(s) {', '.join(sorted(unknown))}"
            )
        specs.append(PolicySpec(part, chosen.name, values))
    if not specs:
        raise PolicySimulationError("no policy given")
    return specs


@dataclass(frozen=True)
class PolicyResult:
    """One policy on one collection: means over repetitions (sd: standard deviations)."""

    collection: str
    policy: str
    pool_documents: int
    judgements: float
    hours: float
    adjudications: float
    overlap_documents: float
    kappa: float
    kappa_low: float
    kappa_high: float
    qrels_error: float
    qrels_error_sd: float
    tau: float
    tau_sd: float


@dataclass(frozen=True)
class Collection:
    """A test collection to simulate on: true grades, runs, the scale and the level."""

    name: str
    truth: Mapping[str, Mapping[str, int]]
    runs: Sequence[Run]
    scale: tuple[int, ...]
    level: int


@dataclass(frozen=True)
class PolicySimulation:
    results: tuple[PolicyResult, ...]
    assessors: tuple[AssessorModel, ...]
    adjudicator: AssessorModel
    depth: int
    repetitions: int
    seed: int
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------- collections


def generated_collection(
    *, topics: int = 40, universe: int = 400, runs: int = 16, depth: int = 100, seed: int = 0
) -> Collection:
    """A generated collection (our own): per topic `universe` documents with true grades 2
    (3 %), 1 (8 %) or 0; `runs` runs whose quality q is spread evenly over [0.9, 1.3] (close
    enough that judging errors can swap them) rank each topic's documents by
    q x grade + N(0, 1) and keep the top `depth`."""
    rng = np.random.default_rng([seed, 26])
    truth: dict[str, dict[str, int]] = {}
    scored: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    qualities = np.linspace(0.9, 1.3, runs)
    for t in range(1, topics + 1):
        qid = f"G{t}"
        grades = rng.choice([0, 1, 2], size=universe, p=[0.89, 0.08, 0.03])
        docnos = [f"{qid}-D{i}" for i in range(universe)]
        truth[qid] = dict(zip(docnos, (int(g) for g in grades), strict=True))
        for r, q in enumerate(qualities):
            score = q * grades + rng.normal(size=universe)
            top = np.argsort(-score, kind="stable")[:depth]
            scored[f"gen{r + 1:02d}"][qid] = {docnos[i]: float(score[i]) for i in top}
    made = [Run.from_dict(scored[tag], tag=tag) for tag in sorted(scored)]
    return Collection("generated", truth, made, (0, 1, 2), 1)


def perturbed_runs(
    runs: Mapping[str, Mapping[str, Mapping[str, float]]], noises: Sequence[float], seed: int
) -> list[Run]:
    """Each run as given and, for each noise level s > 0, with s x (the topic's score standard
    deviation) x N(0, 1) added to its scores (runs of lower quality, to rank)."""
    made: list[Run] = []
    for tag in sorted(runs):
        for s in noises:
            rng = np.random.default_rng([seed, len(made)])
            data = {}
            for qid, docs in runs[tag].items():
                values = np.array(list(docs.values()))
                spread = float(values.std()) if len(values) > 1 else 1.0
                noisy = values + s * (spread or 1.0) * rng.normal(size=len(values))
                data[qid] = dict(zip(docs, (float(v) for v in noisy), strict=True))
            made.append(Run.from_dict(data, tag=tag if s == 0 else f"{tag}~{s:g}"))
    return made


def cacm_collection(
    folder: Path, *, noises: Sequence[float] = (0.0, 1.0, 2.0), seed: int = 0
) -> Collection:
    """CACM (`workbench.cacm`) with its judged topics: the baseline rankers' runs
    (`workbench.baselines`, top 100) and their perturbed copies (`perturbed_runs`); the
    truth is its binary qrels (a document absent from them is not relevant)."""
    collection = cacm.load(folder)
    topics = collection.judged_topics
    ranked = baselines.rank(
        {d.docno: (d.title, d.text) for d in collection.documents},
        [(t.qid, t.title) for t in topics],
        depth=100,
        stopwords=collection.stopwords,
    )
    truth = {t.qid: dict(collection.qrels[t.qid]) for t in topics}
    return Collection("CACM", truth, perturbed_runs(ranked, noises, seed), (0, 1), 1)


# ---------------------------------------------------------------- the simulation


def _pool(collection: Collection, depth: int) -> dict[str, list[str]]:
    pools: dict[str, list[str]] = {}
    for qid in sorted(collection.truth):
        lists = {}
        for run in collection.runs:
            if qid in run:
                lines = run.topic_lines(qid)
                lists[run.tag] = pooling.ranked_list(lines.docnos, lines.scores, limit=depth)
        pooled = [p.docno for p in pooling.depth_pool(lists, depth)] if lists else []
        if pooled:
            pools[qid] = sorted(pooled)
    return pools


def _judges(
    spec: PolicySpec, pools: Mapping[str, list[str]], names: list[str], seed: int
) -> tuple[dict[tuple[str, str], list[str]], dict[tuple[str, str], str]]:
    """(qid, docno) -> its judges in routing order; and the primary judge where there is one."""
    plan = routing.plan(
        spec.policy, spec.values, routing.Situation(documents=pools), names, seed=seed
    )
    judges: dict[tuple[str, str], list[str]] = defaultdict(list)
    primary: dict[tuple[str, str], str] = {}
    for route in sorted(plan.routes, key=lambda r: r.role != "primary"):
        for docno in route.docnos:
            judges[route.qid, docno].append(route.assessor)
            if route.role == "primary":
                primary[route.qid, docno] = route.assessor
    return judges, primary


def simulate_policies(
    collections: Sequence[Collection],
    policies: Sequence[PolicySpec],
    assessors: Sequence[AssessorModel],
    *,
    adjudicator: AssessorModel,
    depth: int = 20,
    repetitions: int = 5,
    seed: int = 0,
) -> PolicySimulation:
    """Simulate every policy on every collection (see the module docstring)."""
    if depth < 1 or repetitions < 1:
        raise PolicySimulationError("depth and repetitions must be positive integers")
    if len(assessors) < 2:
        raise PolicySimulationError("a simulation needs at least two assessors")
    results = []
    notes = []
    for collection in collections:
        grades = len(collection.scale)
        for model in (*assessors, adjudicator):
            model.check(grades)
        if len(collection.runs) < 2:
            raise PolicySimulationError(f"{collection.name}: at least two runs are needed")
        pools = _pool(collection, depth)
        pooled = sum(len(d) for d in pools.values())
        true_qrels = Qrels.from_dict(
            {
                q: {d: max(collection.truth[q].get(d, 0), 0) for d in docs}
                for q, docs in pools.items()
            }
        )
        reference = _map_scores(true_qrels, collection.runs, collection.level)
        notes.append(
            f"{collection.name}: {len(pools)} topics, {len(collection.runs)} runs, "
            f"{pooled} pooled documents (depth {depth})"
        )
        for spec in policies:
            per_rep = [
                _one(collection, spec, pools, assessors, adjudicator, reference, seed, rep)
                for rep in range(repetitions)
            ]
            results.append(_summary(collection.name, spec.label, pooled, per_rep))
    return PolicySimulation(
        tuple(results), tuple(assessors), adjudicator, depth, repetitions, seed, tuple(notes)
    )


def _map_scores(qrels: Qrels, runs: Sequence[Run], level: int) -> dict[str, float]:
    return {
        run.tag: float(evaluate(qrels, run, ["map"], relevance_level=level).summary["map"])
        for run in runs
    }


@dataclass(frozen=True)
class _Rep:
    judgements: int
    seconds: float
    adjudications: int
    overlap: int
    kappa: agreement.KappaEstimate | None
    error: float
    tau: float


def _one(
    collection: Collection,
    spec: PolicySpec,
    pools: Mapping[str, list[str]],
    assessors: Sequence[AssessorModel],
    adjudicator: AssessorModel,
    reference: Mapping[str, float],
    seed: int,
    rep: int,
) -> _Rep:
    scale = collection.scale
    index = {g: i for i, g in enumerate(scale)}
    models = {m.name: m for m in assessors}
    judges, primary = _judges(spec, pools, list(models), seed + rep)
    seconds = 0.0
    given: dict[tuple[str, str], list[int]] = defaultdict(list)
    load: Counter[str] = Counter()

    def judge(name: str, model: AssessorModel, qid: str, docno: str) -> int:
        nonlocal seconds
        true = max(collection.truth[qid].get(docno, 0), 0)
        u = routing.draw(seed, "answer", rep, name, qid, docno)
        seconds += model.time(routing.draw(seed, "time", rep, name, qid, docno))
        load[name] += 1
        return scale[model.answer(index.get(true, 0), u)]

    for key, names in sorted(judges.items()):
        for name in names:
            given[key].append(judge(name, models[name], *key))
    judgements = sum(len(v) for v in given.values())
    if spec.policy == "adaptive":
        params = routing.get_policy("adaptive").parse(spec.values)
        grown = True
        while grown:
            grown = False
            for key in sorted(given):
                if routing.needs_another_judge(given[key], len(given[key]), params):
                    free = [n for n in sorted(models) if n not in judges[key]]
                    if free:
                        name = min(free, key=lambda n: (load[n], n))
                        judges[key].append(name)
                        given[key].append(judge(name, models[name], *key))
                        judgements += 1
                        grown = True
    labels: dict[str, dict[str, int]] = defaultdict(dict)
    adjudications = 0
    for (qid, docno), grades in given.items():
        if spec.policy == "primary":
            labels[qid][docno] = grades[judges[qid, docno].index(primary[qid, docno])]
            continue
        merged = agreement.merge_grades(grades, rule="majority", tie="adjudicate")
        if merged is None:
            adjudications += 1
            merged = judge("adjudicator", adjudicator, qid, docno)
        labels[qid][docno] = merged
    firsts = [(g[0], g[1]) for g in given.values() if len(g) >= 2]
    kappa = None
    if firsts:
        a, b = zip(*firsts, strict=True)
        estimate = agreement.cohen_kappa_interval(a, b, weights="linear", labels=list(scale))
        kappa = None if math.isnan(estimate.kappa) else estimate
    wrong = sum(
        is_relevant(labels[q][d], collection.level)
        != is_relevant(max(collection.truth[q].get(d, 0), 0), collection.level)
        for q, docs in labels.items()
        for d in docs
    )
    scores = _map_scores(Qrels.from_dict(labels), collection.runs, collection.level)
    with np.errstate(invalid="ignore"):
        tau = stats.kendall_tau(reference, scores)
    return _Rep(
        judgements,
        seconds,
        adjudications,
        len(firsts),
        kappa,
        wrong / max(1, sum(len(d) for d in labels.values())),
        tau,
    )


def _summary(name: str, label: str, pooled: int, reps: Sequence[_Rep]) -> PolicyResult:
    def mean(values: Sequence[float]) -> float:
        found = [v for v in values if not math.isnan(v)]
        return float(np.mean(found)) if found else math.nan

    def sd(values: Sequence[float]) -> float:
        return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0

    kappas = [r.kappa for r in reps if r.kappa is not None]
    return PolicyResult(
        collection=name,
        policy=label,
        pool_documents=pooled,
        judgements=mean([r.judgements for r in reps]),
        hours=mean([r.seconds / 3600 for r in reps]),
        adjudications=mean([r.adjudications for r in reps]),
        overlap_documents=mean([r.overlap for r in reps]),
        kappa=mean([k.kappa for k in kappas]),
        kappa_low=mean([k.low for k in kappas]),
        kappa_high=mean([k.high for k in kappas]),
        qrels_error=mean([r.error for r in reps]),
        qrels_error_sd=sd([r.error for r in reps]),
        tau=mean([r.tau for r in reps]),
        tau_sd=sd([r.tau for r in reps]),
    )
