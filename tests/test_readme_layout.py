"""README.md's Layout section names every module of `workbench` (issue 24 §4): a top-level
module by its file name, a module of a package by its name (with or without .py) in that
package's entry, or by its subpackage (`sections/`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layout_entries(readme: str) -> dict[str, str]:
    """The Layout section's code block, as {path at the line's start: the entry's text}."""
    block = readme.split("\n## Layout\n", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        if line and not line[0].isspace():
            current = line.split()[0].rstrip(",")
            entries[current] = line[len(current) :]
        elif current:
            entries[current] += "\n" + line
    return entries


def _named(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w/]){re.escape(word)}(?![\w])", text) is not None


def unmentioned(root: Path = ROOT) -> list[str]:
    """The modules of workbench/ (migrations aside) that the Layout section does not name."""
    entries = layout_entries((root / "README.md").read_text(encoding="utf-8"))
    block = "\n".join(f"{path} {text}" for path, text in entries.items())
    missing = []
    for path in sorted((root / "workbench").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        parts = module.split("/")
        if path.name == "__init__.py" or "migrations" in parts:
            continue
        if len(parts) == 2:
            found = module in entries or _named(path.name, block)
        else:
            entry = entries.get(f"{parts[0]}/{parts[1]}/", "")
            subpackage = "/".join(parts[2:-1])
            found = (
                _named(path.stem, entry)
                or _named(path.name, entry)
                or (bool(subpackage) and f"{subpackage}/" in entry)
            )
        if not found:
            missing.append(module)
    return missing


def test_the_layout_section_names_every_module() -> None:
    assert unmentioned() == []


def test_a_module_the_layout_does_not_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "workbench" / "web").mkdir(parents=True)
    for module in ("workbench/named.py", "workbench/web/views.py", "workbench/web/extra.py"):
        (tmp_path / module).write_text("")
    (tmp_path / "README.md").write_text(
        "# x\n\n## Layout\n\n```\nworkbench/named.py  a module\n"
        "workbench/web/       the app; views.py its views\n```\n"
    )
    assert unmentioned(tmp_path) == ["workbench/web/extra.py"]
