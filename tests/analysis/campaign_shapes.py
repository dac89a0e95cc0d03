"""Campaigns of many shapes, built and judged through the public entry points only: the CLI
(click's CliRunner) sets the campaign up, assessors judge through the JSON API with their
tokens, the organiser adjudicates with the CLI. The report tests and the matrix read them
back through the CLI, the web pages and the API.

Every topic has its own documents (``301-00`` ... ``301-11``); the oracle grades them (2 for
the first two, 1 for the next two, 0 for the rest; 0 everywhere on an all-negative topic)
and each assessor departs from it on about one document in five, so that agreement and the
adjudication have something to do. Runs differ in quality: r1 ranks by the oracle, r2 and r3
shuffle it more and more, r4 (not contributing) is a seeded shuffle.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from flask import Flask
from flask.testing import FlaskClient

from tests.conftest import database_copy, template_of
from workbench.cli import main
from workbench.web import create_app

ADMIN = "boss"
DOCS_PER_TOPIC = 12
RUNS = {"r1": ("g1", 0.0), "r2": ("g1", 0.3), "r3": ("g2", 0.6), "r4": ("g3", 1.0)}
STRATEGY_FLAGS: dict[str, tuple[str, ...]] = {
    "depth": ("--strategy", "depth", "--depth", "4"),
    "take": ("--strategy", "take", "--budget", "5"),
    "fusion": ("--strategy", "fusion", "--budget", "5", "--fusion", "rrf"),
    "stratified": ("--strategy", "stratified", "--strata", "3:1.0,8:0.5"),
    "mm-discounted": ("--adaptive", "mm-discounted", "--budget", "6", "--depth", "6",
                      "--batch", "2", "--secondary-share", "0.2"),
}  # fmt: skip


@dataclass(frozen=True)
class Shape:
    """A campaign's shape. ``strategies``: the judged pools, built (and each assigned) in this
    order; ``judges``: judges per topic (one more assessor than judges exists, so that every
    assessor lacks some topic); ``idle_pool``: one more pool nobody is assigned; an
    ``archived_pool`` is built, assigned and archived before anyone judges."""

    strategies: tuple[str, ...] = ("depth",)
    judges: int = 1
    topics: int = 4
    all_negative: bool = False  # topic 302 graded 0 by everyone
    unjudged_topic: bool = False  # the last topic is assigned to nobody
    short_run: bool = False  # r4 lacks the last two topics
    idle_pool: bool = False
    archived_pool: bool = False
    query_log: bool = False

    def qids(self) -> list[str]:
        return [str(301 + i) for i in range(self.topics)]

    def assessors(self) -> list[str]:
        return [f"judge{i}" for i in range(1, self.judges + 2)]

    def describe(self) -> str:
        parts = [f"pools={'+'.join(self.strategies)}", f"judges={self.judges}"]
        flags = ("all_negative", "unjudged_topic", "short_run", "idle_pool", "archived_pool",
                 "query_log")  # fmt: skip
        parts += [name for name in flags if getattr(self, name)]
        return " ".join(parts)


def oracle(shape: Shape, qid: str, docno: str) -> int:
    if shape.all_negative and qid == "302":
        return 0
    k = int(docno.rsplit("-", 1)[1])
    return 2 if k < 2 else 1 if k < 4 else 0


def assessor_grade(shape: Shape, username: str, qid: str, docno: str) -> int:
    """The oracle's grade, one step off for about one document in five per assessor (never
    above 0 on an all-negative topic)."""
    grade = oracle(shape, qid, docno)
    if shape.all_negative and qid == "302":
        return 0
    if zlib.crc32(f"{username}/{docno}".encode()) % 5 == 0:
        return grade - 1 if grade == 2 else grade + 1
    return grade


@dataclass
class Built:
    """A built campaign: its store URL, files, and the assessors' API tokens."""

    shape: Shape
    url: str
    folder: Path
    tokens: dict[str, str] = field(default_factory=dict)
    campaign_id: int = 1
    _app: Flask | None = None

    def cli(self, *args: str, ok: bool = True) -> Result:
        result = CliRunner().invoke(main, ["--db", self.url, *args], catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, (args, result.output)
        return result

    @property
    def app(self) -> Flask:
        if self._app is None:
            self._app = create_app(
                {
                    "DATABASE_URL": self.url,
                    "SECRET_KEY": "shapes",
                    "TESTING": True,
                    "INSTANCE_PATH": str(self.folder / "instance"),
                    "REPORT_JOB_WAIT_SECONDS": 300,
                    "REPORT_BOOTSTRAP_RESAMPLES": 50,
                    "QUERYLOG_KEY": b"k" * 32,
                }
            )
        return self._app

    def client(self, username: str = ADMIN) -> FlaskClient:
        client = self.app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {self.tokens[username]}"
        return client

    def api(self, path: str, username: str = ADMIN, **kwargs: Any) -> Any:
        response = self.client(username).get(f"/api/v1{path}", **kwargs)
        assert response.status_code == 200, (path, response.status_code, response.get_data()[:500])
        return response.get_json()


def write_files(shape: Shape, folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    qids = shape.qids()
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q} words {chr(97 + i)}\n" for i, q in enumerate(qids)))
    documents = folder / "docs.jsonl"
    documents.write_text(
        "".join(
            json.dumps({"docno": f"{q}-{k:02d}", "text": f"text of {q} number {k}"}) + "\n"
            for q in qids
            for k in range(DOCS_PER_TOPIC)
        )
    )
    runs = {}
    for tag, (_group, noise) in RUNS.items():
        lines = []
        for q in qids:
            if tag == "r4" and shape.short_run and q in qids[-2:]:
                continue
            rng = random.Random(f"{tag}/{q}")
            keyed = sorted(range(DOCS_PER_TOPIC), key=lambda k: k + noise * rng.uniform(0, 12))
            ranked = enumerate(keyed[:8], start=1)
            lines += [f"{q} Q0 {q}-{k:02d} {r} {20 - r} {tag}\n" for r, k in ranked]
        runs[tag] = folder / f"{tag}.run"
        runs[tag].write_text("".join(lines))
    reference = folder / "reference.qrels"
    reference.write_text(
        "".join(
            f"{q} 0 {q}-{k:02d} {oracle(shape, q, f'{q}-{k:02d}')}\n"
            for q in qids
            for k in range(DOCS_PER_TOPIC)
        )
    )
    return {"topics": topics, "documents": documents, "runs": runs, "reference": reference}


def build(shape: Shape, folder: Path, url: str) -> Built:
    """Create the campaign ``c`` of ``shape`` with the CLI; nothing judged yet."""
    built = Built(shape, url, folder)
    files = write_files(shape, folder / "files")
    built.cli("campaign", "create", "c")
    built.cli("import", "topics", "--campaign", "c", str(files["topics"]))
    built.cli("import", "documents", "--campaign", "c", str(files["documents"]))
    for tag, path in files["runs"].items():
        extra = ("--no-contribute",) if tag == "r4" else ()
        built.cli("import", "runs", "--campaign", "c", str(path), "--group", RUNS[tag][0], *extra)
    built.cli("import", "qrels", "--campaign", "c", str(files["reference"]), "--name", "reference")
    for name in [ADMIN, *shape.assessors()]:
        role = "admin" if name == ADMIN else "assessor"
        out = built.cli("user", "add", name, "--role", role, "--token").output
        built.tokens[name] = re.findall(r"\S{20,}", out)[-1]
    qids = shape.qids()
    judged = qids[:-1] if shape.unjudged_topic else qids
    number = 0
    if shape.archived_pool:
        number += 1
        built.cli("pool", "build", "--campaign", "c", *STRATEGY_FLAGS["depth"], "--seed", "3")
        built.cli("assign", "--campaign", "c", "--pool", str(number), "--judges-per-topic", "1")
        built.cli("archive", "pool", str(number), "--campaign", "c")
    for strategy in shape.strategies:
        number += 1
        built.cli("pool", "build", "--campaign", "c", *STRATEGY_FLAGS[strategy], "--seed", "5")
        built.cli("assign", "--campaign", "c", "--pool", str(number), "--judges-per-topic",
                  str(shape.judges), "--topics", ",".join(judged), "--order", "docno")  # fmt: skip
    if shape.idle_pool:
        built.cli("pool", "build", "--campaign", "c", "--strategy", "depth", "--depth", "8")
    if shape.query_log:
        log = folder / "files" / "log.jsonl"
        from tests.test_click_simulator import load_simulator

        simulate = load_simulator().main
        run_paths = [str(p) for p in files["runs"].values()]
        args = [str(files["reference"]), str(files["topics"]), *run_paths, "-o", str(log)]
        assert simulate([*args, "--impressions", "30", "--users", "12", "--seed", "2"]) == 0
        built.cli("querylog", "import", "--campaign", "c", str(log), "--name", "clicks",
                  "--min-users", "1")  # fmt: skip
    return built


def judge(built: Built, *, share: float = 1.0, assessors: Sequence[str] | None = None) -> int:
    """Every assessor judges through the API until `/next` says done, or until ``share`` of
    the documents they are shown are judged. Primary judges of adaptive pools go first (in
    rounds, as reveals follow judgements). Returns the number of judgements made."""
    made = 0
    names = list(assessors) if assessors is not None else built.shape.assessors()
    for _round in range(20):
        before = made
        for name in names:
            made += _judge_queues(built, name, share)
        if made == before:
            break
    return made


def _judge_queues(built: Built, name: str, share: float) -> int:
    client = built.client(name)
    made = 0
    for assignment in client.get("/api/v1/assignments").get_json()["assignments"]:
        aid = assignment["id"]
        while True:
            state = client.get(f"/api/v1/assignments/{aid}/next").get_json()
            if state["done"] or state["judged"] >= share * state["total"]:
                break
            grade = assessor_grade(built.shape, name, assignment["qid"], state["docno"])
            response = client.post(
                f"/api/v1/assignments/{aid}/judgements",
                json={"docno": state["docno"], "grade": grade, "time_spent_ms": 1000},
            )
            assert response.status_code in (200, 201), response.get_data()
            made += 1
    return made


def adjudicate(built: Built) -> None:
    built.cli("adjudicate", "--campaign", "c", "--rule", "majority", "--tie", "higher")


@contextmanager
def shaped(shape: Shape, folder: Path, url: str) -> Iterator[Built]:
    built = build(shape, folder, url)
    try:
        yield built
    finally:
        _dispose_app(built)


@contextmanager
def copied(once: Built, folder: Path) -> Iterator[Built]:
    """`once` (built once, e.g. per session) for one test: a copy of its database and its
    files in `folder`, the same tokens; its app's store disposed after."""
    with database_copy(folder, template_of(once.url)) as url:
        if (once.folder / "files").is_dir():
            shutil.copytree(once.folder / "files", folder / "files", dirs_exist_ok=True)
        built = Built(once.shape, url, folder, dict(once.tokens), once.campaign_id)
        try:
            yield built
        finally:
            _dispose_app(built)


def _dispose_app(built: Built) -> None:
    if built._app is not None:
        from workbench.web.db import get_store

        with built.app.app_context():
            get_store().dispose()
