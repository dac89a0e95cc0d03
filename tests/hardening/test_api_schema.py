"""The JSON API fuzzed from its own description (schemathesis against /api/v1/openapi.json):
for every operation and generated input, no 5xx, and every response conforms to the
description (status codes, content types, bodies, headers).

Requests are made as the admin and as an assessor (Bearer tokens), on the world's campaign.
Not checked: that every input the description allows is accepted (schemathesis's
positive_data_acceptance): a judgement of a document not in the assignment, a budget below
what is revealed, are 400s the description cannot express.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.web.conftest import World, get_store_of
from workbench.services import users as user_service

pytestmark = pytest.mark.slow  # .ci/run runs it in both passes (SQLite and PostgreSQL)
MAX_EXAMPLES = int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "30"))
"""Inputs per operation; more with $WORKBENCH_FUZZ_EXAMPLES. About 75 s of CPU in all (30 s of
it the app's requests, 25 s Hypothesis's generation); 190-220 s in each of CI's passes, which
share the two cores."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def api_app(app: Flask, world: World) -> Iterator[Flask]:
    yield app


@pytest.fixture
def tokens(api_app: Flask) -> list[str]:
    """Bearer tokens of the admin and of an assessor."""
    with get_store_of(api_app).session() as session:
        return [
            user_service.new_api_token(session, user_service.get_user(session, name))
            for name in ("admin", "alice")
        ]


@pytest.fixture
def api_schema(api_app: Flask) -> schemathesis.BaseSchema:
    """The app's own description, generating inputs that keep to it and inputs that do not
    (which must be refused with a 4xx, never a 5xx)."""
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", api_app)
    schema.config.generation.update(modes=list(GenerationMode))
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.long
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_api_keeps_to_its_description(case, tokens: list[str]) -> None:  # type: ignore[no-untyped-def]
    for token in tokens:
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)


def test_a_body_over_the_limit_is_a_described_413(api_app: Flask, world: World, tokens) -> None:  # type: ignore[no-untyped-def]
    """Found by the fuzzing above (300 inputs per operation): a judgement with a comment of
    10,000 characters that JSON escapes to 72 KB was answered 413, which the description did
    not list. Every operation that takes a body now does."""
    client = api_app.test_client()
    path = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    body = {"docno": "D1", "grade": None, "comment": "\u00da" * 10_000}
    body["cannot_judge"] = "\u00da" * 1000
    data = json.dumps(body)  # each character escaped to 6 bytes: 66 KB, within every field limit
    assert len(data) > 64 * 1024
    headers = {"Authorization": f"Bearer {tokens[1]}", "Content-Type": "application/json"}
    answer = client.post(path, data=data, headers=headers)
    assert answer.status_code == 413 and "error" in answer.json
    described = client.get("/api/v1/openapi.json").json["paths"]
    operation = described["/api/v1/assignments/{assignment_id}/judgements"]["post"]
    assert "413" in operation["responses"]
