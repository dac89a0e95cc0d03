"""The renderings of a report table (`workbench.tabular.Table`, the plain value): aligned
text, CSV, Markdown, LaTeX (booktabs) and JSON.

Numbers are shown with the table's `digits` decimals; NaN and None print as "-" (null in
JSON, `workbench.json_output.json_safe`). CSV keeps more: a number to 15 significant digits
(`csv_number`), the precision a double always carries through a decimal round trip (C's
DBL_DIG), so a mean such as 0.9249999999999999 (0.925 plus the noise of binary arithmetic in
its 17th digit) is written 0.925; JSON keeps the double.

Text from users (campaign names, run tags, topic ids, assessors' names) cannot attack a
reader: CSV cells that a spreadsheet would run as a formula are neutralised
(`workbench.text_safety.csv_safe`), Markdown escapes what could open HTML (`<`, and `&`
before an entity) and its own markup, LaTeX escapes every text field and labels keep only
safe characters; `unique_labels` makes the labels of several tables unique.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from workbench.json_output import json_safe
from workbench.tabular import Cell, Table
from workbench.text_safety import csv_safe


def to_text(table: Table) -> str:
    """Aligned columns; bold cells end with '*', marks follow '^'."""

    def show(cell: Cell) -> str:
        text = table.shown(cell) + ("*" if cell.bold else "")
        return text + (f"^{cell.marks}" if cell.marks else "")

    grid = [table.columns, *([show(c) for c in row] for row in table.rows)]
    widths = [max(len(r[i]) for r in grid) for i in range(len(table.columns))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in grid]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [table.caption, ""] if table.caption else []
    out.extend(lines)
    out.extend(table.notes)
    return "\n".join(out) + "\n"


def csv_number(value: Any) -> Any:
    """A float to 15 significant digits without trailing zeros (0.925, not the
    0.9249999999999999 that a mean may be); other values as they are."""
    return format(value, ".15g") if isinstance(value, float) else value


def to_csv(table: Table) -> str:
    """Values as `csv_number` writes them; a column '<name> marks' after each column that
    carries marks."""
    marked = [
        i in table.marked or any(row[i].marks for row in table.rows)
        for i in range(len(table.columns))
    ]
    header: list[str] = []
    for name, has_marks in zip(table.columns, marked, strict=True):
        header.extend([name, f"{name} marks"] if has_marks else [name])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(name) for name in header])
    for row in table.rows:
        line: list[Any] = []
        for cell, has_marks in zip(row, marked, strict=True):
            value = cell.value
            line.append(
                ""
                if value is None or (isinstance(value, float) and math.isnan(value))
                else csv_safe(csv_number(value))
            )
            if has_marks:
                line.append(csv_safe(cell.marks))
        writer.writerow(line)
    return buffer.getvalue()


_MD_MARKUP = re.compile(r"([\\`\[\]|])")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def md_escape(text: str) -> str:
    """Text that cannot inject into Markdown and reads as written: `<` as an entity (no tag,
    no autolink can open), `&` as one where it would start an entity, brackets, backticks,
    backslashes and pipes backslash-escaped (no links or images, no code spans, no extra
    table cells), a leading `>` or `#` escaped (no quote, no heading), line breaks as spaces.
    `>=` stays `>=`."""
    text = " ".join(text.splitlines())
    text = _ENTITY.sub("&amp;", text).replace("<", "&lt;")
    text = _MD_MARKUP.sub(r"\\\1", text)
    return "\\" + text if text.startswith((">", "#")) else text


def to_markdown(table: Table) -> str:
    """GitHub Markdown: bold as **x**, marks as <sup>ab</sup>, caption in italics above."""

    def show(cell: Cell) -> str:
        text = md_escape(table.shown(cell))
        text = f"**{text}**" if cell.bold else text
        return text + (f"<sup>{md_escape(cell.marks)}</sup>" if cell.marks else "")

    lines = [f"*{md_escape(table.caption)}*", ""] if table.caption else []
    lines.append("| " + " | ".join(md_escape(c) for c in table.columns) + " |")
    lines.append("|" + "|".join("---" for _ in table.columns) + "|")
    lines.extend("| " + " | ".join(show(c) for c in row) + " |" for row in table.rows)
    lines.extend(["", *(md_escape(note) for note in table.notes)] if table.notes else [])
    return "\n".join(lines) + "\n"


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "[": "{[}",
    "]": "{]}",
}


def latex_escape(text: str) -> str:
    """Text as LaTeX typesets it literally; line breaks and other control characters become
    spaces (a blank line would end the paragraph)."""
    return "".join(LATEX_SPECIALS.get(ch, " " if not ch.isprintable() else ch) for ch in str(text))


def latex_label(text: str) -> str:
    """A \\label key: letters, digits and : - . only (anything else becomes -)."""
    return re.sub(r"[^A-Za-z0-9:.-]", "-", text) or "tab"


def to_latex(table: Table) -> str:
    """A booktabs `table` with the caption and label, its notes below the tabular; bold as
    \\textbf, marks as $^{ab}$, padded with \\hphantom so numbers stay aligned."""
    width = max((len(c.marks) for row in table.rows for c in row), default=0)

    def show(cell: Cell) -> str:
        text = latex_escape(table.shown(cell))
        text = rf"\textbf{{{text}}}" if cell.bold else text
        if width and isinstance(cell.value, float):
            pad = "a" * (width - len(cell.marks))
            text += f"$^{{{latex_escape(cell.marks)}}}$" if cell.marks else ""
            text += rf"\hphantom{{$^{{{pad}}}$}}" if pad else ""
        return text

    spec = "l" + "r" * (len(table.columns) - 1)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.caption)}}}",
    ]
    if table.label:
        lines.append(rf"\label{{{latex_label(table.label)}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in table.columns) + r" \\",
        r"\midrule",
        *(" & ".join(show(c) for c in row) + r" \\" for row in table.rows),
        r"\bottomrule",
        r"\end{tabular}",
        *(rf"\par\smallskip{{\footnotesize {latex_escape(note)}}}" for note in table.notes),
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def to_json(value: Any) -> str:
    return json.dumps(json_safe(value), indent=2, allow_nan=False) + "\n"


def table_json(table: Table) -> dict[str, Any]:
    """The table as records: caption, columns, rows of {column: value}, bold, marks, notes."""
    return {
        "caption": table.caption,
        "notes": list(table.notes),
        "columns": table.columns,
        "rows": [
            {col: cell.value for col, cell in zip(table.columns, row, strict=True)}
            for row in table.rows
        ],
        "bold": [[c.bold for c in row] for row in table.rows],
        "marks": [[c.marks for c in row] for row in table.rows],
    }


def unique_labels(tables: Iterable[Table]) -> list[Table]:
    """The tables, a repeated LaTeX label getting -2, -3, ... so that each is unique."""
    seen: dict[str, int] = {}
    out = []
    for table in tables:
        if table.label:
            key = latex_label(table.label)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                table = dataclasses.replace(table, label=f"{key}-{seen[key]}")
        out.append(table)
    return out


def render_all(tables: Iterable[Table], fmt: str, separator: str = "\n") -> str:
    """Several tables in one document, with unique labels (`unique_labels`)."""
    return separator.join(render(table, fmt) for table in unique_labels(tables))


def render(table: Table, fmt: str) -> str:
    """The table in one of FORMATS."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return FORMATS[fmt].render(table)


@dataclass(frozen=True)
class Download:
    """A download's file extension and media type."""

    extension: str
    mimetype: str


@dataclass(frozen=True)
class Format(Download):
    """A rendering of report tables, downloaded as a file of its extension and media type."""

    render: Callable[[Table], str]


# The one list of table formats: every command's --format choices and every web download.
FORMATS: dict[str, Format] = {
    "text": Format("txt", "text/plain", to_text),
    "json": Format("json", "application/json", lambda table: to_json(table_json(table))),
    "csv": Format("csv", "text/csv", to_csv),
    "md": Format("md", "text/markdown", to_markdown),
    "latex": Format("tex", "application/x-latex", to_latex),
}
