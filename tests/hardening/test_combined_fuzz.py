"""Random forms and JSON to the new features' routes in a campaign where they all have data
(a machine judge with labels and a finished job, an adaptive pool with a reserved sample, a
routed pool, gold documents, a practice set): the random-request tests of
test_fuzz_routes.py meet these routes only where they have nothing to work on, and leave out
the machine pages and the assessors' practice forms. No answer is a 5xx; a refused request
changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from tests.hardening.test_fuzz_routes import SETTINGS, form_text, json_values, refused, store_digest
from tests.web.conftest import World, client_factory


@pytest.fixture
def world_url(rich_world_url: tuple[str, World]) -> tuple[str, World]:
    """This module's tests run in a copy of the campaign using every feature (`rich`)."""
    return rich_world_url


MACHINE_FIELDS = [
    "template", "reset", "model", "name", "base_url", "api_key_env", "api_key", "temperature",
    "max_tokens", "judge", "pool", "topics", "only_unjudged", "concurrency", "budget_calls",
    "budget_tokens", "design", "share", "seed", "no_flagged", "on", "combination", "assessor",
    "allow_incomplete",
]  # fmt: skip
ADAPTIVE_FIELDS = ["budget", "qid", "resume", "method", "strategy", "depth", "batch",
                   "secondary_share", "sample_share", "stop_rule", "recall_target", "confidence",
                   "auto_stop", "runs", "seed"]  # fmt: skip
QUALITY_FIELDS = ["gold_share", "gold_in_qrels", "show_gold_accuracy", "source", "qrels",
                  "per_topic", "seed", "reason", "qid", "docno", "grade", "items", "assessor",
                  "to", "confirm", "topics"]  # fmt: skip


def _url(rule: str, draw: Any, world: World, rich: dict[str, int]) -> str:
    known = {"campaign_id": str(world.campaign_id), "pool_id": "2", "job_id": str(rich["job"]),
             "item_id": str(rich["item"]), "qid": "T1", "campaign_ref": "c1"}  # fmt: skip
    text = rule
    for name, value in known.items():
        for converter in ("", "int:"):
            text = text.replace(f"<{converter}{name}>", draw(st.sampled_from([value, "999"])))
    return text


def _rules(app: Flask, endpoints: tuple[str, ...]) -> list[str]:
    return sorted(
        rule.rule
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith(endpoints) and "POST" in (rule.methods or ())
    )


@SETTINGS
@given(data=st.data())
def test_random_forms_to_the_new_pages_in_a_campaign_using_every_feature(
    app: Flask, world: World, rich: dict[str, int], data: st.DataObject
) -> None:
    launched: list[int] = []
    app.config["MACHINE_JOB_RUNNER"] = lambda store, job_id: launched.append(job_id)
    rules = _rules(app, ("machine.", "adaptive.", "quality.", "practice."))
    rule = data.draw(st.sampled_from(rules))
    url = _url(rule, data.draw, world, rich)
    fields = data.draw(st.lists(st.sampled_from(MACHINE_FIELDS + ADAPTIVE_FIELDS + QUALITY_FIELDS),
                                max_size=8, unique=True))  # fmt: skip
    special = st.sampled_from(
        [
            "machine:m",
            "nan",
            "inf",
            "-inf",
            "1e308",
            "0.5",
            "uniform",
            "verify",
            "hybrid",
            "machine",
            "grade",
            "T1 T2",
            "carol",
            "2",
        ]
    )
    form = {name: data.draw(st.one_of(form_text, special)) for name in fields}
    client: FlaskClient = client_factory(app)("carol" if rule.startswith("/assess") else "admin")
    before = store_digest(app)
    response = client.post(url, data=form)
    assert response.status_code < 500, (url, form, response.status_code)
    if refused(client, response):
        assert store_digest(app) == before, (url, form)
        assert launched == []


@SETTINGS
@given(data=st.data())
def test_random_json_to_the_new_api_routes_in_a_campaign_using_every_feature(
    app: Flask, world: World, rich: dict[str, int], data: st.DataObject
) -> None:
    rules = _rules(app, ("routing_api.", "adaptive."))
    rule = data.draw(st.sampled_from([r for r in rules if r.startswith("/api/")]))
    url = _url(rule, data.draw, world, rich)
    keys = st.sampled_from(["policy", "pool", "assessors", "topics", "seed", "parameters",
                            "secondary_share", "judges_per_document", "chunk", "distance",
                            "max_judges", "assessor", "to", "confirm", "budget", "topic",
                            "stopped", "campaign"])  # fmt: skip
    body = data.draw(st.one_of(st.dictionaries(keys, json_values, max_size=5), json_values))
    client = client_factory(app)(data.draw(st.sampled_from(["admin", "carol"])))
    before = store_digest(app)
    response = client.post(url, data=json.dumps(body), content_type="application/json")
    assert response.status_code < 500, (url, body, response.status_code)
    if response.status_code >= 400:
        assert response.is_json and response.json["error"], (url, response.text[:200])
        assert store_digest(app) == before, (url, body)
