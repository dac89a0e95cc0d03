"""Text that cannot attack the reader of a download (pure; below the services and reports).

`csv_safe`: a CSV cell that a spreadsheet would run as a formula is neutralised (OWASP's CSV
injection rule). The exports (services) and the report tables (reports) both write CSV, so
the rule lives here, under both. Markdown and LaTeX escaping are the report tables' own
(`workbench.reports.tables`).
"""

from __future__ import annotations

import re
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_safe(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text, not a formula (OWASP's CSV injection rule):
    a string starting with =, +, -, @, tab or CR gets a leading apostrophe unless it is a
    plain number or the tables' placeholder "-" alone (no formula: a spreadsheet shows it as
    text); numbers and everything else are left as they are."""
    formula = isinstance(value, str) and value.startswith(_FORMULA_START) and value != "-"
    return "'" + value if formula and not _PLAIN_NUMBER.fullmatch(value) else value
