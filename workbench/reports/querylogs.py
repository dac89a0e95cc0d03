"""Query-log report tables: the anonymisation report, click-vs-assessor agreement, and runs
ranked on click preferences beside the assessors' qrels."""

from __future__ import annotations

from workbench.services.querylogs import ClickAgreement, ClickEvaluation, QueryLogSummary
from workbench.tabular import Table, bold_best, cells


def anonymisation_table(summary: QueryLogSummary) -> Table:
    """One row per rule: what it did to impressions, users and queries; read and kept."""
    report = summary.anonymisation
    rows = [cells("read", "", *report.read)]
    rows.extend(cells(r.rule, r.action, r.impressions, r.users, r.queries) for r in report.rules)
    rows.append(cells("kept", "", *report.kept))
    return Table(
        ["Rule", "Action", "Impressions", "Users", "Queries"],
        rows,
        caption=(
            f"Anonymisation of query log {summary.name} ({summary.source}, k = "
            f"{summary.min_users} distinct users per query)."
        ),
        label="tab:querylog-anonymisation",
        notes=[
            f"{summary.impressions} impressions stored, {summary.mapped_impressions} on "
            f"{summary.topics} topic(s); {summary.unmapped_queries} stored quer(y/ies) match "
            "no topic (they count in the expected click rate per rank only).",
            "Masks count the query texts as typed that they changed; the k rule counts the "
            "users left without any impression and the normalised queries dropped.",
            *summary.warnings,
        ],
    )


def logs_table(summaries: list[QueryLogSummary]) -> Table:
    return Table(
        ["Log", "Source", "Imported", "k", "Impressions", "On topics", "Topics"],
        [
            cells(
                s.name,
                s.source,
                s.created_at,
                s.min_users,
                s.impressions,
                s.mapped_impressions,
                s.topics,
            )
            for s in summaries
        ],
        caption="Query logs of the campaign.",
        label="tab:querylogs",
    )


def agreement_table(report: ClickAgreement) -> Table:
    """Per topic and overall: consistent / comparable click preferences and the share."""
    rows = [cells(t.qid, t.consistent, t.comparable, t.share) for t in report.topics]
    low, high = report.interval
    rows.append(cells("all", report.consistent, report.comparable, report.share))
    return Table(
        ["Topic", "Consistent", "Comparable", "Share"],
        rows,
        caption=(
            f"Click preferences of {report.log} ({report.options}) against the "
            f"{report.qrels} qrels: of the preferences a > b where both documents are judged "
            "with different grades, the share where a has the higher grade."
        ),
        label="tab:click-agreement",
        notes=[
            f"{report.preferences} click preferences on topics; {report.comparable} compare "
            f"judged documents of different grades. Overall share {report.share:.4f}, "
            f"{report.confidence:.0%} topic-bootstrap interval [{low:.4f}, {high:.4f}].",
            *report.qrels_notes,
        ],
    )


def _preferences_of(report: ClickEvaluation) -> str:
    if report.source == "clicks":
        return f"click preferences of {report.log}"
    return f"assessors' pairwise preferences of {report.log}"


def click_evaluation_table(report: ClickEvaluation) -> Table:
    """Runs with their click-preference score and assessor score, rank under each."""
    click_rank = {tag: i + 1 for i, tag in enumerate(report.clicks_order)}
    assessor_rank = {tag: i + 1 for i, tag in enumerate(report.assessors_order)}
    rows = [
        cells(r.tag, r.clicks, click_rank[r.tag], r.assessors, assessor_rank[r.tag], r.click_topics)
        for r in sorted(report.runs, key=lambda r: assessor_rank[r.tag])
    ]
    source = report.source
    clicks = source == "clicks"
    noun, word = ("Click preferences", "click") if clicks else ("Pairwise preferences", source)
    table = Table(
        [
            "Run",
            f"{report.prefs_measure} ({source})",
            "Rank",
            f"{report.measure} (assessors)",
            "Rank",
            f"Topics ({source})",
        ],
        rows,
        caption=(
            f"Runs scored on the {_preferences_of(report)} ({report.options}; "
            f"trec_eval -R prefs) and on the {report.qrels} qrels."
        ),
        label="tab:click-evaluation",
        notes=[
            f"Kendall's tau between the two rankings: {report.kendall_tau:.4f}; tau_AP "
            f"(assessors as reference): {report.tau_ap:.4f}.",
            f"{noun} cover {report.preference_topics} of the campaign's "
            f"{report.campaign_topics} topics; the {word} score of a run averages over those "
            "it retrieves.",
            *report.qrels_notes,
        ],
    )
    bold_best(table, 1)
    bold_best(table, 3)
    return table
