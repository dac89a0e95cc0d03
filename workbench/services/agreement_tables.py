"""The agreement report's tables: overall and per topic, per pair of assessors, per assessor.

Plain `workbench.tabular.Table` values: the reports render them (web page, downloads, CLI)
and `AgreementReport._repr_html_` shows them in Jupyter, so they live below the reports.

Each kappa is shown with two readings, the course notes' (> 0.8 good, 0.67 to 0.8 fair,
below 0.67 not good) and Landis & Koch's (1977: below 0 poor, to 0.20 slight, 0.40 fair,
0.60 moderate, 0.80 substantial, above almost perfect), and with two 95 % intervals: the
analytic (Fleiss, Cohen & Everitt) one and a bootstrap one that resamples topics.
"""

from __future__ import annotations

import math

from workbench.services.agreement import (
    MIN_BOOTSTRAP_TOPICS,
    AgreementReport,
    GroupAgreement,
    PairAgreement,
)
from workbench.tabular import Table, cells

_LANDIS_KOCH = (
    "Landis & Koch (1977): below 0 poor, to 0.20 slight, 0.40 fair, 0.60 moderate, "
    "0.80 substantial, above almost perfect"
)


def _labels(report: AgreementReport) -> str:
    if report.graded:
        return "grades"
    return f"binary labels (relevant: grade >= {report.relevance_level})"


def groups_table(report: AgreementReport) -> Table:
    """All assessors together: the whole campaign, then each topic."""
    level = "ordinal" if report.graded else "nominal"

    def row(g: GroupAgreement) -> list:
        return cells(
            g.name,
            g.n_items,
            g.n_multiply_judged,
            g.n_judges,
            g.percent_agreement,
            g.fleiss_kappa,
            _interval(g.bootstrap_low, g.bootstrap_high),
            g.krippendorff_alpha,
            g.reading,
            g.landis_koch,
            " & ".join(g.judges) if g.cohen_kappa is not None else None,
            g.cohen_kappa,
        )

    return Table(
        [
            "Topic",
            "Items",
            "Multiply judged",
            "Judges",
            "Agreement",
            "Fleiss kappa",
            "95% CI (topic bootstrap)",
            f"Krippendorff alpha ({level})",
            "Reading",
            "Landis & Koch",
            "Two judges",
            "Cohen kappa (two judges)",
        ],
        [row(report.overall), *(row(t) for t in report.per_topic)],
        caption=(
            f"Agreement of all assessors of {report.campaign} on {_labels(report)}, overall "
            "and per topic. Agreement: share of agreeing judge pairs; Fleiss' kappa over "
            "items with two or more judges, with a bootstrap interval resampling the "
            f"{len(report.per_topic)} topics (overall, given at least {MIN_BOOTSTRAP_TOPICS} "
            f"topics); readings of Fleiss' kappa after the course notes and {_LANDIS_KOCH}. "
            "Where a topic has exactly two judges, their Cohen's kappa over the documents "
            "both judged."
        ),
        label="tab:agreement-topics",
        digits=3,
    )


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"[{low:.3f}, {high:.3f}]"


def pairs_table(pairs: list[PairAgreement], report: AgreementReport, *, title: str) -> Table:
    """Per pair (or assessor against the others): kappa with both intervals and the reading."""
    extra = (
        ["Linear kappa", "Quadratic kappa"]
        if report.graded
        else ["Positive agreement", "Negative agreement"]
    )
    rows = []
    for p in pairs:
        more = (
            [p.linear_kappa, p.quadratic_kappa]
            if report.graded
            else [p.positive_agreement, p.negative_agreement]
        )
        rows.append(
            cells(
                p.first,
                p.second,
                p.n_items,
                p.percent_agreement,
                p.kappa,
                _interval(p.kappa_low, p.kappa_high),
                _interval(p.bootstrap_low, p.bootstrap_high),
                p.reading,
                p.landis_koch,
                p.scotts_pi,
                *more,
            )
        )
    return Table(
        [
            "Assessor",
            "Against",
            "Items",
            "Agreement",
            "Cohen kappa",
            "95% CI",
            "95% CI (topic bootstrap)",
            "Reading",
            "Landis & Koch",
            "Scott pi",
            *extra,
        ],
        rows,
        caption=(
            f"{title} on {_labels(report)} in {report.campaign}: Cohen's kappa with its "
            "large-sample 95% interval and a bootstrap interval resampling topics (given from "
            f"{MIN_BOOTSTRAP_TOPICS} shared topics); reading after the course notes: "
            f"above 0.8 good, 0.67 to 0.8 fair, below 0.67 not good; and after {_LANDIS_KOCH}."
        ),
        label="tab:agreement-pairs",
        digits=3,
    )


def agreement_tables(report: AgreementReport) -> list[Table]:
    return [
        groups_table(report),
        pairs_table(report.per_pair, report, title="Agreement per pair of assessors"),
        pairs_table(report.per_assessor, report, title="Each assessor against the others"),
    ]
