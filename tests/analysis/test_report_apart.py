"""The report's sections built apart (`Section.apart`: leave-one-out's two, the per-topic
figure, precision-recall, Tukey HSD and power, in a child forked by
`services.forked.compute_apart` while this process builds the rest) give the report built
in one process, byte for byte in every format; a child that fails, or a section that would
read the store in the child, is built in this process instead. On SQLite and, in the
PostgreSQL pass, on PostgreSQL (the child must leave this process's connection alone)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.analysis.campaign_shapes import Built, Shape, adjudicate, judge, shaped
from tests.conftest import database_copy
from workbench.reports import pipeline
from workbench.reports.formats import REPORT_FORMATS, render_report
from workbench.reports.sections import SECTIONS
from workbench.services import forked
from workbench.services.campaigns import get_campaign
from workbench.store import open_store


@pytest.fixture(scope="module")
def two_judges(tmp_path_factory, _migrated_template) -> Iterator[Built]:
    """Two pools, two judges per topic among three assessors, adjudicated: every section of
    the report (stability, both leave-one-outs) has something to show."""
    folder = tmp_path_factory.mktemp("apart")
    shape = Shape(strategies=("depth", "stratified"), judges=2)
    with database_copy(folder, _migrated_template) as url, shaped(shape, folder, url) as built:
        judge(built)
        adjudicate(built)
        yield built


def _rendered(built: Built, **kwargs) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """The report in every format; each section's title said once by the progress, the
    first section's first."""
    request = pipeline.parse({"test": ["randomization"], "allow_incomplete": ["1"]})
    store = open_store(built.url)
    said: list[str] = []
    try:
        with store.read_session() as session:
            campaign = get_campaign(session, "c")
            report = pipeline.build_report(session, campaign, request, said.append, **kwargs)
            assert sorted(said) == sorted(s.title for s in SECTIONS)
            assert said[0] == SECTIONS[0].title
            # the session still works after the child: this process's transaction is intact
            assert get_campaign(session, "c").name == "c"
    finally:
        store.dispose()
    return {f: render_report(report, f) for f, kind in REPORT_FORMATS.items() if kind.render}


def _spied(monkeypatch) -> list[object]:  # type: ignore[no-untyped-def]
    """The values the children gave (None: a child failed)."""
    given: list[object] = []
    start = forked.compute_apart

    def spy(work):  # type: ignore[no-untyped-def]
        child = start(work)
        result = child.result

        def heard():  # type: ignore[no-untyped-def]
            value = result()
            given.append(value)
            return value

        child.result = heard  # type: ignore[method-assign]
        return child

    monkeypatch.setattr(pipeline, "compute_apart", spy)
    return given


def test_sections_built_apart_equal_the_report_built_in_one_process(two_judges, monkeypatch):
    alone = _rendered(two_judges, apart=False)
    given = _spied(monkeypatch)
    together = _rendered(two_judges)
    assert len(given) == 1 and isinstance(given[0], dict)
    assert sorted(given[0]) == [
        "per-topic", "power", "precision-recall", "reusability-group", "reusability-run", "tukey"
    ]  # fmt: skip
    assert all(given[0][name].available for name in given[0])  # built, not refused
    assert together == alone
    assert b"Reusability: leave one run out" in together["text"]


def test_a_failed_child_is_replaced_by_building_here(two_judges, monkeypatch):
    alone = _rendered(two_judges, apart=False)
    monkeypatch.setattr(pipeline, "compute_apart", lambda work: forked.Apart(None, None))
    assert _rendered(two_judges) == alone


def test_a_section_that_reads_the_store_apart_is_built_here(two_judges, monkeypatch):
    """Ranking stability reads the assessors' qrels from the store: declared apart (wrongly),
    its child meets the guard instead of the store, fails, and the section is built here."""
    alone = _rendered(two_judges, apart=False)
    wrong = tuple(
        dataclasses.replace(s, apart=lambda context: None)
        if s.name in ("ranking-stability", "reusability-run")
        else s
        for s in SECTIONS
    )
    monkeypatch.setattr(pipeline, "SECTIONS", wrong)
    given = _spied(monkeypatch)
    assert _rendered(two_judges) == alone
    assert given == [None]


def test_compute_apart_gives_the_value_or_none(tmp_path: Path) -> None:
    assert forked.compute_apart(lambda: {"a": [1, 2.5]}).result() == {"a": [1, 2.5]}

    def fails() -> None:
        raise ValueError("no")

    assert forked.compute_apart(fails).result() is None
    child = forked.compute_apart(lambda: tmp_path.joinpath("written").write_text("x"))
    child.stop()  # ended unheard: nothing waits, no zombie left


CHILD_IMPORTS = """
import json, sys
import workbench.web.job_child
before = set(sys.modules)
from workbench.reports import pipeline
from workbench.reports.formats import REPORT_FORMATS, render_report
from workbench.services.campaigns import get_campaign
from workbench.store import open_store
from workbench.web.reports import _agreement_page
store = open_store(sys.argv[1])
with store.read_session() as session:
    campaign = get_campaign(session, "c")
    request = pipeline.parse({"test": ["randomization"], "allow_incomplete": ["1"]})
    report = pipeline.build_report(session, campaign, request, print, apart=False)
    for name, kind in REPORT_FORMATS.items():
        if kind.render:
            render_report(report, name)
    params = {"graded": True, "n_bootstrap": 20, "seed": 1}
    _agreement_page(session, campaign.id, params, print)
store.dispose()
heavy = {"scipy", "numpy", "matplotlib", "sqlalchemy", "workbench", "flask", "jinja2"}
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.split(".")[0] in heavy)))
"""


def test_a_job_child_imports_nothing_heavy_for_its_reports(two_judges):
    """Every module a report job uses is imported by `workbench.web.job_child`, which the
    fork server imports once: a forked child that imported scipy.stats itself spent over a
    second of CPU on each report (the report pipeline loads scipy on first use)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD_IMPORTS, two_judges.url],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    said = done.stdout.splitlines()
    assert said[: len(SECTIONS)] == [section.title for section in SECTIONS]  # every section
    assert said.count("confusion matrices") == 1
    assert json.loads(said[-1]) == []


CLI_CHILD = """
import json, sys
import workbench.cli.report_commands  # what `workbench evaluate` has imported when it builds
from workbench.cli import main
from workbench.reports import pipeline
start = pipeline.compute_apart

def spy(work):
    def watched():
        before = set(sys.modules)
        try:
            return work()
        finally:
            new = sorted(set(sys.modules) - before)
            print(json.dumps([m for m in new if m.split(".")[0] == "scipy"]), file=sys.stderr)
    return start(watched)

pipeline.compute_apart = spy
main(["--db", sys.argv[1], "evaluate", "--campaign", "c", "--allow-incomplete"],
     standalone_mode=False)
"""


def test_the_cli_report_loads_scipy_once_before_its_child(two_judges):
    """`workbench evaluate` builds the report's statistics on both sides of the fork: scipy
    is loaded before it, so the child (Tukey HSD, power, leave-one-out) loads none of it."""
    done = subprocess.run(
        [sys.executable, "-c", CLI_CHILD, two_judges.url],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert "Tukey HSD" in done.stdout and "Power" in done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
