"""Roles as permissions (issue 24 §4): every endpoint declares who may call it, once; the role
table grants what the role flags it replaced granted; the route matrix
(tests/hardening/test_security_matrix.py, real requests under every role) agrees with the
declarations; the OpenAPI description says who may call from the same declarations."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.hardening.test_security_matrix import MATRIX, ROLE_OF, ROLES
from workbench import permissions
from workbench.permissions import NOTHING, Permission, Role
from workbench.web.access import (
    PUBLIC,
    SIGNED_IN,
    GuardedBlueprint,
    declarations,
    declared_access,
    requires,
)
from workbench.web.openapi import openapi_document

PUBLIC_ENDPOINTS = {"static", "index", "auth.login", "api.openapi"}
"""What anyone may call: a new public endpoint is a choice made here, not an oversight."""
ACCOUNT_ENDPOINTS = {"auth.logout", "auth.change_password"}
"""The user's own account: any logged-in user, of any role."""


def _endpoints(app: Flask) -> set[str]:
    return {rule.endpoint for rule in app.url_map.iter_rules()}


def test_every_endpoint_declares_its_access_once(app: Flask) -> None:
    undeclared = {e: len(declarations(app, e)) for e in _endpoints(app)}
    assert {e: n for e, n in undeclared.items() if n != 1} == {}
    by_access: dict[str, set[str]] = {"public": set(), "signed in": set()}
    for endpoint in _endpoints(app):
        access = declared_access(app, endpoint)
        if access == PUBLIC:
            by_access["public"].add(endpoint)
        elif access == SIGNED_IN:
            by_access["signed in"].add(endpoint)
        else:
            assert access.signed_in and access.permission in list(Permission), endpoint
    assert by_access == {"public": PUBLIC_ENDPOINTS, "signed in": ACCOUNT_ENDPOINTS}


def test_an_undeclared_or_doubly_declared_endpoint_is_found(app: Flask) -> None:
    @app.get("/api/v1/bare")
    def bare() -> str:
        return ""

    guarded = GuardedBlueprint("extra", __name__, "/extra", permission=Permission.ADMINISTER)

    @guarded.get("/twice")
    @requires(Permission.JUDGE)
    def twice() -> str:
        return ""

    app.register_blueprint(guarded)
    assert declarations(app, "bare") == []
    with pytest.raises(ValueError, match="'bare' declares its access 0 times"):
        declared_access(app, "bare")
    with pytest.raises(ValueError, match="declares its access"):
        openapi_document(app)  # the description refuses an endpoint without a declaration
    assert len(declarations(app, "extra.twice")) == 2
    with pytest.raises(ValueError, match=r"'extra\.twice' declares its access 2 times"):
        declared_access(app, "extra.twice")
    with pytest.raises(ValueError, match="one permission"):
        requires(Permission.JUDGE | Permission.ADMINISTER)
    with pytest.raises(ValueError, match="one permission"):
        requires(NOTHING)


OLD_ROLE_FLAGS = {
    "admin": {"administers": True, "judges": True, "paced": True},
    "assessor": {"administers": False, "judges": True, "paced": True},
    "script": {"administers": False, "judges": True, "paced": False},
}
"""What each role could do before permissions (services.users.Role's flags): admin_required
checked `administers`, assessor_required `judges`, the judging rate `paced`."""


def test_the_role_table_grants_what_the_old_role_flags_granted() -> None:
    granted = {
        name: {
            "administers": role.may(Permission.ADMINISTER),
            "judges": role.may(Permission.JUDGE),
            "paced": not role.may(Permission.UNPACED),
        }
        for name, role in permissions.ROLES.items()
    }
    assert granted == OLD_ROLE_FLAGS
    assert permissions.holders(Permission.ADMINISTER) == ["admin"]
    assert not permissions.role_may("gone", Permission.JUDGE)  # a role not in the table


def test_the_route_matrix_has_a_column_for_every_role() -> None:
    assert set(ROLE_OF.values()) == set(permissions.ROLES)
    assert set(ROLE_OF) | {"anonymous"} == set(ROLES)


@pytest.mark.parametrize("column", ROLES)
def test_the_route_matrix_agrees_with_the_declarations(app: Flask, column: str) -> None:
    """Each row's status in `column` (asserted against real requests by
    test_route_under_each_role) is a refusal exactly where the declaration refuses the
    column's role: 403 for a role without the permission, the login page (302) or a JSON
    401 for anonymous callers of an endpoint that needs a login."""
    mismatches = []
    for endpoint, method, url, _body, expected in MATRIX:
        access = declared_access(app, endpoint)
        status = expected[column]
        if column == "anonymous":
            login = 401 if url.startswith("/api/") else 302
            agrees = status == login if access.signed_in else status != 403
        else:
            holds = access.permission is None or permissions.role_may(
                ROLE_OF[column], access.permission
            )
            agrees = (status == 403) == (not holds)
        if not agrees:
            mismatches.append((method, endpoint, status))
    assert mismatches == []


def _who(document: dict, path: str, method: str = "get") -> tuple[str, object]:
    operation = document["paths"][path][method]
    return operation["description"], operation.get("security")


def test_the_openapi_description_says_who_may_call_from_the_declarations(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = openapi_document(app)
    assert _who(document, "/api/v1/openapi.json") == ("Who may call: Anyone (no login).", [])
    assert _who(document, "/api/v1/me") == (
        "Who may call: Permission: judge (roles: admin, assessor, script).",
        None,
    )
    assert _who(document, "/api/v1/campaigns") == (
        "Who may call: Permission: administer (roles: admin).",
        None,
    )
    labels = {
        operation.get("x-permission")
        for methods in document["paths"].values()
        for operation in methods.values()
    }
    assert labels == {None, "judge", "administer"}
    # a role added to the table is named wherever its permissions are
    monkeypatch.setattr(
        permissions,
        "ROLES",
        {**permissions.ROLES, "chief": Role("chief", Permission.ADMINISTER, help="-")},
    )
    again = openapi_document(app)
    assert _who(again, "/api/v1/campaigns")[0].endswith("(roles: admin, chief).")
    assert _who(again, "/api/v1/me")[0].endswith("(roles: admin, assessor, script).")
