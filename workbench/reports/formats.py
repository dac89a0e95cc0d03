"""One renderer per format of the evaluation report: the bytes that `workbench evaluate
--format X`, the web page's download X and the API's report.X give for the same request.

Every format carries every section: its title, then its tables and notes, or why it is not
available. text, Markdown and LaTeX are documents (the heading, the scope, warnings and
notes first); CSV stacks each section's tables (a row with the section's title, a row with
each table's caption, the table, a blank row); JSON is `Report.to_dict`; the ZIP bundle holds
the whole report in each of those formats (`report.EXT`), each section alone in each
(`SECTION.EXT`) and each plot (`SECTION-PLOT.svg`), written with fixed dates so that the same
report gives the same bytes. `trec` is trec_eval's own output: no report is built for it
(`services.evaluation.trec_eval_output`), so it has no renderer here.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from workbench.reports.document import Report, SectionResult
from workbench.reports.tables import (
    latex_escape,
    md_escape,
    to_csv,
    to_json,
    to_latex,
    to_markdown,
    to_text,
    unique_labels,
)
from workbench.tabular import Table
from workbench.text_safety import csv_safe


@dataclass(frozen=True)
class TextStyle:
    """How a text-like format writes a heading, a section title, a paragraph and a table."""

    heading: Callable[[str], str]
    title: Callable[[str], str]
    paragraph: Callable[[str], str]
    table: Callable[[Table], str]


TEXT = TextStyle(
    heading=lambda t: f"{t}\n{'=' * len(t)}\n",
    title=lambda t: f"{t}\n{'-' * len(t)}\n",
    paragraph=lambda t: f"{t}\n",
    table=to_text,
)
MARKDOWN = TextStyle(
    heading=lambda t: f"# {md_escape(t)}\n",
    title=lambda t: f"## {md_escape(t)}\n",
    paragraph=lambda t: f"{md_escape(t)}\n",
    table=to_markdown,
)
LATEX = TextStyle(
    heading=lambda t: f"\\section*{{{latex_escape(t)}}}\n",
    title=lambda t: f"\\subsection*{{{latex_escape(t)}}}\n",
    paragraph=lambda t: f"{latex_escape(t)}\n",
    table=to_latex,
)


def _section_parts(section: SectionResult, style: TextStyle) -> list[str]:
    parts = [style.title(section.title)]
    if not section.available:
        parts.append(style.paragraph(f"Not available: {section.reason}"))
        return parts
    parts += [style.table(table) for table in section.tables]
    parts += [style.paragraph(note) for note in section.notes]
    return parts


def _document(report: Report, sections: Iterable[SectionResult], style: TextStyle) -> str:
    parts = [style.heading(report.heading)]
    parts += [style.paragraph(line) for line in report.header_lines()]
    for section in sections:
        parts += _section_parts(section, style)
    return "\n".join(parts)


def _labelled(sections: Iterable[SectionResult]) -> list[SectionResult]:
    """The sections with every table's LaTeX label unique across them."""
    sections = list(sections)
    tables = iter(unique_labels(t for s in sections for t in s.tables))
    return [
        SectionResult(s.name, s.title, s.reason, tuple(next(tables) for _ in s.tables),
                      s.plots, s.notes, s.data)
        for s in sections
    ]  # fmt: skip


def _csv_rows(rows: Iterable[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [csv_safe(cell) for cell in row] for row in rows
    )
    return buffer.getvalue()


def _csv_section(section: SectionResult) -> str:
    if not section.available:
        return _csv_rows([[section.title], [f"Not available: {section.reason}"]])
    parts = [_csv_rows([[section.title]])]
    for table in section.tables:
        parts.append(_csv_rows([[table.caption]]) if table.caption else "")
        parts.append(to_csv(table))
        parts.append(_csv_rows([[note] for note in table.notes]))
    parts.append(_csv_rows([[note] for note in section.notes]))
    return "".join(parts)


def _csv_document(report: Report, sections: Iterable[SectionResult]) -> str:
    head = _csv_rows([[report.heading], *([line] for line in report.header_lines())])
    return "\n".join([head, *(_csv_section(s) for s in sections)])


def render_text(report: Report) -> str:
    return _document(report, report.sections, TEXT)


def render_markdown(report: Report) -> str:
    return _document(report, report.sections, MARKDOWN)


def render_latex(report: Report) -> str:
    return _document(report, _labelled(report.sections), LATEX)


def render_csv(report: Report) -> str:
    return _csv_document(report, report.sections)


def render_json(report: Report) -> str:
    return to_json(report.to_dict())


TEXT_FORMATS: dict[str, tuple[str, Callable[[Report], str]]] = {
    "text": ("txt", render_text),
    "json": ("json", render_json),
    "csv": ("csv", render_csv),
    "md": ("md", render_markdown),
    "latex": ("tex", render_latex),
}


def _section_alone(report: Report, section: SectionResult, fmt: str) -> str:
    """One section as a file of the bundle, in format `fmt` of TEXT_FORMATS."""
    if fmt == "json":
        return to_json(section.to_dict())
    if fmt == "csv":
        return _csv_section(section)
    style = {"text": TEXT, "md": MARKDOWN, "latex": LATEX}[fmt]
    return "\n".join(_section_parts(_labelled([section])[0], style))


ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def render_zip(report: Report) -> bytes:
    """The bundle: report.EXT, SECTION.EXT for each format, SECTION-PLOT.svg."""
    files: list[tuple[str, str]] = []
    for extension, render in TEXT_FORMATS.values():
        files.append((f"report.{extension}", render(report)))
    for section in report.sections:
        for fmt, (extension, _render) in TEXT_FORMATS.items():
            files.append((f"{section.name}.{extension}", _section_alone(report, section, fmt)))
        files += [(f"{section.name}-{plot.name}.svg", plot.svg) for plot in section.plots]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in files:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


@dataclass(frozen=True)
class ReportFormat:
    """A format of the report: its file extension, media type, what it is, and its renderer
    (None for trec, which is written without a report)."""

    extension: str
    mimetype: str
    help: str
    render: Callable[[Report], bytes] | None


def _utf8(render: Callable[[Report], str]) -> Callable[[Report], bytes]:
    return lambda report: render(report).encode("utf-8")


REPORT_FORMATS: dict[str, ReportFormat] = {
    "text": ReportFormat("txt", "text/plain", "aligned text", _utf8(render_text)),
    "json": ReportFormat("json", "application/json", "the report's dict form", _utf8(render_json)),
    "csv": ReportFormat("csv", "text/csv", "every table, section by section", _utf8(render_csv)),
    "md": ReportFormat("md", "text/markdown", "GitHub Markdown", _utf8(render_markdown)),
    "latex": ReportFormat("tex", "application/x-latex", "booktabs tables", _utf8(render_latex)),
    "zip": ReportFormat("zip", "application/zip", "every section in every format, and the "
                        "plots", render_zip),
    "trec": ReportFormat("trec_eval.txt", "text/plain", "trec_eval -c -q's output for the "
                         "same -m flags (and -l), run after run", None),
}  # fmt: skip
"""The one list of the report's formats: `evaluate --format`, the web downloads and the API's
report.FORMAT follow it."""


def file_name(campaign: str, fmt: str) -> str:
    """The download's file name: CAMPAIGN-evaluation.EXTENSION (text and trec differ)."""
    return f"{campaign}-evaluation.{REPORT_FORMATS[fmt].extension}"


def render_report(report: Report, fmt: str) -> bytes:
    """The report's bytes in `fmt` (a format of REPORT_FORMATS with a renderer)."""
    render = REPORT_FORMATS[fmt].render
    if render is None:
        raise ValueError(f"the {fmt} format is written without a report")
    return render(report)
