"""The OpenAPI description matches the app's real /api/v1 routes, both ways."""

from __future__ import annotations

import re

from flask import Flask

from workbench.web.openapi import OPERATIONS


def _routes(app: Flask) -> dict[tuple[str, str], str]:
    found = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                found[path, method.lower()] = rule.endpoint
    return found


def test_every_route_is_described_and_nothing_else(app: Flask, as_user) -> None:
    response = as_user(None).get("/api/v1/openapi.json")  # no login needed
    assert response.status_code == 200
    document = response.json
    assert document["openapi"] == "3.1.0"
    described = {
        (path, method): operation["operationId"]
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    routes = _routes(app)
    assert set(described) == set(routes)
    assert {endpoint.replace(".", "_") for endpoint in routes.values()} == {
        name.replace(".", "_") for name in OPERATIONS
    }  # no stale description either
    submit = document["paths"]["/api/v1/assignments/{assignment_id}/judgements"]["post"]
    assert submit["parameters"][0] == {
        "name": "assignment_id", "in": "path", "required": True, "schema": {"type": "integer"},
    }  # fmt: skip
    assert submit["requestBody"]["content"]["application/json"]["schema"]["required"] == ["docno"]
    nxt = document["paths"]["/api/v1/assignments/{assignment_id}/next"]["get"]
    assert "`done`" in nxt["summary"]
    export = document["paths"]["/api/v1/campaigns/{campaign_ref}/export/{kind}"]["get"]
    assert export["parameters"][0]["schema"] == {"type": "string"}  # a name or an id
    assert {p["name"] for p in export["parameters"]} >= {"pool", "binary_level", "format"}
