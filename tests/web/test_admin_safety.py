"""Admin actions that cannot hurt: the last active admin stays, reassign needs a choice,
script accounts without a password, `user activate/deactivate`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import PASSWORD, World, get_store_of, login
from workbench.cli import main
from workbench.services import users as user_service
from workbench.services.errors import ServiceError
from workbench.store import open_store
from workbench.store.models import Assignment, User


def test_service_refuses_to_remove_the_last_active_admin(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        admin = user_service.get_user(s, "admin")
        with pytest.raises(ServiceError, match="last active admin"):
            user_service.set_role(s, admin, "assessor")
        with pytest.raises(ServiceError, match="last active admin"):
            user_service.set_active(s, admin, False)
        assert admin.role == "admin" and admin.active
        # with a second active admin, the first can go; then the second is the last one
        carol = user_service.get_user(s, "carol")
        user_service.set_role(s, carol, "admin")
        user_service.set_role(s, admin, "assessor")
        assert admin.role == "assessor"
        with pytest.raises(ServiceError, match="'carol' is the last active admin"):
            user_service.set_active(s, carol, False)
        # an inactive admin does not count as one who keeps the pages reachable
        user_service.set_role(s, admin, "admin")
        user_service.set_active(s, admin, False)
        with pytest.raises(ServiceError, match="last active admin"):
            user_service.set_role(s, carol, "assessor")
        user_service.set_role(s, admin, "assessor")  # an inactive admin may be demoted
        assert admin.role == "assessor"


def test_web_refuses_to_demote_or_deactivate_the_only_admin(
    app: Flask, as_user, world: World
) -> None:
    admin = as_user("admin")
    me = world.users["admin"]
    page = admin.post(
        f"/admin/users/{me}", data={"action": "role", "role": "assessor"}, follow_redirects=True
    )
    assert "&#39;admin&#39; is the last active admin" in page.text
    page = admin.post(
        f"/admin/users/{me}", data={"action": "active", "active": "0"}, follow_redirects=True
    )
    assert "last active admin" in page.text
    assert admin.get("/admin/users").status_code == 200  # still an admin
    with get_store_of(app).session() as s:
        row = s.get(User, me)
        assert row.role == "admin" and row.active


def test_reassign_without_a_choice_is_refused(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    assignment = world.assignment["alice", "T1"]
    url = f"/admin/campaigns/{world.campaign_id}/assignments/{assignment}/reassign"
    page = admin.post(url, data={"user": ""}, follow_redirects=True)
    assert "choose the assessor to give the topic to" in page.text
    with get_store_of(app).session() as s:
        assert s.get(Assignment, assignment).active  # nothing moved
    listing = admin.get(f"/admin/campaigns/{world.campaign_id}/assignments").text
    # the reassign select starts on an empty, required choice, and the forms ask first
    assert '<select name="user" required aria-label="New assessor"><option value="" selected>' in (
        listing
    )
    assert 'data-confirm="Withdraw topic T1 from alice?' in listing
    assert "admin.js" in listing


@pytest.fixture
def run(world_url, world: World):  # type: ignore[no-untyped-def]
    url = world_url[0]

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", url, *args], input=input)

    return invoke


def test_cli_activate_deactivate_and_the_last_admin(run, world_url, app: Flask) -> None:
    result = run("user", "deactivate", "alice")
    assert result.exit_code == 0 and "alice is deactivated" in result.output
    assert login(app.test_client(), "alice").status_code == 401
    result = run("user", "activate", "alice")
    assert result.exit_code == 0 and "alice is active" in result.output
    assert login(app.test_client(), "alice").status_code == 302
    refused = run("user", "deactivate", "admin")
    assert refused.exit_code == 1 and "last active admin" in refused.output
    demoted = run("user", "role", "admin", "assessor")
    assert demoted.exit_code == 1 and "last active admin" in demoted.output
    assert run("user", "deactivate", "nobody").exit_code == 1


def test_cli_script_account_with_a_token_and_no_password(run, world_url) -> None:
    result = run("user", "add", "robot", "--token")
    assert result.exit_code == 0, result.output
    token = result.output.split("API token (shown once): ")[1].strip()
    store = open_store(world_url[0])
    with store.session() as s:
        robot = s.scalar(select(User).where(User.username == "robot"))
        assert user_service.user_by_token(s, token).id == robot.id
        assert user_service.authenticate(s, "robot", PASSWORD) is None
        assert user_service.authenticate(s, "robot", "") is None
    store.dispose()


def test_manual_assignment_needs_an_explicit_assessor(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    url = f"/admin/campaigns/{world.campaign_id}/assignments"
    page = admin.post(url, data={"user": "", "qids": ["T1"]}, follow_redirects=True).text
    assert "choose an assessor and at least one topic" in page
    listing = admin.get(url).text.split('id="manual-assign"')[1]
    assert '<select name="user" required><option value="" selected>' in listing
