"""Who may call each endpoint: one declaration per endpoint, one check (`may`).

Every endpoint declares its access once, by one of:
- `@requires(Permission.X)` on the view (a role without X gets a 403; anonymous users the login
  page, or a JSON 401 under /api/);
- a `GuardedBlueprint(..., permission=Permission.X)`, whose every view requires X;
- `@signed_in` for the user's own account (logout, password): any logged-in user, any role;
- `@public` for what anyone may call (the login page, the OpenAPI document); Flask's static
  files are public too (`BUILT_IN_PUBLIC`).
`declared_access(app, endpoint)` reads the declaration: the OpenAPI description says who may call
an endpoint from it, and a test requires one of every registered endpoint. `may(X)` is the check
for views and templates (a Jinja global, with `Permission`). The role -> permission table is
`workbench.permissions.ROLES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar

from flask import Blueprint, Flask, abort, render_template
from flask_login import current_user, login_required

from workbench import permissions
from workbench.permissions import Permission
from workbench.services.errors import NotFound

View = TypeVar("View", bound=Callable[..., Any])
_ACCESS = "workbench_access"
"""The attribute of a view function that holds its declared `Access`."""


@dataclass(frozen=True)
class Access:
    """What an endpoint asks of its caller: a login (`signed_in`), and a permission."""

    signed_in: bool
    permission: Permission | None = None

    def describe(self) -> str:
        """Who may call, in words (the OpenAPI description's)."""
        if not self.signed_in:
            return "Anyone (no login)."
        if self.permission is None:
            return "Any logged-in user."
        roles = ", ".join(permissions.holders(self.permission)) or "none"
        return f"Permission: {self.permission.label} (roles: {roles})."


PUBLIC = Access(signed_in=False)
SIGNED_IN = Access(signed_in=True)
BUILT_IN_PUBLIC = frozenset({"static"})
"""Endpoints that Flask registers itself, public by their nature."""


def may(permission: Permission) -> bool:
    """Whether the current user (if any) holds `permission` by their role."""
    return bool(current_user.is_authenticated) and permissions.role_may(
        current_user.role, permission
    )


def _single(permission: Permission) -> Permission:
    if permission not in list(Permission):
        raise ValueError(f"an endpoint requires one permission, not {permission!r}")
    return permission


def requires(permission: Permission) -> Callable[[View], View]:
    """The view needs a login and `permission` (else 403)."""
    access = Access(signed_in=True, permission=_single(permission))

    def decorator(view: View) -> View:
        @wraps(view)
        @login_required
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not may(permission):  # a role no longer in the table may nothing
                abort(403)
            return view(*args, **kwargs)

        setattr(wrapped, _ACCESS, access)
        return wrapped  # type: ignore[return-value]

    return decorator


def signed_in(view: View) -> View:
    """The view needs a login, of any role (the user's own account)."""
    wrapped = login_required(view)
    setattr(wrapped, _ACCESS, SIGNED_IN)
    return wrapped


def public(view: View) -> View:
    """Anyone may call the view."""
    setattr(view, _ACCESS, PUBLIC)
    return view


class GuardedBlueprint(Blueprint):
    """A blueprint whose every view requires one permission (a 403 without it, the login page
    for anonymous users); a missing campaign, run or user is shown as a 404 page."""

    def __init__(self, name: str, import_name: str, url_prefix: str, *, permission: Permission):
        super().__init__(name, import_name, url_prefix=url_prefix)
        self.access = Access(signed_in=True, permission=_single(permission))

        @self.before_request
        @requires(permission)
        def _guard() -> None:
            return None

        @self.errorhandler(NotFound)
        def _not_found(error: NotFound):
            return render_template("error.html", code=404, message=str(error)), 404


def declarations(app: Flask, endpoint: str) -> list[Access]:
    """Every access declared for `endpoint`: on its view, by its blueprint, or built in."""
    found = []
    if endpoint in BUILT_IN_PUBLIC:
        found.append(PUBLIC)
    own = getattr(app.view_functions.get(endpoint), _ACCESS, None)
    if own is not None:
        found.append(own)
    blueprint = app.blueprints.get(endpoint.rpartition(".")[0])
    if isinstance(blueprint, GuardedBlueprint):
        found.append(blueprint.access)
    return found


def declared_access(app: Flask, endpoint: str) -> Access:
    """The one access declared for `endpoint` (ValueError: none, or more than one)."""
    found = declarations(app, endpoint)
    if len(found) != 1:
        raise ValueError(f"endpoint {endpoint!r} declares its access {len(found)} times, not once")
    return found[0]


def init_app(app: Flask) -> None:
    """`may` and `Permission` in every template."""
    app.jinja_env.globals.update(may=may, Permission=Permission)
