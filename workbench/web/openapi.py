"""The OpenAPI 3.1 description of the JSON API, generated from the app's real routes.

Paths, methods and path parameters come from the URL map (every rule under /api/v1), and each
endpoint's summary, role, query parameters, body and responses from OPERATIONS below: a route
added without an entry here fails `openapi_document` (and its test), so the description
cannot drift from the routes.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Flask

from workbench.services import exports

API_PREFIX = "/api/v1"

_ERROR = {
    "description": "refused: {'error': message}",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_JSON = {"application/json": {"schema": {"type": "object"}}}
_FILE = {"text/plain": {"schema": {"type": "string"}}}


def _query(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": {"type": type_},
    }


def _export_parameters() -> list[dict[str, Any]]:
    """The query parameters of the exports in services.exports.EXPORTS (read when the document
    is built), each described as `export: help` (flags: 1 for yes)."""
    described: dict[str, tuple[str, list[str]]] = {}
    for export in exports.EXPORTS.values():
        for option in export.options:
            type_ = "integer" if option.kind == "int" else "string"
            help_ = option.help + (" (1 for yes)" if option.kind == "flag" else "")
            described.setdefault(option.name, (type_, []))[1].append(f"{export.name}: {help_}")
    return [_query(name, "; ".join(helps), type_) for name, (type_, helps) in described.items()]


_QUERYLOG = [_query("name", "the query log's name")]
_CLICK_OPTIONS = [
    _query("strategy", "click preference strategy (skip-above, skip-next, last-click-skip-above)"),
    _query("min_support", "impressions a preference needs", "integer"),
    _query("threshold", "deviation threshold"),
]

# endpoint -> (role, summary, query parameters, request body, {status: description or schema})
OPERATIONS: dict[str, dict[str, Any]] = {
    "api.openapi": {
        "role": None,
        "summary": "This description (OpenAPI 3.1).",
        "responses": {"200": "the OpenAPI document"},
    },
    "api.me": {
        "role": "assessor",
        "summary": "The authenticated user: id, username, role.",
        "responses": {"200": "the user"},
    },
    "api.my_assignments": {
        "role": "assessor",
        "summary": "The user's active assignments with their progress.",
        "responses": {"200": "{'assignments': [{id, campaign_id, qid, progress}]}"},
    },
    "api.assignment_state": {
        "role": "assessor",
        "summary": "One of the user's assignments: topic, scale, where to resume, and the "
        "user's judgement at every position (null where none).",
        "responses": {"200": "the assignment", "404": "not the user's assignment"},
    },
    "api.document": {
        "role": "assessor",
        "summary": "The document at a position of the assignment's sequence, with the user's "
        "current judgement.",
        "responses": {
            "200": "{position, total, docno, title, text, missing, judgement}",
            "404": "no such position or assignment",
        },
    },
    "api.next_document": {
        "role": "assessor",
        "summary": "Where the user left off. `done` is true once every document of the "
        "assignment has the user's judgement (the queue is finished; the document given is "
        "then one to review); `judged` counts them.",
        "responses": {
            "200": "{done, judged, total, position, docno, title, text, missing, judgement}"
        },
    },
    "api.submit": {
        "role": "assessor",
        "summary": "Record or revise a judgement (append-only log). A retry with the same "
        "client_id is stored once.",
        "body": {
            "type": "object",
            "required": ["docno"],
            "properties": {
                "docno": {"type": "string"},
                "grade": {"type": ["integer", "null"], "description": "null: cannot judge"},
                "cannot_judge": {"type": ["string", "null"], "description": "the reason"},
                "comment": {"type": "string"},
                "time_spent_ms": {"type": "number"},
                "client_id": {"type": ["string", "null"], "description": "idempotency key"},
            },
        },
        "responses": {
            "201": "stored: {saved, created, judgement}",
            "200": "already stored under this client_id",
            "409": "the assignment's campaign or pool is archived: {'error': the reason}",
            "429": "too many submits",
        },
    },
    "api.campaigns": {
        "role": "admin",
        "summary": "The campaigns (not archived): id, name, relevance level.",
        "responses": {"200": "{'campaigns': [...]}"},
    },
    "api.campaign_progress": {
        "role": "admin",
        "summary": "Judging progress per topic and per assessor. {campaign_ref} is the "
        "campaign's name or id.",
        "responses": {"200": "{campaign, overall, topics, assessors}"},
    },
    "api.export": {
        "role": "admin",
        "summary": "Export as a file: kind is an export's name (services.exports.EXPORTS: "
        "pool, qrels, log, ...). {campaign_ref} is the campaign's name or id.",
        "query": _export_parameters,
        "file": True,
        "responses": {"200": "the file (attachment)"},
    },
    "api.adaptive_status": {
        "role": "admin",
        "summary": "An adaptive pool's per-topic state (budget, revealed, judged, stopped).",
        "responses": {"200": "the status"},
    },
    "api.adaptive_provenance": {
        "role": "admin",
        "summary": "The strategy and budgets of the campaign's adaptive pools: what its "
        "exported qrels and judgement log record in their `#` header lines.",
        "responses": {"200": "{campaign, adaptive_pools: [{pool, strategy, budget, raised, "
        "stopped, description}]}"},
    },
    "api.adaptive_budget": {
        "role": "admin",
        "summary": "Set an adaptive pool's budget (every topic, or one `topic`).",
        "body": {
            "type": "object",
            "required": ["budget"],
            "properties": {"budget": {"type": "integer"}, "topic": {"type": "string"}},
        },
        "responses": {"200": "{budget, topics}"},
    },
    "api.adaptive_stop": {
        "role": "admin",
        "summary": "Stop (or, with {'stopped': false}, resume) revealing documents for one "
        "topic of an adaptive pool.",
        "responses": {"200": "{topic, stopped}"},
    },
    "querylogs_api.api_logs": {
        "role": "admin",
        "summary": "The campaign's imported query logs.",
        "responses": {"200": "{'querylogs': [...]}"},
    },
    "querylogs_api.api_import": {
        "role": "admin",
        "summary": "Import a query log (multipart: file `log`, optional `mapping`).",
        "multipart": ["log", "mapping", "name", "format", "min_users"],
        "responses": {"201": "the import summary"},
    },
    "querylogs_api.api_report": {
        "role": "admin",
        "summary": "A query log's summary.",
        "query": _QUERYLOG,
        "responses": {"200": "the summary"},
    },
    "querylogs_api.api_agreement": {
        "role": "admin",
        "summary": "Agreement of click preferences with the assessors' qrels.",
        "query": [
            *_QUERYLOG,
            _query("qrels", "final, an assessor or a qrels set"),
            *_CLICK_OPTIONS,
        ],
        "responses": {"200": "the agreement"},
    },
    "querylogs_api.api_evaluation": {
        "role": "admin",
        "summary": "Runs evaluated with click preferences and with the assessors' qrels.",
        "query": [
            *_QUERYLOG,
            _query("qrels", "final, an assessor or a qrels set"),
            _query("measure", "the measure under the qrels"),
            *_CLICK_OPTIONS,
        ],
        "responses": {"200": "the evaluation"},
    },
    "querylogs_api.api_prefs": {
        "role": "admin",
        "summary": "The click preferences as a file.",
        "query": [*_QUERYLOG, *_CLICK_OPTIONS],
        "file": True,
        "responses": {"200": "the preferences"},
    },
}

_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")
# what a path parameter is, wherever it appears
PATH_PARAMETERS = {
    "campaign_ref": "the campaign's name or its id (a name is looked up first)",
    "pool_id": "the pool's number in the campaign (pool 1, 2, ...)",
}


def _parameters(query: Any) -> list[dict[str, Any]]:
    """An operation's query parameters: a list, or a function giving it when called."""
    return query() if callable(query) else list(query)


def _operation(endpoint: str, arguments: list[tuple[str, str]]) -> dict[str, Any]:
    spec = OPERATIONS[endpoint]  # KeyError: a route without a description
    operation: dict[str, Any] = {
        "operationId": endpoint.replace(".", "_"),
        "summary": spec["summary"],
        "parameters": [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "integer" if converter == "int" else "string"},
                **({"description": PATH_PARAMETERS[name]} if name in PATH_PARAMETERS else {}),
            }
            for converter, name in arguments
        ]
        + _parameters(spec.get("query", [])),
        "responses": {
            status: {"description": text, "content": _FILE if spec.get("file") else _JSON}
            for status, text in spec["responses"].items()
        },
    }
    if spec["role"] is None:
        operation["security"] = []
    else:
        operation["description"] = f"Role: {spec['role']} (an admin may do what an assessor may)."
        operation["responses"].update({"401": _ERROR, "403": _ERROR, "404": _ERROR, "400": _ERROR})
    if "body" in spec:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": spec["body"]}},
        }
    if "multipart" in spec:
        properties = {name: {"type": "string"} for name in spec["multipart"]}
        operation["requestBody"] = {
            "required": True,
            "content": {
                "multipart/form-data": {"schema": {"type": "object", "properties": properties}}
            },
        }
    return operation


def openapi_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of every route under /api/v1 (KeyError for an undescribed one)."""
    paths: dict[str, dict[str, Any]] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith(API_PREFIX + "/"):
            continue
        arguments = [(c or "", name) for c, name in _CONVERTER.findall(rule.rule)]
        path = _CONVERTER.sub(lambda m: "{" + m.group(2) + "}", rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            paths.setdefault(path, {})[method.lower()] = _operation(rule.endpoint, arguments)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Workbench JSON API",
            "version": "1",
            "description": "Judging (assessors) and campaign progress, exports, adaptive pools "
            "and query logs (admins). Scripts authenticate with `Authorization: Bearer "
            "<token>` (`workbench user token NAME`, or New token on the Users page); the "
            "judging page uses its session cookie and sends X-CSRFToken on POST. Errors are "
            "JSON {'error': message}.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}, {"session": []}],
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "session"},
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {"type": "string"}},
                }
            },
        },
        "paths": paths,
    }
