"""Roles come from one table (workbench.permissions.ROLES): a role added there is checked by
every page and counted by the last-admin rule, with no other change."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import FAST_HASH, PASSWORD, get_store_of, login
from workbench import permissions
from workbench.permissions import NOTHING, Permission, Role
from workbench.services import users as user_service
from workbench.services.errors import ServiceError


@pytest.fixture
def more_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    roles = {
        **permissions.ROLES,
        "observer": Role("observer", NOTHING, help="-"),
        "chief": Role("chief", Permission.ADMINISTER | Permission.JUDGE, help="-"),
    }
    monkeypatch.setattr(permissions, "ROLES", roles)


def _client_as(app: Flask, name: str, role: str):  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as session:
        user_service.create_user(session, name, PASSWORD, role=role, hash_method=FAST_HASH)
    client = app.test_client()
    assert login(client, name).status_code == 302
    return client


def test_a_new_role_gets_exactly_its_permissions(app: Flask, more_roles: None) -> None:
    observer = _client_as(app, "olga", "observer")
    assert observer.get("/admin/").status_code == 403
    assert observer.get("/assess/").status_code == 403
    chief = _client_as(app, "chen", "chief")
    assert chief.get("/admin/").status_code == 200
    assert chief.get("/assess/").status_code == 200


def test_the_last_admin_rule_counts_every_administering_role(app: Flask, more_roles: None) -> None:
    with get_store_of(app).session() as session:
        admin = user_service.get_user(session, "admin")
        with pytest.raises(ServiceError, match="last active admin"):
            user_service.set_role(session, admin, "observer")
        user_service.create_user(session, "chen", PASSWORD, role="chief", hash_method=FAST_HASH)
        user_service.set_role(session, admin, "observer")  # chen administers now
        assert admin.role == "observer"


def test_a_role_gone_from_the_registry_may_nothing(
    app: Flask, more_roles: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    observer = _client_as(app, "olga", "observer")
    monkeypatch.undo()  # "observer" leaves the registry; olga's stored role stays
    assert observer.get("/assess/").status_code == 403
    assert observer.get("/admin/").status_code == 403
