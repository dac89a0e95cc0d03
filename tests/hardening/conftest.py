"""Fixtures for the hardening tests: the web tests' world, and the load generator's pieces."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.conftest import database_copy, template_of
from tests.web.conftest import (  # noqa: F401 - fixtures re-exported for this folder
    World,
    app,
    as_user,
    csrf_app,
    get_store_of,
    world,
    world_template,
    world_url,
)
from workbench.services import (
    adaptive_pools,
    assignments,
    calibration,
    gold,
    machine_judges,
    pools,
    routing,
    users,
)
from workbench.store import Store, open_store
from workbench.store.models import (
    Base,
    CalibrationItem,
    Campaign,
    MachineJob,
    MachineJudgement,
    Pool,
)

REPO = Path(__file__).resolve().parents[2]


REQUEST_COUNTERS = frozenset({"login_failures", "rate_buckets"})
"""Tables that count requests, not data: a refused request may still count (a failed login,
a token taken from the judging rate, kept in the store on PostgreSQL)."""

KEPT_COMPUTATIONS = frozenset({"pool_statistics", "report_jobs", "report_results"})
"""Tables that keep what a read computed, not data: the campaign page a refused request
returns to may keep its pool's statistics (`services.pool_statistics`) and queue and keep
its judging figures (report jobs: `services.judging_figures`)."""


def row_counts(session: Session) -> dict[str, int]:
    """Rows of every table of the store that holds data (not `REQUEST_COUNTERS` nor
    `KEPT_COMPUTATIONS`)."""
    return {
        table.name: session.scalar(select(func.count()).select_from(table)) or 0
        for table in Base.metadata.sorted_tables
        if table.name not in REQUEST_COUNTERS | KEPT_COMPUTATIONS
    }


def load_benchmark(stem: str) -> ModuleType:
    """benchmarks/load/<stem>.py as a module (benchmarks is not a package)."""
    name = f"workbench_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REPO / "benchmarks" / "load" / f"{stem}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_generator() -> ModuleType:
    """benchmarks/load/run_load.py as a module."""
    return load_benchmark("run_load")


def build_rich(store: Store, world: World) -> dict[str, int]:  # noqa: F811
    """Campaign c1 using every feature: a machine judge with labels on pool 1 and a finished
    job, an adaptive pool 2 with a reserved sample (carol its primary judge), a pool 3 routed
    adaptively over carol and bob, gold documents and a practice set. Returns the job's and
    the first practice item's ids."""
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.add_judge(s, c, model="m", base_url="http://127.0.0.1:9/v1")
        pool1 = s.get(Pool, world.pool_id)
        job = MachineJob(campaign_id=c.id, judge_id=judge.id, status="done", total=6, done=6,
                         scope={"pool": pool1.id, "pool_number": 1, "topics": None,
                                "only_unjudged": False})  # fmt: skip
        s.add(job)
        s.flush()
        for i, docno in enumerate(("D1", "D2", "D3", "D6", "D7", "D8")):
            for qid in ("T1", "T2"):
                s.add(MachineJudgement(judge_id=judge.id, campaign_id=c.id, qid=qid,
                                       docno=docno, grade=i % 3, cache_key=f"{qid}{docno}",
                                       template_hash="h", job_id=job.id))  # fmt: skip
        adaptive = adaptive_pools.build_adaptive_pool(
            s, c, method="mm", budget=4, depth=6, batch=2, secondary_share=0.5, seed=3,
            sample_share=0.5, stop_rule="sample",
        )  # fmt: skip
        assignments.assign(s, adaptive, "T1", users.get_user(s, "carol"))
        routed = pools.build_pool(s, c, strategy="depth", depth=2, seed=5)
        routing.apply_policy(
            s,
            routed,
            "adaptive",
            {"distance": 0},
            assessors=[users.get_user(s, "carol"), users.get_user(s, "bob")],
        )
        gold.set_quality(s, c, gold_share=0.2)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2), gold.GoldItem("T2", "D5", 0)])
        calibration.set_items(s, c, calibration.parse_items("T1\tD2\t1\twhy\nT2\tD4\t0\t\n"))
        item = s.scalar(select(CalibrationItem.id).where(CalibrationItem.campaign_id == c.id))
        return {"job": job.id, "item": item}


@pytest.fixture(scope="session")
def rich_template(
    tmp_path_factory: pytest.TempPathFactory,
    world_template: tuple[str, World],  # noqa: F811
) -> Iterator[tuple[str, World, dict[str, int]]]:
    """The web tests' world with `build_rich` done, once per session: (template, world, the
    ids `build_rich` returned); `rich_world_url` gives each test a copy."""
    source, the_world = world_template
    with database_copy(tmp_path_factory.mktemp("rich"), source) as url:
        store = open_store(url)
        ids = build_rich(store, the_world)
        store.dispose()
        yield template_of(url), the_world, ids


@pytest.fixture
def rich_world_url(
    tmp_path: Path, rich_template: tuple[str, World, dict[str, int]]
) -> Iterator[tuple[str, World]]:
    """(database URL, World): this test's copy of the campaign using every feature. A module
    whose tests use `rich` makes it its `world_url` (a fixture of that name returning it)."""
    template, the_world, _ids = rich_template
    folder = tmp_path / "rich"
    folder.mkdir()
    with database_copy(folder, template) as url:
        yield url, the_world


@pytest.fixture
def rich(
    rich_template: tuple[str, World, dict[str, int]],
    world_url: tuple[str, World],  # noqa: F811
    rich_world_url: tuple[str, World],
) -> dict[str, int]:
    """The ids of `build_rich` (the job's, the first practice item's) in this test's copy of
    the campaign using every feature (its module's `world_url` is `rich_world_url`)."""
    assert world_url is rich_world_url, "the module's world_url must be rich_world_url"
    return rich_template[2]
