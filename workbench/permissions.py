"""Roles as permissions: what a user may do is a set of `Permission`s, granted per role in
one table (`ROLES`).

The web checks a permission, never a role: every view and API endpoint declares the one
permission it needs (`web.access.requires`), the templates ask `may(Permission.X)`, and the
OpenAPI description names the permission and the roles that hold it from the same
declaration. A new capability is one member here, the roles that get it in `ROLES`, and
`@requires(Permission.X)` on its views. A new role is one line in `ROLES` (the CLI's
choices, the users page, the checks and the last-admin rule follow).

Pure: no Flask, no SQL (the services' last-admin rule and the web both read it).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Permission(enum.Flag):
    """One capability; a role holds a combination (`Permission.JUDGE | ...`)."""

    JUDGE = enum.auto()
    """The judging pages and API, for the topics assigned to the user."""
    UNPACED = enum.auto()
    """Judgement submits not held to the per-user judging rate (JUDGE_SUBMITS_PER_SECOND)."""
    ADMINISTER = enum.auto()
    """The organiser's pages and API: campaigns, imports, pools, reports, users."""

    @property
    def label(self) -> str:
        """The name people read: 'judge', 'administer'."""
        return (self.name or "").lower()


NOTHING = Permission(0)


@dataclass(frozen=True)
class Role:
    """A role: its name, the permissions it grants, and a line of help for the users page."""

    name: str
    permissions: Permission
    help: str

    def may(self, permission: Permission) -> bool:
        """Whether the role holds `permission` (NOTHING is held by no role)."""
        return bool(permission) and permission in self.permissions


ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role("admin", Permission.ADMINISTER | Permission.JUDGE, "organiser: every page"),
        Role("assessor", Permission.JUDGE, "judges their assigned topics"),
        Role(
            "script",
            Permission.JUDGE | Permission.UNPACED,
            "a script's account (a machine judge posting through the API): judges its "
            "assigned topics, not held to the per-user judging rate",
        ),
    )
}
"""The one table of roles and what each may do."""


def role_may(role: str, permission: Permission) -> bool:
    """Whether users of the role named `role` hold `permission`; a role no longer in the
    table may nothing."""
    found = ROLES.get(role)
    return found is not None and found.may(permission)


def holders(permission: Permission) -> list[str]:
    """The names of the roles that hold `permission`, in the table's order."""
    return [name for name, role in ROLES.items() if role.may(permission)]
