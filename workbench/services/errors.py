"""The error every service raises for a refused request (bad input found after parsing)."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class ServiceError(ValueError):
    """A request the store refuses: unknown campaign, duplicate run tag, unknown topics...

    The message is meant for the user as it is (CLI stderr, a flash message, a 4xx body).
    Format errors in files are `workbench.trec.TrecFormatError`, not this.
    """


class NotFound(ServiceError):
    """The named campaign, topic, document, run, pool or user does not exist."""


class Conflict(ServiceError):
    """A request the current state of its object refuses (an archived campaign or pool): the
    same request may succeed once that state changes (HTTP 409)."""


def found(row: T | None, missing: str) -> T:
    """`row` itself, or NotFound(`missing`) when the lookup found nothing (row is None)."""
    if row is None:
        raise NotFound(missing)
    return row
