"""The assessor dashboard (`services.assessor_dashboard`) as report tables and SVG plots: the
web page, the downloads (CSV, JSON, Markdown, LaTeX, text) and `workbench assessors` render
these, and an evaluation report may include them."""

from __future__ import annotations

import math
from typing import Any

from workbench.reports import plots
from workbench.services.assessor_dashboard import AssessorDashboard, AssessorRow
from workbench.tabular import Cell, Table, cells


def _share(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(100 * value, 1)


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"{100 * low:.0f}-{100 * high:.0f}"


def _gold_cells(row: AssessorRow) -> list[Any]:
    if row.gold is None:
        return [0, None, "-", None, "-"]
    kappa = row.gold.kappa
    return [
        row.gold.n,
        _share(row.gold.accuracy.value),
        _interval(row.gold.accuracy.low, row.gold.accuracy.high),
        None if kappa is None else kappa.kappa,
        "-" if kappa is None else f"{kappa.low:.2f} to {kappa.high:.2f}",
    ]


def summary_table(d: AssessorDashboard) -> Table:
    """One row per assessor: progress, pace, grades, agreement, gold and flags."""
    level = int(100 * d.confidence)
    columns = [
        "Assessor", "Active", "Progress", "Judged", "Hours", "Per hour", "Median s/doc",
        "Relevant %", "Pairs with others", "Kappa with others", "Gold n", "Gold accuracy %",
        f"Gold {level} % CI", "Gold kappa", f"Gold kappa {level} % CI", "Practice",
        "Last judgement", "Flags",
    ]  # fmt: skip
    rows = []
    for r in d.rows:
        practice = "-" if r.practice is None else f"{r.practice.correct}/{r.practice.answered}"
        last = "-" if r.last_judgement is None else r.last_judgement.isoformat(timespec="minutes")
        rows.append(
            cells(
                r.assessor,
                "yes" if r.active else "no",
                f"{r.progress_judged}/{r.progress_total}",
                r.judged,
                round(r.hours, 2),
                None if math.isnan(r.per_hour) else round(r.per_hour, 1),
                None if math.isnan(r.median_seconds) else round(r.median_seconds, 1),
                _share(r.relevant_share),
                r.agreement.pairs,
                None if math.isnan(r.agreement.kappa) else r.agreement.kappa,
                *_gold_cells(r),
                practice,
                last,
                len(r.outliers),
            )
        )
    return Table(
        columns,
        rows,
        caption=f"Assessors of {d.campaign}: pace, grades, agreement ({d.weights} kappa), gold",
        label="tab:assessors",
        digits=2,
        notes=list(d.notes),
    )


def grade_table(d: AssessorDashboard) -> Table:
    """Current judgements per grade (and 'cannot judge') per assessor."""
    parts = [str(value) for value, _ in d.scale] + ["cannot judge"]
    names = dict((str(v), f"{label} ({v})") for v, label in d.scale)
    rows = [[Cell(r.assessor), *(Cell(r.grades.get(p, 0)) for p in parts)] for r in d.rows]
    return Table(
        ["Assessor", *(names.get(p, p) for p in parts)],
        rows,
        caption=f"Grade distribution of {d.campaign}",
        label="tab:assessor-grades",
    )


def drift_table(d: AssessorDashboard) -> Table:
    """Per assessor and period: judged, share relevant, agreement and gold accuracy."""
    rows = [
        cells(
            p.assessor,
            p.period,
            p.judged,
            _share(p.relevant_share),
            p.agreement_pairs,
            _share(p.agreement_percent),
            p.gold_n,
            _share(p.gold_accuracy),
        )
        for p in d.drift
    ]
    return Table(
        [
            "Assessor",
            d.period.capitalize(),
            "Judged",
            "Relevant %",
            "Pairs with others",
            "Agreement %",
            "Gold n",
            "Gold accuracy %",
        ],
        rows,
        caption=f"Drift of {d.campaign} by {d.period}",
        label="tab:assessor-drift",
        digits=1,
    )


def outlier_table(d: AssessorDashboard) -> Table:
    """Each flagged assessor with each reason."""
    rows = [cells(r.assessor, reason) for r in d.rows for reason in r.outliers]
    return Table(
        ["Assessor", "Reason"],
        rows,
        caption=f"Assessors flagged in {d.campaign}",
        label="tab:assessor-outliers",
        notes=[] if rows else ["No assessor is flagged."],
    )


def dashboard_tables(d: AssessorDashboard) -> list[Table]:
    """The dashboard's tables, in the order of the page."""
    return [summary_table(d), grade_table(d), drift_table(d), outlier_table(d)]


def dashboard_plots(d: AssessorDashboard) -> dict[str, str]:
    """name -> SVG: grade shares, gold accuracy with intervals, share relevant per period,
    judgement events per hour."""
    parts = [str(v) for v, _ in d.scale] + ["cannot judge"]
    labels = {str(v): label for v, label in d.scale}
    shares = {
        r.assessor: {
            labels.get(p, p): r.grades.get(p, 0) / r.judged if r.judged else 0.0 for p in parts
        }
        for r in d.rows
    }
    out = {
        "grades": plots.stacked_shares(
            shares,
            [labels.get(p, p) for p in parts],
            title="Grade distribution",
            xlabel="share of the assessor's judgements",
        ),
    }
    gold = {
        r.assessor: (r.gold.accuracy.value, r.gold.accuracy.low, r.gold.accuracy.high)
        for r in d.rows
        if r.gold is not None
    }
    if gold:
        out["gold"] = plots.interval_points(
            gold,
            title=f"Gold accuracy ({int(100 * d.confidence)} % Wilson interval)",
            xlabel="accuracy",
        )
    periods = sorted({p.period for p in d.drift}, key=_period_key)
    if periods:
        series: dict[str, dict[str, float]] = {}
        for p in d.drift:
            if not math.isnan(p.relevant_share):
                series.setdefault(p.assessor, {})[p.period] = p.relevant_share
        out["drift"] = plots.category_lines(
            series, periods, title=f"Share relevant by {d.period}", xlabel=d.period,
            ylabel="share relevant",
            ylim=(0, 1),
        )  # fmt: skip
    hours = sorted({h.hour for h in d.hourly})
    if hours:
        per_hour: dict[str, dict[str, float]] = {}
        for h in d.hourly:
            per_hour.setdefault(h.assessor, {})[h.hour] = h.events
        out["hourly"] = plots.category_lines(
            per_hour, hours, title="Judgements per clock hour (UTC)", xlabel="hour",
            ylabel="judgement events",
            ylim=(0, None),
        )  # fmt: skip
    return out


def _period_key(period: str) -> tuple[int, str]:
    """Sessions in number order ('session 10' after 'session 9'), days as text."""
    head, _, number = period.partition(" ")
    return (
        (int(number), "")
        if head == "session" and number.isascii() and number.isdigit()
        else (0, period)
    )
