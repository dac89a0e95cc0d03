"""Random requests never get a 5xx, and a refused one changes nothing (issue 11 §6).

Hypothesis posts random JSON to every route under /api/v1 (as the assessor who owns the
assignment, and as an admin) and random form values, sometimes with a random file, to every
form of the admin and report pages. Each answer must be below 500; the API answers errors as
JSON; and whenever the request was refused (a 4xx, or a redirect to a page that shows an error
message) the store's content is exactly what it was before.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from tests.hardening.conftest import KEPT_COMPUTATIONS, REQUEST_COUNTERS
from tests.property_examples import examples
from tests.web.conftest import World, client_factory, get_store_of
from workbench.store.models import Base

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)
FORM_FIELDS = [
    "action",
    "active",
    "assessor",
    "assessors",
    "budget",
    "chunk",
    "confirm",
    "contributes",
    "correction",
    "depth",
    "description",
    "docno",
    "fair",
    "format",
    "fusion",
    "gold_share",
    "grade",
    "group",
    "items",
    "judges_per_document",
    "judges_per_topic",
    "max_judges",
    "measures",
    "name",
    "only_pooled",
    "order",
    "password",
    "per_topic",
    "policy",
    "primary",
    "qid",
    "qids",
    "qrels",
    "reason",
    "relevance_level",
    "replace",
    "role",
    "rule",
    "runs",
    "scale",
    "secondary_share",
    "seed",
    "source",
    "strata",
    "strategy",
    "test",
    "tie",
    "user",
    "username",
]
NOT_FUZZED = {"auth.login", "auth.logout", "auth.change_password", "static"}
"""The login routes count failures in the store by design (and would log the fuzzer out)."""


def store_digest(app: Flask) -> str:
    """A digest of every row of every table but the request counters and kept computations."""
    digest = hashlib.sha256()
    with get_store_of(app).read_session() as session:
        for table in Base.metadata.sorted_tables:
            if table.name in REQUEST_COUNTERS | KEPT_COMPUTATIONS:
                continue
            order = list(table.primary_key.columns)
            for row in session.execute(select(table).order_by(*order)):
                digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


def routes(app: Flask, prefix: str, method: str) -> list[str]:
    return sorted(
        rule.rule
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith(prefix)
        and method in (rule.methods or ())
        and rule.endpoint not in NOT_FUZZED
    )


ids = st.one_of(
    st.sampled_from(["1", "2", "3", "4"]),
    st.integers(min_value=0, max_value=2**70).map(str),
)


def fill(rule: str, draw: Any, world: World) -> str:
    """The rule with each <converter:name> replaced by a world id or a random one."""

    def value(match: re.Match[str]) -> str:
        name = match.group(2)
        if name == "kind":
            return draw(st.sampled_from(["topics", "documents", "runs", "qrels", "pool", "x"]))
        if name == "fmt":
            return draw(st.sampled_from(["csv", "json", "md", "latex", "trec", "xml"]))
        if name == "assignment_id":
            return draw(st.one_of(st.just(str(world.assignment["alice", "T1"])), ids))
        return draw(ids)

    return re.sub(r"<(?:(\w+):)?(\w+)>", value, rule)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
judgement_like = st.fixed_dictionaries(
    {},
    optional={
        "docno": st.one_of(st.sampled_from(["D1", "D2", "D9", ""]), st.text(max_size=20)),
        "grade": st.one_of(st.none(), st.integers(-(2**70), 2**70), st.sampled_from([0, 1, 2])),
        "cannot_judge": st.one_of(st.none(), st.text(max_size=40)),
        "comment": st.text(max_size=40),
        "time_spent_ms": st.one_of(st.integers(-(2**70), 2**70), st.floats()),
        "client_id": st.one_of(st.none(), st.text(max_size=70)),
    },
)
form_text = st.one_of(
    st.text(max_size=30),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["", "0", "-1", "1", "²", "10", "alice", "T1", "D1", "runA", "1e999"]),
)


def refused(client: FlaskClient, response: Any) -> bool:
    """A 4xx, or a redirect to a page whose flash shows an error."""
    if 400 <= response.status_code < 500:
        return True
    if response.status_code in (302, 303) and response.location:
        followed = client.get(response.location)
        return 'class="flash error' in followed.text
    return False


@pytest.fixture
def admin(app: Flask, world: World) -> FlaskClient:
    return client_factory(app)("admin")


@pytest.fixture
def alice(app: Flask, world: World) -> FlaskClient:
    return client_factory(app)("alice")


@SETTINGS
@given(data=st.data())
def test_random_json_to_every_api_route(
    app: Flask, world: World, admin: FlaskClient, alice: FlaskClient, data: st.DataObject
) -> None:
    api_routes = sorted(
        {rule.rule for rule in app.url_map.iter_rules() if rule.rule.startswith("/api/")}
    )
    rule = data.draw(st.sampled_from(api_routes))
    url = fill(rule, data.draw, world)
    client = data.draw(st.sampled_from([alice, admin]))
    body = data.draw(st.one_of(judgement_like, json_values))
    raw = json.dumps(body).encode()
    if data.draw(st.booleans()):  # sometimes not JSON at all
        raw = data.draw(st.binary(max_size=40))
    before = store_digest(app)
    response = client.post(url, data=raw, content_type="application/json")
    assert response.status_code < 500, (url, raw, response.status_code)
    if response.status_code >= 400:
        assert response.is_json and response.json["error"], (url, response.text[:200])
        assert store_digest(app) == before, (url, raw)


@SETTINGS
@given(data=st.data())
def test_random_forms_to_every_admin_and_report_form(
    app: Flask, world: World, admin: FlaskClient, data: st.DataObject
) -> None:
    forms = routes(app, "/admin", "POST") + routes(app, "/reports", "POST")
    rule = data.draw(st.sampled_from(forms))
    url = fill(rule, data.draw, world)
    fields = data.draw(st.lists(st.sampled_from(FORM_FIELDS), max_size=8, unique=True))
    form: dict[str, Any] = {name: data.draw(form_text) for name in fields}
    if "upload" in rule and data.draw(st.booleans()):
        content = data.draw(st.binary(max_size=200))
        name = data.draw(st.sampled_from(["f.txt", "f.jsonl", "f.run", "f.gz", "x" * 300]))
        form["files"] = (io.BytesIO(content), name)
    before = store_digest(app)
    response = admin.post(url, data=form, content_type="multipart/form-data")
    assert response.status_code < 500, (url, form, response.status_code)
    if refused(admin, response):
        assert store_digest(app) == before, (url, form)
