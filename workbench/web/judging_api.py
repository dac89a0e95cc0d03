"""The judging pages' other JSON calls, on the API blueprint (/api/v1): undo, a screen of
passages, and pairwise preferences (read, record, undo).

Like every judging call they are session- or token-authenticated, CSRF-checked, rate-limited
per assessor and answer {"error": ...} with a 4xx (`web.errors`).
"""

from __future__ import annotations

import math
from typing import Any

from flask import jsonify, request
from flask_login import current_user

from workbench import judging_modes
from workbench.permissions import Permission
from workbench.services import judging, preferences, undo
from workbench.services.errors import ServiceError
from workbench.web.access import requires
from workbench.web.api import bp
from workbench.web.assess import own_assignment
from workbench.web.db import get_store
from workbench.web.inputs import form_int, parse_json
from workbench.web.security import rate_limited


def _client_id(data: Any) -> str | None:
    if not isinstance(data, dict):
        raise ServiceError("expected a JSON object")
    client_id = data.get("client_id")
    if client_id is not None and not isinstance(client_id, str):
        raise ServiceError("client_id has the wrong type")
    return client_id


@bp.post("/assignments/<int:assignment_id>/undo")
@requires(Permission.JUDGE)
@rate_limited("judge", unless=Permission.UNPACED)
def undo_judgement(assignment_id: int):
    """Take back the assessor's last judgement of the assignment (a new event of the log)."""
    client_id = _client_id(parse_json(request.get_data()))
    with get_store().session() as session:
        done = undo.undo_last_judgement(session, assignment_id, current_user.id, client_id)
    judgement = None if done.judgement is None else judging.judgement_summary(done.judgement)
    body = {"docno": done.docno, "position": done.position, "judgement": judgement}
    return jsonify(undone=body, created=done.created), 201 if done.created else 200


@bp.get("/assignments/<int:assignment_id>/documents")
@requires(Permission.JUDGE)
def documents(assignment_id: int):
    """The documents at ?start= (default 0) .. start + ?count= - 1 of the sequence, each with
    the assessor's judgement (the passages list's screen)."""
    start = form_int(request.args.get("start"), "start", minimum=0, default=0)
    count = form_int(
        request.args.get("count"),
        "count",
        minimum=1,
        maximum=judging_modes.MAX_PER_SCREEN,
        default=judging_modes.DEFAULT_PER_SCREEN,
    )
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        return jsonify(documents=judging.documents_at(session, assignment, start, count))


@bp.get("/assignments/<int:assignment_id>/pairs")
@requires(Permission.JUDGE)
def pairs(assignment_id: int):
    """The assignment's pairs as the assessor sees them, with their current choice."""
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        shown = preferences.pairwise_state(session, assignment)
    return jsonify(
        pairs=[
            {"position": p.position, "left": p.left, "right": p.right, "choice": p.choice}
            for p in shown
        ]
    )


@bp.get("/assignments/<int:assignment_id>/pairs/<int:position>")
@requires(Permission.JUDGE)
def pair(assignment_id: int, position: int):
    """The pair at a position: both documents and the assessor's current choice."""
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        return jsonify(preferences.pair_at(session, assignment, position))


def _preference_input(data: Any) -> preferences.PreferenceInput:
    client_id = _client_id(data)
    texts = {name: data.get(name) for name in ("left", "right", "choice")}
    for name, value in texts.items():
        if not isinstance(value, str) or not value:
            raise ServiceError(f"{name} (a string) is required")
    comment = data.get("comment", "")
    time_spent = data.get("time_spent_ms", 0)
    if not isinstance(comment, str):
        raise ServiceError("comment has the wrong type")
    if isinstance(time_spent, bool) or not isinstance(time_spent, int | float):
        raise ServiceError("time_spent_ms must be a number")
    if not math.isfinite(time_spent):
        raise ServiceError("time_spent_ms must be a finite number")
    return preferences.PreferenceInput(
        texts["left"], texts["right"], texts["choice"], comment, int(time_spent), client_id
    )


def _pair_json(row: preferences.PreferenceRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "first": row.first,
        "second": row.second,
        "shown_left": row.shown_left,
        "choice": row.choice(),
        "comment": row.comment,
    }


@bp.post("/assignments/<int:assignment_id>/preferences")
@requires(Permission.JUDGE)
@rate_limited("judge", unless=Permission.UNPACED)
def submit_preference(assignment_id: int):
    """Record (or revise) the preference for a pair. 201 when stored, 200 when the client_id
    was known."""
    data = _preference_input(parse_json(request.get_data()))
    with get_store().session() as session:
        row, created = preferences.record_preference(session, assignment_id, current_user.id, data)
    return jsonify(saved=True, created=created, preference=_pair_json(row)), (
        201 if created else 200
    )


@bp.post("/assignments/<int:assignment_id>/preferences/undo")
@requires(Permission.JUDGE)
@rate_limited("judge", unless=Permission.UNPACED)
def undo_preference(assignment_id: int):
    """Take back the assessor's last preference of the assignment (a new event)."""
    client_id = _client_id(parse_json(request.get_data()))
    with get_store().session() as session:
        shown, created = preferences.undo_last_preference(
            session, assignment_id, current_user.id, client_id
        )
    body = {"position": shown.position, "left": shown.left, "right": shown.right}
    return jsonify(undone={**body, "choice": shown.choice}, created=created), (
        201 if created else 200
    )
