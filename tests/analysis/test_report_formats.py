"""The report's request parser and its renderers, without a store (the fast loop): a parameter
means the same from every entry point, and each format carries every section."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from workbench.reports.document import Plot, Report, SectionResult
from workbench.reports.formats import REPORT_FORMATS, file_name, render_report
from workbench.reports.pipeline import REPORT_OPTIONS, SECTIONS, parse
from workbench.reports.tables import md_escape
from workbench.services.errors import ServiceError
from workbench.services.evaluation_report import ReportRequest
from workbench.tabular import Cell, Table


def test_one_parser_reads_every_option_and_refuses_with_the_same_words() -> None:
    request = parse(
        {
            "measures": ["map P.5,10"],
            "measure": ["ndcg_cut.10"],
            "test": ["wilcoxon"],
            "alpha": ["0.1"],
            "level": ["2"],
            "pools": ["1, 3"],
            "allow_incomplete": ["1"],
            "section": ["tukey"],
            "sections": ["summary"],
            "num_docs": ["1000"],
            "interleaving": ["balanced"],
        }
    )
    assert request.measures == ("map", "P.5,10", "ndcg_cut.10")  # commas belong to a measure
    assert (request.test, request.alpha, request.level) == ("wilcoxon", 0.1, 2)
    assert request.pools == (1, 3) and request.allow_incomplete
    assert request.sections == ("summary", "tukey")
    assert request.option("num_docs") == 1000 and request.option("interleaving") == "balanced"
    assert ReportRequest.from_params(request.to_params()) == request  # a report job's key
    assert parse({}) == ReportRequest(options=(("interleaving", "team-draft"),))  # defaults
    for given, reason in (
        ({"alpha": ["1"]}, "alpha must be between 0 and 1"),
        ({"alpha": ["x"]}, "alpha must be a number; got 'x'"),
        ({"level": ["-1"]}, "level must be at least 0"),
        ({"test": ["z"]}, "unknown test 'z'; expected one of t, wilcoxon"),
        ({"sections": ["nope"]}, "unknown sections 'nope'"),
        ({"pools": ["two"]}, "pools must be pool numbers such as 1,2; got 'two'"),
        ({"num_docs": ["0"]}, "num docs must be at least 1"),
        # too large, whatever the option's own lower bound: not "at least"
        ({"level": ["9" * 23]}, r"^level must be at most 1e\+15; got '9{23}'$"),
        ({"num_docs": ["1e300"]}, r"^num docs must be an integer; got '1e300'$"),
        ({"num_docs": [str(10**16)]}, r"^num docs must be at most 1e\+15"),
    ):
        with pytest.raises(ServiceError, match=reason):
            parse(given)


def test_every_section_and_option_is_offered() -> None:
    names = [s.name for s in SECTIONS]
    assert len(names) == len(set(names)) and names[0] == "summary"
    assert {"per-topic", "pairwise-tests", "tukey", "ranking-stability", "reusability-run",
            "reusability-group", "collection-measures", "power", "sweep", "interleaving",
            "efficiency", "clicks", "precision-recall"} <= set(names)  # fmt: skip
    options = [o.name for o in REPORT_OPTIONS]
    assert len(options) == len(set(options))
    assert {"qrels", "measures", "pools", "outside_topics", "sections", "num_docs"} <= set(options)


def report() -> Report:
    table = Table(
        ["Run", "map"],
        [[Cell("a"), Cell(0.1 + 0.2)], [Cell("=b"), Cell(2 / 3)]],
        caption="Runs (relevant: grade >= 1)",
        label="tab:x",
        notes=["a table note"],
    )
    return Report(
        campaign="c <&>",
        qrels="final",
        params={},
        scope={"description": "pool 1 (chosen); 2 topics", "pools": [1]},
        warnings=("adaptive pool",),
        notes=("a report note",),
        sections=(
            SectionResult(
                "summary",
                "Runs x measures",
                tables=(table,),
                notes=("a note",),
                plots=(Plot("p", "a plot", "<svg/>"),),
            ),
            SectionResult("tukey", "Tukey HSD", tables=(table,)),
            SectionResult("clicks", "Clicks", reason="no query log"),
        ),
    )


def test_every_format_carries_every_section() -> None:
    document = report()
    for fmt in ("text", "md", "latex", "csv", "json"):
        text = render_report(document, fmt).decode()
        for title in ("Runs x measures", "Tukey HSD", "Clicks", "no query log"):
            assert title in text, (fmt, title)
        assert "a report note" in text and "adaptive pool" in text
        assert "a table note" in text, fmt  # LaTeX and CSV too
    latex = render_report(document, "latex").decode()
    assert r"\label{tab:x}" in latex and r"\label{tab:x-2}" in latex  # unique across sections
    rows = list(csv.reader(io.StringIO(render_report(document, "csv").decode())))
    assert ["Runs x measures"] in rows and ["a", "0.3"] in rows
    assert ["'=b", "0.666666666666667"] in rows  # no formula; 15 significant digits
    markdown = render_report(document, "md").decode()
    assert "grade >= 1" in markdown and "c &lt;&> " in markdown


def test_the_bundle_is_the_same_bytes_every_time() -> None:
    data = render_report(report(), "zip")
    assert data == render_report(report(), "zip")
    bundle = zipfile.ZipFile(io.BytesIO(data))
    names = bundle.namelist()
    assert names[:5] == ["report.txt", "report.json", "report.csv", "report.md", "report.tex"]
    assert {"summary.csv", "tukey.md", "clicks.tex", "summary-p.svg"} <= set(names)
    assert bundle.read("report.md") == render_report(report(), "md")
    assert b"Not available: no query log" in bundle.read("clicks.txt")
    with pytest.raises(ValueError, match="without a report"):
        render_report(report(), "trec")
    assert file_name("c", "text") != file_name("c", "trec") == "c-evaluation.trec_eval.txt"
    assert set(REPORT_FORMATS) == {"text", "json", "csv", "md", "latex", "zip", "trec"}


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("grade >= 1", "grade >= 1"),
        ("R&D", "R&D"),
        ("&lt;", "&amp;lt;"),
        ("<img src=x>", "&lt;img src=x>"),
        ("> quote", "\\> quote"),
        ("# heading", "\\# heading"),
        ("[a](b)", "\\[a\\](b)"),
        ("a|b", "a\\|b"),
    ],
)
def test_markdown_escapes_what_could_inject_and_nothing_else(text: str, escaped: str) -> None:
    assert md_escape(text) == escaped
