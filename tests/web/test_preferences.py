"""Pairwise preference judging end to end without a browser: the campaign's mode set on the
web and by the CLI, the pairs an assessor sees, answers, revisions and undo through the API,
the majority over assessors, the trec_eval prefs file (checked against trec_eval itself when
$WORKBENCH_TREC_EVAL names it) and the runs evaluated on it (issue 25)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.cli import main
from workbench.metrics.prefs import TrecEvalFlags, evaluate_prefs
from workbench.services import campaigns, preferences, progress
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign
from workbench.trec import read_prefs, read_run

PAIRS = [("D1", "D2"), ("D1", "D8"), ("D2", "D8")]  # T1's 3 best-ranked: D1, D8 (1), D2 (2)


def url(world: World, path: str = "", owner: str = "alice") -> str:
    return f"/api/v1/assignments/{world.assignment[owner, 'T1']}{path}"


@pytest.fixture
def pairwise(app: Flask, as_user, world: World) -> World:
    """c1 judged by pairs of its 3 best-ranked documents per topic, set on the web."""
    response = as_user("admin").post(
        f"/admin/campaigns/{world.campaign_id}/judging",
        data={"mode": "pairwise", "pairwise-design": "top", "pairwise-top": "3"},
        follow_redirects=True,
    )
    assert "Judging: Pairwise preferences (pairs top, top documents per topic 3)." in response.text
    return world


def answer(client, world: World, owner: str, wanted: dict[tuple[str, str], str]) -> None:  # type: ignore[no-untyped-def]
    """Answer each pair {a, b}: wanted[(a, b)] is the preferred docno or '=' for equal."""
    for pair in client.get(url(world, "/pairs", owner)).json["pairs"]:
        key = tuple(sorted((pair["left"], pair["right"])))
        if key not in wanted:
            continue
        preferred = wanted[key]
        choice = "equal" if preferred == "=" else "left" if preferred == pair["left"] else "right"
        body = {"left": pair["left"], "right": pair["right"], "choice": choice}
        response = client.post(url(world, "/preferences", owner), json=body)
        assert response.status_code == 201, response.json


def test_pairs_answers_majority_and_prefs_file(app: Flask, as_user, pairwise: World) -> None:
    world = pairwise
    alice, bob, admin = as_user("alice"), as_user("bob"), as_user("admin")
    assert 'id="pairs-page"' in alice.get(f"/assess/{world.assignment['alice', 'T1']}").text
    shown = alice.get(url(world, "/pairs")).json["pairs"]
    assert sorted(tuple(sorted((p["left"], p["right"]))) for p in shown) == PAIRS
    assert [p["position"] for p in shown] == [0, 1, 2] and all(p["choice"] is None for p in shown)
    first = alice.get(url(world, "/pairs/0")).json
    assert first["left"]["docno"] == shown[0]["left"] and first["left"]["title"].startswith("Doc")
    for pair, preferred in [(("D1", "D2"), "D1"), (("D1", "D8"), "="), (("D2", "D8"), "D8")]:
        answer(alice, world, "alice", {pair: preferred})  # in this order
    answer(bob, world, "bob", {("D1", "D2"): "D1", ("D1", "D8"): "D8", ("D2", "D8"): "D2"})
    export = f"/api/v1/campaigns/{world.campaign_id}/export/prefs"
    assert admin.get(export).text == (  # D1 > D2 by 2 to 0; D8 > D1 by 1 to 0 (one equal)
        "T1 p1 1 D1 1\nT1 p1 1 D2 0\nT1 p2 1 D8 1\nT1 p2 1 D1 0\n"
    )
    assert admin.get(export + "?assessor=alice").text == (
        "T1 p1 1 D1 1\nT1 p1 1 D2 0\nT1 p2 1 D8 1\nT1 p2 1 D2 0\n"
    )
    # alice takes her last answer back (D8 over D2), then revises D1 vs D2
    undone = alice.post(url(world, "/preferences/undo"), json={"client_id": "z1"})
    assert undone.status_code == 201 and undone.json["undone"]["choice"] is None
    assert {undone.json["undone"]["left"], undone.json["undone"]["right"]} == {"D2", "D8"}
    answer(alice, world, "alice", {("D1", "D2"): "D2"})
    state = {
        tuple(sorted((p["left"], p["right"]))): p
        for p in alice.get(url(world, "/pairs")).json["pairs"]
    }
    d1_d2 = state["D1", "D2"]
    assert d1_d2["choice"] == ("left" if d1_d2["left"] == "D2" else "right")
    assert state["D2", "D8"]["choice"] is None and state["D1", "D8"]["choice"] == "equal"
    with get_store_of(app).read_session() as s:
        done = progress.campaign_progress(s, world.campaign_id)
        rows = preferences.current_preferences(s, world.campaign_id)
    by_user = {a["username"]: a["progress"] for a in done["assessors"]}
    assert (by_user["alice"].judged, by_user["alice"].total) == (2, 6)  # 3 pairs in T1 and T2
    assert (by_user["bob"].judged, by_user["bob"].total) == (3, 6)
    assert len(rows) == 5
    with get_store_of(app).read_session() as s:  # an assessor's own progress reads their own
        for name in ("alice", "bob"):
            mine = progress.user_progress(s, world.users[name])
            assert sum(p.judged for _, p in mine) == by_user[name].judged
            assert sum(p.total for _, p in mine) == by_user[name].total
    log = admin.get(f"/api/v1/campaigns/{world.campaign_id}/export/preferences").text.splitlines()
    assert log[0] == (
        "id,assessor,qid,first,second,shown_left,outcome,preferred,comment,created_at,"
        "time_spent_ms,"
        "position,revision,undoes"
    )
    assert len(log) == 1 + 8  # 6 answers, an undo, a revision
    assert [line.split(",")[6:8] for line in log[1:4]] == [
        ["first", "D1"],
        ["equal", ""],
        ["second", "D8"],
    ]
    assert log[-2].split(",")[6:8] == ["", ""]  # the undo: no preference


def test_refusals(app: Flask, as_user, pairwise: World) -> None:
    world = pairwise
    alice = as_user("alice")
    for body, status, error in [
        ({"left": "D1", "right": "D3", "choice": "left"}, 404, "are not a pair of this assignment"),
        ({"left": "D1", "right": "D2", "choice": "up"}, 400, "choice must be one of left, right"),
        ({"left": "D1", "right": "D2"}, 400, "choice (a string) is required"),
    ]:
        response = alice.post(url(world, "/preferences"), json=body)
        assert (response.status_code, error in response.json["error"]) == (status, True), (
            response.json
        )
    assert (
        as_user("bob")
        .post(url(world, "/preferences"), json={"left": "D1", "right": "D2", "choice": "left"})
        .status_code
        == 404
    )  # alice's assignment
    nothing = alice.post(url(world, "/preferences/undo"), json={})
    assert nothing.status_code == 400 and "nothing to undo" in nothing.json["error"]
    answer(alice, world, "alice", {("D1", "D2"): "D1"})
    with get_store_of(app).session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        with pytest.raises(ServiceError, match="has pairwise preferences already"):
            campaigns.set_judging(s, campaign, options={"top": 4})
        campaigns.set_judging(s, campaign, evidence=True)  # other settings may change
        assert campaign.judging_options == {"design": "top", "top": 3}


def test_cli_sets_the_mode_exports_and_evaluates(
    world_url, as_user, world: World, tmp_path: Path
) -> None:
    def cli(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", world_url[0], *args])

    refused = cli("judging", "set", "--campaign", "c1", "--mode", "passages", "--top", "3")
    assert (
        refused.exit_code == 1 and "judging mode 'passages' has no option 'top'" in refused.output
    )
    done = cli("judging", "set", "--campaign", "c1", "--mode", "pairwise", "--top", "3")
    assert done.exit_code == 0, done.output
    assert done.output == (
        "campaign 'c1': Pairwise preferences (pairs top, top documents per topic 3)\n"
    )
    assert cli("judging", "show", "--campaign", "c1").output == (
        "Pairwise preferences (pairs top, top documents per topic 3)\n"
    )
    empty = cli("export", "prefs", "--campaign", "c1", "-o", "-")
    assert empty.exit_code == 1 and "has no preference judgements yet" in empty.output
    answer(
        as_user("alice"),
        world,
        "alice",
        {("D1", "D2"): "D2", ("D1", "D8"): "D1", ("D2", "D8"): "D2"},
    )
    prefs = tmp_path / "c1.prefs"
    exported = cli("export", "prefs", "--campaign", "c1", "-o", str(prefs))
    assert exported.exit_code == 0, exported.output
    assert prefs.read_text() == (
        "T1 p1 1 D1 1\nT1 p1 1 D8 0\nT1 p2 1 D2 1\nT1 p2 1 D1 0\nT1 p3 1 D2 1\nT1 p3 1 D8 0\n"
    )
    qrels = tmp_path / "t1.qrels"
    qrels.write_text("T1 0 D1 1\nT1 0 D2 2\nT1 0 D8 0\n")
    evaluated = cli(
        "preferences", "evaluate", "--campaign", "c1", "--qrels", str(qrels), "--format", "csv"
    )
    assert evaluated.exit_code == 0, evaluated.output
    lines = evaluated.output.splitlines()
    assert lines[0] == "Run,prefs_simp (preferences),Rank,map (assessors),Rank,Topics (preferences)"
    # prefs_simp as trec_eval -R prefs computes it on the exported file, per run
    runs = {}
    for tag, docs in (("runA", range(1, 7)), ("runB", range(8, 2, -1))):
        path = tmp_path / f"{tag}.run"
        path.write_text(
            "".join(
                f"{q} Q0 D{d} {r} {10 - r} {tag}\n"
                for q in ("T1", "T2")
                for r, d in enumerate(docs, 1)
            )
        )
        out = evaluate_prefs(read_prefs(prefs), read_run(path), ["prefs_simp"], TrecEvalFlags())
        runs[tag] = next(v for m, q, v in out if q == "all")
        if os.environ.get("WORKBENCH_TREC_EVAL"):
            real = subprocess.run(
                [
                    os.environ["WORKBENCH_TREC_EVAL"],
                    "-R",
                    "prefs",
                    "-m",
                    "prefs_simp",
                    str(prefs),
                    str(path),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            assert float(real[2]) == pytest.approx(runs[tag], abs=5e-5)
    shown = {line.split(",")[0]: float(line.split(",")[1]) for line in lines[1:3]}
    assert shown == pytest.approx(runs, abs=5e-5)
    # by hand: runA ranks D1 > D2 and lacks D8: D1 > D8 and D2 > D8 hold, D2 > D1 does not;
    # runB retrieves D8 but neither D1 nor D2: none holds
    assert runs == {"runA": pytest.approx(2 / 3), "runB": 0.0}
