"""Every message a view flashes uses one of the fixed categories, and each has a style."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from workbench.web.errors import FLASH_CATEGORIES

REPO = Path(__file__).resolve().parents[2]


def _flashed_categories() -> set[str]:
    found = set()
    for path in (REPO / "workbench" / "web").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_flash = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "flash"
            if is_flash and len(node.args) == 2 and isinstance(node.args[1], ast.Constant):
                found.add(node.args[1].value)
    return found


def test_views_flash_only_the_fixed_categories_and_each_has_a_style() -> None:
    used = _flashed_categories()
    assert used and used <= set(FLASH_CATEGORIES), used - set(FLASH_CATEGORIES)
    css = (REPO / "static" / "style.css").read_text(encoding="utf-8")
    styled = set(re.findall(r"\.flash\.([a-z]+)", css))
    assert set(FLASH_CATEGORIES) <= styled
