"""How far to trust a machine judge: the "machine judges" analysis of a campaign.

For each machine judge, against the human labels (the campaign's qrels labels: final labels
where there are, else the single judges'; or one assessor's):

- agreement on the documents both labelled: Cohen's kappa and weighted kappa (linear weights
  by default) overall, with a percentile interval from resampling topics
  (`agreement.bootstrap_interval`), per topic, and the confusion matrix (human x machine);
- the run ranking by a measure under the machine's qrels and under the hybrid qrels (human
  labels where there are, the machine's elsewhere) against the ranking under the human
  qrels: Kendall's tau and tau_AP (`stats.compare_system_rankings`), the same among the top
  k runs of the human ranking, and the runs whose rank moves most;
- where a human sample of its labels was drawn (`machine_hybrid.create_sample_pool`), the
  machine's error over the whole pool estimated from it (`hybrid.estimate_error`);
- the cost: labels, cannot-judge answers by kind, cache hits, tokens, latency and cost.

`machine_report` returns frozen dataclasses (`to_dict`), `report_tables` their tables; the
CLI (`workbench machine report`) and the web page render those.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import agreement, hybrid, stats
from workbench.services import machine_hybrid, machine_judges
from workbench.services.errors import ServiceError
from workbench.services.evaluation import evaluate_runs
from workbench.services.evaluation_inputs import NamedQrels, load_runs
from workbench.services.pools import qid_key
from workbench.services.qrels import qrels_labels
from workbench.store.models import Campaign, MachineJudge, MachineJudgement, Pool, PoolEntry
from workbench.tabular import Cell, Table, cells

Key = tuple[str, str]
WEIGHTS = ("linear", "quadratic")
MOVES_SHOWN = 5


@dataclass(frozen=True)
class TopicAgreement:
    qid: str
    n: int
    kappa: float
    weighted_kappa: float


@dataclass(frozen=True)
class Agreement:
    """Machine against human labels on the documents both labelled."""

    n: int
    kappa: float
    kappa_low: float
    kappa_high: float
    weighted_kappa: float
    weighted_low: float
    weighted_high: float
    weights: str
    grades: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]  # rows: human grade, columns: machine grade
    per_topic: tuple[TopicAgreement, ...]


@dataclass(frozen=True)
class Move:
    run: str
    human_rank: int
    other_rank: int

    @property
    def shift(self) -> int:
        return self.human_rank - self.other_rank


@dataclass(frozen=True)
class Ranking:
    """The run ranking under `qrels` ("machine" or "hybrid") against the human one."""

    qrels: str
    measure: str
    runs: int
    kendall_tau: float
    tau_ap: float
    top_k: int
    top_kendall_tau: float
    top_tau_ap: float
    moves: tuple[Move, ...]


@dataclass(frozen=True)
class SampleCheck:
    """The machine's error estimated from a human sample pool."""

    pool: int
    design: str
    share: float
    estimate: hybrid.ErrorEstimate
    unjudged: int  # sampled documents still without a human label


@dataclass(frozen=True)
class Cost:
    labels: int
    cannot_judge: int
    reasons: tuple[tuple[str, int], ...]  # kind of cannot-judge -> count
    cached: int
    flagged: int
    prompt_tokens: int
    completion_tokens: int
    mean_latency_ms: float
    cost: float


@dataclass(frozen=True)
class JudgeReport:
    judge: str
    model: str
    template_hash: str
    agreement: Agreement | None
    rankings: tuple[Ranking, ...]
    samples: tuple[SampleCheck, ...]
    cost: Cost
    notes: tuple[str, ...]


@dataclass(frozen=True)
class MachineReport:
    campaign: str
    human: str  # what the human labels are
    measure: str
    top_k: int
    judges: tuple[JudgeReport, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for judge in data["judges"]:
            for move_list in (r["moves"] for r in judge["rankings"]):
                for move in move_list:
                    move["shift"] = move["human_rank"] - move["other_rank"]
        return data


# ------------------------------------------------------------------------------ agreement


def _agreement(
    human: dict[Key, int],
    machine: dict[Key, int],
    grades: Sequence[int],
    *,
    weights: str,
    n_resamples: int,
    seed: int,
) -> Agreement | None:
    keys = sorted(set(human) & set(machine), key=lambda k: (qid_key(k[0]), k[1]))
    if not keys:
        return None
    h = np.array([human[k] for k in keys])
    m = np.array([machine[k] for k in keys])
    labels = sorted(set(grades) | set(h.tolist()) | set(m.tolist()))
    topics: dict[str, list[int]] = defaultdict(list)
    for i, (qid, _) in enumerate(keys):
        topics[qid].append(i)
    qids = list(topics)

    def kappa_of(rows: list[int], w: Any) -> float:
        if not rows:
            return math.nan
        return agreement.cohen_kappa(h[rows], m[rows], weights=w, labels=labels)

    def over(w: Any) -> Any:
        return lambda drawn: kappa_of([i for t in drawn for i in topics[qids[t]]], w)

    kappa = kappa_of(list(range(len(keys))), None)
    weighted = kappa_of(list(range(len(keys))), weights)
    low, high = agreement.bootstrap_interval(
        over(None), len(qids), n_resamples=n_resamples, seed=seed
    )
    w_low, w_high = agreement.bootstrap_interval(
        over(weights), len(qids), n_resamples=n_resamples, seed=seed
    )
    confusion = agreement.confusion_matrix(h, m, labels=labels)
    per_topic = tuple(
        TopicAgreement(q, len(rows), kappa_of(rows, None), kappa_of(rows, weights))
        for q, rows in topics.items()
    )
    return Agreement(
        len(keys), kappa, low, high, weighted, w_low, w_high, weights, tuple(labels),
        tuple(tuple(int(x) for x in row) for row in confusion), per_topic,
    )  # fmt: skip


# ------------------------------------------------------------------------------- rankings


def _scores(runs: Any, qrels: dict[str, dict[str, int]], label: str, measure: str,
            campaign: Campaign) -> dict[str, float]:  # fmt: skip
    table = evaluate_runs(
        runs, NamedQrels(label, qrels), [measure], campaign=campaign.name,
        relevance_level=campaign.relevance_level,
    )  # fmt: skip
    name = table.measures[0]
    return {r.tag: float(r.summary[name]) for r in table.runs}


def _ranking(
    human: dict[str, float], other: dict[str, float], label: str, measure: str, top_k: int
) -> Ranking:
    comparison = stats.compare_system_rankings(human, other, label)
    order = stats.system_ranking(human)
    top = order[:top_k]
    if len(top) >= 2:
        top_tau = stats.kendall_tau({r: human[r] for r in top}, {r: other[r] for r in top})
        top_ap = stats.tau_ap_ties({r: human[r] for r in top}, {r: other[r] for r in top})
    else:
        top_tau = top_ap = math.nan
    moves = sorted(comparison.changes, key=lambda c: (-abs(c.shift), c.reference_rank))
    return Ranking(
        label, measure, len(human), comparison.kendall_tau, comparison.tau_ap, len(top),
        top_tau, top_ap,
        tuple(Move(c.run, c.reference_rank, c.other_rank) for c in moves[:MOVES_SHOWN]),
    )  # fmt: skip


def _qrels(labels: dict[Key, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (qid, docno), grade in labels.items():
        out.setdefault(qid, {})[docno] = grade
    return out


# ----------------------------------------------------------------------------------- cost


def _reason_kind(text: str) -> str:
    for kind in ("malformed", "refused", "no answer", "not on the scale", "cut off", "not loaded"):
        if kind in text:
            return kind
    return "other"


def _cost(session: Session, judge: MachineJudge) -> Cost:
    labels, cannot, cached, prompt, completion, latency, cost = session.execute(
        select(
            func.count(MachineJudgement.grade),
            func.count(MachineJudgement.cannot_judge),
            func.count().filter(MachineJudgement.cached.is_(True)),
            func.coalesce(func.sum(MachineJudgement.prompt_tokens), 0),
            func.coalesce(func.sum(MachineJudgement.completion_tokens), 0),
            func.avg(MachineJudgement.latency_ms).filter(MachineJudgement.cached.is_(False)),
            func.coalesce(func.sum(MachineJudgement.cost), 0.0),
        ).where(MachineJudgement.judge_id == judge.id)
    ).one()
    reasons: Counter[str] = Counter()
    flagged = 0
    for text, flags in session.execute(
        select(MachineJudgement.cannot_judge, MachineJudgement.flags).where(
            MachineJudgement.judge_id == judge.id
        )
    ):
        if text:
            reasons[_reason_kind(text)] += 1
        flagged += bool({"instructions", "stuffing"} & set(flags or ()))
    return Cost(
        labels, cannot, tuple(sorted(reasons.items())), cached, flagged, int(prompt),
        int(completion), float(latency) if latency is not None else math.nan, float(cost),
    )  # fmt: skip


def _samples(
    session: Session, campaign: Campaign, judge: MachineJudge, human: dict[Key, int],
    machine: dict[Key, int],
) -> tuple[SampleCheck, ...]:  # fmt: skip
    checks = []
    for pool in session.scalars(
        select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.number)
    ):
        design = (pool.params or {}).get("machine_sample")
        if not design or design.get("judge") != judge.name:
            continue
        sample = [
            hybrid.Sampled((e.qid, e.docno), e.sampled, e.inclusion_prob, e.stratum)
            for e in session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id))
        ]
        unjudged = sum(1 for s in sample if s.sampled and s.key not in human)
        estimate = hybrid.estimate_error(
            sample, human, machine, level=campaign.relevance_level, design=design["design"]
        )
        checks.append(SampleCheck(pool.number, design["design"], float(design["share"]),
                                  estimate, unjudged))  # fmt: skip
    return tuple(checks)


# --------------------------------------------------------------------------------- report


def machine_report(
    session: Session,
    campaign: Campaign,
    *,
    judges: Sequence[str] | None = None,
    assessor: str | None = None,
    measure: str = "map",
    top_k: int = 5,
    weights: str = "linear",
    n_resamples: int = 1000,
    seed: int = 0,
) -> MachineReport:
    """The analysis of the module's docstring for the named judges (default: all)."""
    if weights not in WEIGHTS:
        raise ServiceError(f"weights: expected {' or '.join(WEIGHTS)}, got {weights!r}")
    if top_k < 2:
        raise ServiceError(f"top k: expected at least 2 runs, got {top_k}")
    names = list(judges) if judges else machine_judges.judge_names(session, campaign)
    if not names:
        raise ServiceError(f"campaign {campaign.name!r} has no machine judge")
    human, completeness = qrels_labels(session, campaign, assessor=assessor)
    what = machine_hybrid.human_label_name(completeness.labels)
    notes = []
    if not human:
        raise ServiceError("no human label yet: nothing to compare the machine judges with")
    if not completeness.complete:
        notes.append(
            f"Human qrels incomplete: {completeness.describe()}; the rankings under them "
            "count those documents as not relevant."
        )
    runs = load_runs(session, campaign)
    human_scores = _scores(runs, _qrels(human), "human", measure, campaign)
    grades = [value for value, _ in machine_judges.scale(campaign)]
    reports = []
    for name in names:
        judge = machine_judges.get_judge(session, campaign, name)
        machine = machine_judges.machine_labels(session, judge)
        judge_notes = []
        rankings = []
        if len(runs) >= 2 and machine:
            combined = machine_hybrid.combined_qrels(
                session, campaign, judge, combination="hybrid", assessor=assessor
            )
            for label, labels in (("machine", machine), ("hybrid", combined.labels)):
                scores = _scores(runs, _qrels(labels), label, measure, campaign)
                rankings.append(_ranking(human_scores, scores, label, measure, top_k))
            if combined.completeness.missing:
                judge_notes.append(
                    f"{len(combined.completeness.missing)} pooled document(s) have neither a "
                    "human nor a "
                    f"machine label; every qrels here counts them as not relevant."
                )
        elif len(runs) < 2:
            judge_notes.append("Fewer than two runs: no ranking to compare.")
        if not machine:
            judge_notes.append("No machine label yet.")
        reports.append(JudgeReport(
            judge.name, judge.model, judge.template_hash,
            _agreement(human, machine, grades, weights=weights, n_resamples=n_resamples,
                       seed=seed),
            tuple(rankings), _samples(session, campaign, judge, human, machine),
            _cost(session, judge), tuple(judge_notes),
        ))  # fmt: skip
    return MachineReport(campaign.name, what, measure, top_k, tuple(reports), tuple(notes))


# --------------------------------------------------------------------------------- tables


def report_tables(report: MachineReport) -> list[Table]:
    """The report's tables: agreement, confusion matrices, rankings, moves, sample estimates,
    cost (one table each, all judges together where they share columns)."""
    tables = [_agreement_table(report)]
    for judge in report.judges:
        if judge.agreement is not None:
            tables.append(_confusion_table(judge))
    tables.append(_ranking_table(report))
    tables.append(_moves_table(report))
    if any(j.samples for j in report.judges):
        tables.append(_sample_table(report))
    tables.append(_cost_table(report))
    return tables


def _agreement_table(report: MachineReport) -> Table:
    rows = []
    for j in report.judges:
        a = j.agreement
        if a is None:
            rows.append(cells(j.judge, "overall", 0, None, None, None, None))
            continue
        rows.append(
            cells(
                j.judge,
                "overall",
                a.n,
                a.kappa,
                f"{a.kappa_low:.3f}-{a.kappa_high:.3f}",
                a.weighted_kappa,
                f"{a.weighted_low:.3f}-{a.weighted_high:.3f}",
            )
        )
        rows.extend(cells(j.judge, t.qid, t.n, t.kappa, None, t.weighted_kappa, None)
                    for t in a.per_topic)  # fmt: skip
    weights = next((j.agreement.weights for j in report.judges if j.agreement), "linear")
    return Table(
        ["Judge", "Topic", "Documents", "Kappa", "95% topic bootstrap", f"Kappa ({weights})",
         "95% topic bootstrap"],
        rows, caption=f"Machine judges against the human labels ({report.human})",
        label="machine-agreement", digits=3,
        notes=["Kappa of one topic is undefined (-) when both judges used a single grade there."],
    )  # fmt: skip


def _confusion_table(judge: JudgeReport) -> Table:
    a = judge.agreement
    assert a is not None
    rows = [[Cell(f"human {g}"), *(Cell(n) for n in row)]
            for g, row in zip(a.grades, a.confusion, strict=True)]  # fmt: skip
    return Table(["", *(f"{judge.judge} {g}" for g in a.grades)], rows,
                 caption=f"Confusion matrix: human grade (rows) x {judge.judge} (columns)",
                 label=f"machine-confusion-{judge.judge}")  # fmt: skip


def _ranking_table(report: MachineReport) -> Table:
    rows = [
        cells(j.judge, r.qrels, r.runs, r.kendall_tau, r.tau_ap, r.top_k, r.top_kendall_tau,
              r.top_tau_ap)
        for j in report.judges for r in j.rankings
    ]  # fmt: skip
    return Table(
        ["Judge", "Qrels", "Runs", "Kendall's tau", "tau_AP", "Top k", "tau (top k)",
         "tau_AP (top k)"],
        rows, caption=f"Run rankings by {report.measure} against the human qrels' ranking",
        label="machine-rankings", digits=3,
        notes=["machine: the machine's labels alone; hybrid: human labels where there are, the "
               "machine's elsewhere. Top k: the k best runs of the human ranking."],
    )  # fmt: skip


def _moves_table(report: MachineReport) -> Table:
    rows = [cells(j.judge, r.qrels, m.run, m.human_rank, m.other_rank, m.shift)
            for j in report.judges for r in j.rankings for m in r.moves]  # fmt: skip
    return Table(["Judge", "Qrels", "Run", "Human rank", "Rank", "Shift"], rows,
                 caption=f"The runs whose rank moves most (at most {MOVES_SHOWN} per qrels)",
                 label="machine-moves")  # fmt: skip


def _sample_table(report: MachineReport) -> Table:
    rows = []
    for j in report.judges:
        for s in j.samples:
            e = s.estimate
            rows.append(cells(j.judge, s.pool, s.design, s.share, e.sampled, s.unjudged,
                              e.pooled, e.uncovered, e.error_rate, f"{e.low:.3f}-{e.high:.3f}",
                              e.false_positive_rate, e.false_negative_rate))  # fmt: skip
    return Table(
        ["Judge", "Sample pool", "Design", "Share", "Judged by humans", "Not judged yet",
         "Covered", "Not covered", "Machine error (est.)", "95% interval",
         "False positives (est.)", "False negatives (est.)"],
        rows, caption="The machine's error over its pool, estimated from the human sample",
        label="machine-sample", digits=3,
        notes=["Horvitz-Thompson estimates of the share of pooled documents on which the machine "
               "and the humans differ at the relevance level, over the documents the design "
               "gave a chance to be judged (covered); it says nothing of the others."],
    )  # fmt: skip


def _cost_table(report: MachineReport) -> Table:
    rows = []
    for j in report.judges:
        c = j.cost
        reasons = ", ".join(f"{k} {n}" for k, n in c.reasons) or "-"
        rows.append(cells(j.judge, j.model, c.labels, c.cannot_judge, reasons, c.cached,
                          c.flagged, c.prompt_tokens + c.completion_tokens, c.mean_latency_ms,
                          c.cost))  # fmt: skip
    return Table(
        ["Judge", "Model", "Labels", "Cannot judge", "Why", "Cached", "Flagged", "Tokens",
         "Mean latency (ms)", "Cost"],
        rows, caption="What the machine judges cost", label="machine-cost", digits=2,
        notes=["Flagged: documents that address the judge or stuff the topic's words."],
    )  # fmt: skip
