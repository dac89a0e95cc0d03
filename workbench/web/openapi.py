"""The OpenAPI 3.1 description of the JSON API, generated from the app's real routes.

Paths, methods and path parameters come from the URL map (every rule under /api/v1), who may
call each endpoint from the permission the endpoint declares (`web.access.declared_access`),
and its summary, query parameters, body and responses from OPERATIONS below: a route added
without an entry here fails `openapi_document` (and its test), so the description cannot
drift from the routes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from workbench import limits
from workbench.services import exports
from workbench.web.access import Access, declared_access

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


def _report_parameters() -> list[dict[str, Any]]:
    """The report's parameters (`reports.pipeline.REPORT_OPTIONS`, read when the document is
    built): lists repeat the parameter or separate values with spaces, flags take 1."""
    from workbench.reports.pipeline import REPORT_OPTIONS

    types = {"int": "integer", "float": "number"}
    described = []
    for option in REPORT_OPTIONS:
        help_ = option.help + (" (1 for yes)" if option.kind == "flag" else "")
        if option.choices:
            help_ += f" One of: {', '.join(option.choices)}."
        described.append(_query(option.name, help_, types.get(option.kind, "string")))
    return described


_QUERYLOG = [_query("name", "the query log's name")]
_INCOMPLETE = _query("allow_incomplete", "1: use final or assessor qrels that lack labels")
_CLICK_OPTIONS = [
    _query("strategy", "click preference strategy (skip-above, skip-next, last-click-skip-above)"),
    _query("min_support", "impressions a preference needs", "integer"),
    _query("threshold", "deviation threshold"),
]


@dataclass(frozen=True)
class Operation:
    """An endpoint's description: what it does, {status: what it answers}, its query
    parameters, its JSON ``body`` schema or ``multipart`` form fields, and whether it answers a
    ``file`` (text) rather than JSON. ``query`` may be a function giving the parameters when
    the document is built (from a registry). Who may call it is the endpoint's own declared
    access (`web.access`), read when the document is built."""

    summary: str
    responses: dict[str, str]
    query: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]] = field(default_factory=list)
    body: dict[str, Any] | None = None
    multipart: list[str] | None = None
    file: bool = False


_CLIENT_ID_BODY = {
    "type": "object",
    "properties": {"client_id": {"type": ["string", "null"], "description": "idempotency key"}},
}

OPERATIONS: dict[str, Operation] = {
    "api.openapi": Operation("This description (OpenAPI 3.1).", {"200": "the OpenAPI document"}),
    "api.me": Operation("The authenticated user: id, username, role.", {"200": "the user"}),
    "api.my_assignments": Operation(
        "The user's active assignments with their progress.",
        {"200": "{'assignments': [{id, campaign_id, qid, progress}]}"},
    ),
    "api.assignment_state": Operation(
        "One of the user's assignments: topic, scale, where to resume, and the "
        "user's judgement at every position (null where none).",
        {
            "200": "{id, qid, topic, grades, total, position, judgements: [null | {id, docno, "
            "grade, cannot_judge, comment, evidence}]} (without each judgement's created_at, "
            "which the document and judgement answers carry)",
            "404": "not the user's assignment",
        },
    ),
    "api.document": Operation(
        "The document at a position of the assignment's sequence, with the user's "
        "current judgement.",
        {
            "200": "{position, total, docno, title, text, missing, judgement}",
            "404": "no such position or assignment",
        },
    ),
    "api.next_document": Operation(
        "Where the user left off. `done` is true once every document of the "
        "assignment has the user's judgement (the queue is finished; the document given is "
        "then one to review); `judged` counts them.",
        {"200": "{done, judged, total, position, docno, title, text, missing, judgement}"},
    ),
    "api.submit": Operation(
        "Record or revise a judgement (append-only log). A retry with the same "
        "client_id is stored once.",
        {
            "201": "stored: {saved, created, judgement}",
            "200": "already stored under this client_id",
            "409": "the assignment's campaign or pool is archived: {'error': the reason}",
            "429": "too many submits",
        },
        body={
            "type": "object",
            "required": ["docno"],
            "properties": {
                "docno": {"type": "string", "minLength": 1, "maxLength": limits.DOCNO},
                "grade": {
                    "type": ["integer", "null"],
                    "minimum": -limits.INT32_MAX,
                    "maximum": limits.INT32_MAX,
                    "description": "a grade of the campaign's scale; null: cannot judge",
                },
                "cannot_judge": {
                    "type": ["string", "null"],
                    "maxLength": limits.CANNOT_JUDGE,
                    "description": "the reason",
                },
                "comment": {"type": "string", "maxLength": limits.COMMENT},
                "time_spent_ms": {"type": "number"},
                "client_id": {
                    "type": ["string", "null"],
                    "maxLength": limits.CLIENT_ID,
                    "description": "idempotency key",
                },
                "evidence": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "integer"}},
                    "description": "the passages that make the document relevant: [start, "
                    "end] character offsets in its text (campaigns that collect evidence)",
                },
            },
        },
    ),
    "api.undo_judgement": Operation(
        "Take back the user's last judgement of the assignment, as a new event that restores "
        "the document's state before it (repeated undos walk further back).",
        {
            "201": "{undone: {docno, position, judgement (null: no judgement now)}, created}",
            "200": "already done under this client_id",
            "400": "nothing to undo",
            "429": "too many submits (undos count towards the judging rate)",
        },
        body=_CLIENT_ID_BODY,
    ),
    "api.documents": Operation(
        "The documents at positions start .. start + count - 1 of the assignment's "
        "sequence, each with the user's judgement (a screen of passages).",
        {"200": "{'documents': [{position, total, docno, title, text, missing, judgement}]}"},
        query=[
            _query("start", "the first position (default 0)", "integer"),
            _query("count", "how many (1..50, default 10)", "integer"),
        ],
    ),
    "api.pairs": Operation(
        "The pairs of a pairwise assignment as the user sees them, with their choice.",
        {"200": "{'pairs': [{position, left, right, choice}]}"},
    ),
    "api.pair": Operation(
        "The pair at a position: both documents and the user's current choice.",
        {"200": "{position, total, left, right, choice}", "404": "no such position"},
    ),
    "api.submit_preference": Operation(
        "Record or revise a pairwise preference (append-only log). A retry with the same "
        "client_id is stored once.",
        {
            "201": "{saved, created, preference}",
            "200": "already stored under this client_id",
            "429": "too many submits",
        },
        body={
            "type": "object",
            "required": ["left", "right", "choice"],
            "properties": {
                "left": {"type": "string", "description": "the docno shown on the left"},
                "right": {"type": "string"},
                "choice": {"enum": ["left", "right", "equal"]},
                "comment": {"type": "string"},
                "time_spent_ms": {"type": "number"},
                "client_id": {"type": ["string", "null"], "description": "idempotency key"},
            },
        },
    ),
    "api.undo_preference": Operation(
        "Take back the user's last preference of the assignment (a new event).",
        {
            "201": "{undone: {position, left, right, choice}, created}",
            "400": "nothing to undo",
            "429": "too many submits (undos count towards the judging rate)",
        },
        body=_CLIENT_ID_BODY,
    ),
    "api.campaigns": Operation(
        "The campaigns (not archived): id, name, relevance level.",
        {"200": "{'campaigns': [...]}"},
    ),
    "api.campaign_progress": Operation(
        "Judging progress per topic and per assessor over the assignments of the pools in "
        "scope. {campaign_ref} is the campaign's name or id.",
        {"200": "{campaign, pools, scope, overall, topics, assessors}"},
        query=[
            _query(
                "pools",
                "pool numbers, e.g. 1,2 (default: the pools with assignments; "
                "archived pools never)",
            )
        ],
    ),
    "api.report_json": Operation(
        "The campaign's evaluation report as JSON, as /report.json (the same parameters).",
        {"200": "the report", "202": "{status, progress}: being computed, ask again"},
        query=_report_parameters,
    ),
    "api.report": Operation(
        "The campaign's evaluation report, every section (or ?sections=), as JSON (/report) "
        "or a file (/report.FORMAT: text, json, csv, md, latex, zip, trec): the same bytes as "
        "`workbench evaluate --format FORMAT` and the web page's download. A report job.",
        {"200": "the report", "202": "{status, progress}: being computed, ask again"},
        query=_report_parameters,
        file=True,
    ),
    "api.export": Operation(
        "Export as a file: kind is an export's name (services.exports.EXPORTS: pool, qrels, "
        "log, ...). {campaign_ref} is the campaign's name or id.",
        {"200": "the file (attachment)"},
        query=_export_parameters,
        file=True,
    ),
    # routing, gold and the assessor dashboard (web.routing_api)
    "routing_api.policies": Operation(
        "The assignment policies (workbench.routing.POLICIES) and their parameters.",
        {"200": "{'policies': [{name, help, parameters: [{name, type, help, default, ...}]}]}"},
    ),
    "routing_api.route_pool": Operation(
        "Route a pool by a policy, recorded with the pool; applying it again routes only "
        "what is missing.",
        {"201": "{pool, policy, described, assignments, documents, load, short, notes}"},
        body={
            "type": "object",
            "properties": {
                "policy": {"type": "string", "description": "topics, primary, overlap, adaptive"},
                "pool": {"type": "integer", "description": "the pool's number (default: latest)"},
                "parameters": {"type": "object", "description": "the policy's parameters"},
                "assessors": {"type": "array", "items": {"type": "string"}},
                "topics": {"type": "array", "items": {"type": "string"}},
                "order": {"type": "string"},
                "seed": {"type": "integer"},
            },
        },
    ),
    "routing_api.remainder_plan": Operation(
        "What reassigning an assessor's unjudged remainder would do (nothing changes).",
        {"200": "{assessor, moves, kept, withdrawn, documents, unplaced, description}"},
        query=[_query("assessor", "the assessor"), _query("to", "an assessor who may take")],
    ),
    "routing_api.reassign_remainder": Operation(
        'Reassign an assessor\'s unjudged remainder; refused without "confirm": true.',
        {"200": "the plan carried out"},
        body={
            "type": "object",
            "required": ["assessor", "confirm"],
            "properties": {
                "assessor": {"type": "string"},
                "to": {"type": "array", "items": {"type": "string"}},
                "confirm": {"type": "boolean"},
            },
        },
    ),
    "routing_api.dashboard": Operation(
        "The assessor dashboard: pace, grades, agreement, gold accuracy, drift, outliers.",
        {"200": "the dashboard (JSON), or its tables in another format"},
        query=[
            _query("period", "day or session"),
            _query("weights", "linear or quadratic"),
            _query("format", "json (default), csv, md, latex or text"),
        ],
    ),
    "routing_api.ask_for_work": Operation(
        "Take places that documents want (adaptive routing: a judge more where judges "
        "disagree); they join the user's topics.",
        {"200": "{'added': [{qid, docno}]}"},
        body={"type": "object", "properties": {"campaign": {"type": "integer"}}},
    ),
    "routing_api.my_progress": Operation(
        "The user's progress per campaign, and their gold accuracy where the campaign shows it.",
        {"200": "{'campaigns': [...]}"},
    ),
    "api.adaptive_status": Operation(
        "An adaptive pool's per-topic state (budget, revealed, judged, stopped).",
        {"200": "the status"},
    ),
    "api.adaptive_provenance": Operation(
        "The adaptive method and budgets of the campaign's adaptive pools: what its "
        "exported qrels and judgement log record in their `#` header lines (`strategy` is "
        "the method's old key, kept for existing clients).",
        {
            "200": "{campaign, adaptive_pools: [{pool, method, strategy, budget, raised, "
            "stopped, sample_share, description}]}"
        },
    ),
    "api.adaptive_budget": Operation(
        "Set an adaptive pool's budget (every topic, or one `topic`).",
        {"200": "{budget, topics}"},
        body={
            "type": "object",
            "required": ["budget"],
            "properties": {"budget": {"type": "integer"}, "topic": {"type": "string"}},
        },
    ),
    "api.adaptive_stop": Operation(
        "Stop (or, with {'stopped': false}, resume) revealing documents for one "
        "topic of an adaptive pool.",
        {"200": "{topic, stopped}"},
    ),
    "querylogs_api.api_logs": Operation(
        "The campaign's imported query logs.", {"200": "{'querylogs': [...]}"}
    ),
    "querylogs_api.api_import": Operation(
        "Import a query log (multipart: file `log`, optional `mapping`; up to the upload "
        "limit). The log is imported by a background task: 201 when it ended within the "
        "server's wait, else 202 with a Location to follow.",
        {
            "201": "the import summary",
            "202": "being imported: {status, progress, import}; follow the Location header",
        },
        multipart=["log", "mapping", "name", "format", "min_users"],
    ),
    "querylogs_api.api_import_state": Operation(
        "A query-log import started by POST .../querylogs.",
        {
            "200": "the import summary",
            "202": "still being imported: {status, progress, import}",
            "404": "no such import",
        },
    ),
    "querylogs_api.api_report": Operation(
        "A query log's summary.", {"200": "the summary"}, query=_QUERYLOG
    ),
    "querylogs_api.api_agreement": Operation(
        "Agreement of click preferences with the assessors' qrels.",
        {"200": "the agreement"},
        query=[
            *_QUERYLOG,
            _query("qrels", "final, an assessor or a qrels set"),
            *_CLICK_OPTIONS,
            _INCOMPLETE,
        ],
    ),
    "querylogs_api.api_evaluation": Operation(
        "Runs evaluated with click preferences and with the assessors' qrels.",
        {"200": "the evaluation"},
        query=[
            *_QUERYLOG,
            _query("qrels", "final, an assessor or a qrels set"),
            _query("measure", "the measure under the qrels"),
            *_CLICK_OPTIONS,
            _INCOMPLETE,
        ],
    ),
    "querylogs_api.api_prefs": Operation(
        "The click preferences as a file.",
        {"200": "the preferences"},
        query=[*_QUERYLOG, *_CLICK_OPTIONS],
        file=True,
    ),
}

_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")
# what a path parameter is, wherever it appears
PATH_PARAMETERS = {
    "campaign_ref": "the campaign's name or its id (a name is looked up first)",
    "pool_id": "the pool's number in the campaign (pool 1, 2, ...)",
    "job_id": "the import's number (`import` in the 202 answer that started it)",
}


def _operation(endpoint: str, arguments: list[tuple[str, str]], access: Access) -> dict[str, Any]:
    spec = OPERATIONS[endpoint]  # KeyError: a route without a description
    operation: dict[str, Any] = {
        "operationId": endpoint.replace(".", "_"),
        "summary": spec.summary,
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
        + (spec.query() if callable(spec.query) else spec.query),
        "responses": {
            status: {"description": text, "content": _FILE if spec.file else _JSON}
            for status, text in spec.responses.items()
        },
    }
    operation["description"] = f"Who may call: {access.describe()}"
    if not access.signed_in:
        operation["security"] = []
    else:
        if access.permission is not None:
            operation["x-permission"] = access.permission.label
        operation["responses"].update({"401": _ERROR, "403": _ERROR, "404": _ERROR, "400": _ERROR})
    if spec.body is not None or spec.multipart is not None:
        operation["responses"]["413"] = {
            **_ERROR,
            "description": "the body is larger than the limit (JSON 64 KB, uploads "
            "WORKBENCH_MAX_UPLOAD_MB): {'error': message}",
        }
    if spec.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": spec.body}},
        }
    if spec.multipart is not None:
        properties = {name: {"type": "string"} for name in spec.multipart}
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
            access = declared_access(app, rule.endpoint)
            paths.setdefault(path, {})[method.lower()] = _operation(
                rule.endpoint, arguments, access
            )
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
