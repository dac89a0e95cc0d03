"""Report tables as plain values (pure): a `Table` of `Cell`s with its caption, label, digits
and notes, and its HTML display (Jupyter's `_repr_html_`).

A cell carries its value, whether it is bold (the best of its column) and its significance
marks (the letters of the rows it is significantly better than, as in ranx and PyTerrier).
Numbers are shown with `digits` decimals; NaN and None print as "-". The services, the metric
module and the reports all build tables from here; `workbench.reports.tables` renders them
(text, CSV, Markdown, LaTeX, JSON).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Cell:
    value: Any
    bold: bool = False
    marks: str = ""


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""
    label: str = ""
    digits: int = 4
    notes: list[str] = field(default_factory=list)
    marked: set[int] = field(default_factory=set)  # columns that carry significance marks

    def _repr_html_(self) -> str:
        """The table in Jupyter (:func:`to_html`)."""
        return to_html(self)

    def shown(self, cell: Cell) -> str:
        """The cell's value as text, without bold or marks."""
        value = cell.value
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if isinstance(value, float):
            return f"{value:.{self.digits}f}"
        return str(value)


def cells(*values: Any) -> list[Cell]:
    return [Cell(v) for v in values]


def bold_best(table: Table, column: int, *, lower_is_better: bool = False) -> None:
    """Bold the best value of a numeric column after rounding (ties: all of them; none if all
    values are equal, as nothing stands out)."""
    values: list[float | None] = []
    for row in table.rows:
        value = row[column].value
        if isinstance(value, (int, float)) and not math.isnan(value):
            values.append(round(value, table.digits))
        else:
            values.append(None)
    present = [v for v in values if v is not None]
    if len(set(present)) < 2:
        return
    best = min(present) if lower_is_better else max(present)
    for row, value in zip(table.rows, values, strict=True):
        row[column].bold = value == best


def to_html(table: Table) -> str:
    """An HTML table (Jupyter's rich display): caption, bold best values, marks as
    superscripts, notes below; every text escaped."""
    esc = html.escape

    def cell(c: Cell) -> str:
        text = esc(table.shown(c))
        text = f"<b>{text}</b>" if c.bold else text
        return f"<td>{text}<sup>{esc(c.marks)}</sup></td>" if c.marks else f"<td>{text}</td>"

    head = "".join(f"<th>{esc(name)}</th>" for name in table.columns)
    body = "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in table.rows)
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    notes = "".join(f"<p>{esc(note)}</p>" for note in table.notes)
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
