"""The dependency rule: `workbench.web` and `workbench.cli` import neither SQLAlchemy nor
`workbench.store`; they reach the store through `workbench.services.store_handle` and the
services. Every import statement counts, at any depth (inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"
LAYERS = ("web", "cli")
FORBIDDEN = ("sqlalchemy", "workbench.store")


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = PACKAGE) -> list[tuple[ast.stmt, list[str]]]:
    """Every import statement of the file with the modules it may load: `import x` gives x;
    `from x import y` gives x and x.y (y may be a submodule); relative imports are resolved
    against the file's package (of package `root`)."""
    package = _module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[tuple[ast.stmt, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.append((node, [alias.name for alias in node.names]))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            found.append((node, [base, *(f"{base}.{alias.name}" for alias in node.names)]))
    return found


def _forbidden(name: str) -> bool:
    return any(name == root or name.startswith(f"{root}.") for root in FORBIDDEN)


def violations(path: Path, root: Path = PACKAGE) -> list[str]:
    """'module:line: import statement' for each import of the file that loads a forbidden
    module."""
    return [
        f"{_module_name(path, root)}:{node.lineno}: {ast.unparse(node)}"
        for node, names in imports(path, root)
        if any(_forbidden(name) for name in names)
    ]


def layer_files() -> list[Path]:
    return sorted(path for layer in LAYERS for path in (PACKAGE / layer).rglob("*.py"))


def test_web_and_cli_reach_the_store_only_through_the_services() -> None:
    files = layer_files()
    found = [problem for path in files for problem in violations(path)]
    assert len(files) > 20 and not found, "\n".join(found)


def test_trec_eval_does_not_import_the_store_at_all() -> None:
    """`workbench trec-eval` stays light: not even the store handle."""
    names = [name for _, found in imports(PACKAGE / "cli" / "trec_eval.py") for name in found]
    assert names and not [n for n in names if n.startswith(("workbench.services", *FORBIDDEN))]


def _loads(name: str, module: str) -> bool:
    return name == module or name.startswith(f"{module}.")


def test_reports_sit_above_the_services_and_the_core() -> None:
    """`workbench.reports` renders what the services and the pure core return: no service and
    no core module imports it (the table values live in `workbench.tabular`, JSON values in
    `workbench.json_output`). Only the web and the CLI (and `reports` itself) sit above it."""
    above = {"web", "cli", "reports"}
    files = sorted(
        path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in above
    )
    found = [
        f"{_module_name(path)}:{node.lineno}: {ast.unparse(node)}"
        for path in files
        for node, names in imports(path)
        if any(_loads(name, "workbench.reports") for name in names)
    ]
    assert len(files) > 100 and not found, "\n".join(found)


def test_the_table_values_are_pure() -> None:
    """`workbench.tabular` and `workbench.json_output` sit in the pure core: they import
    neither Flask nor SQLAlchemy nor any other part of the workbench."""
    for module in ("tabular.py", "json_output.py"):
        names = [name for _, found in imports(PACKAGE / module) for name in found]
        assert names and not [
            n for n in names if n.startswith(("workbench", "flask", "sqlalchemy"))
        ]


def test_exports_import_no_report_and_the_demo_no_store() -> None:
    """The exports (services) write CSV with `workbench.text_safety`, below them, not with the
    reports above them; the demo reaches the store through the services' handle."""
    upward = {
        PACKAGE / "services" / "exports.py": "workbench.reports",
        PACKAGE / "services" / "machine_exports.py": "workbench.reports",
        PACKAGE / "demo.py": "workbench.store",
    }
    found = [
        f"{path.name}: {name}"
        for path, above in upward.items()
        for _, names in imports(path)
        for name in names
        if name == above or name.startswith(f"{above}.")
    ]
    assert not found, found


def test_the_rule_sees_imports_at_any_depth(tmp_path: Path) -> None:
    """Imports inside functions, `import x`, `from x import y` and relative ones all count."""
    web = tmp_path / "workbench" / "web"
    web.mkdir(parents=True)
    module = web / "example.py"
    module.write_text(
        "import os\n"
        "from workbench.services import store_handle\n"
        "def view():\n"
        "    import sqlalchemy.orm\n"
        "    from ..store import models\n"
        "    from workbench import store\n"
        "    return models\n"
    )
    assert violations(module, tmp_path / "workbench") == [
        "workbench.web.example:4: import sqlalchemy.orm",
        "workbench.web.example:5: from ..store import models",
        "workbench.web.example:6: from workbench import store",
    ]


MAX_LINES = 700


def oversized(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """'module: lines' for each module of the package longer than `limit` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(root.parent).as_posix()}: {lines}")
    return found


def test_no_module_is_over_700_lines() -> None:
    """Small modules (the project's standard): split a long one along its seams."""
    assert len(list(PACKAGE.rglob("*.py"))) > 100
    assert oversized() == []


def test_a_long_module_is_found(tmp_path: Path) -> None:
    package = tmp_path / "workbench"
    (package / "store").mkdir(parents=True)
    (package / "short.py").write_text("x = 1\n" * 700)
    (package / "store" / "long.py").write_text("x = 1\n" * 701)
    assert oversized(package) == ["workbench/store/long.py: 701"]
