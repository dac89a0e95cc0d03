"""Request input read within bounds: integers from forms, JSON bodies of the API.

Everything here refuses bad input with a ServiceError (a 400 with the message) before it
reaches the store: an integer outside the store's column range; a JSON body that
`json_input.loads` refuses (nested deeper than limits.JSON_DEPTH, NaN or infinities,
integers of more than 18 digits, strings that are not valid Unicode or that contain NUL).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, overload

from werkzeug.routing import IntegerConverter

from workbench import json_input, limits
from workbench.services.errors import ServiceError

_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
"""ASCII digits only (str.isdigit accepts '²', which int() refuses)."""


@overload
def form_int(
    text: str | None, name: str, *, minimum: int = ..., maximum: int = ..., default: int
) -> int: ...


@overload
def form_int(
    text: str | None, name: str, *, minimum: int = ..., maximum: int = ..., default: None = ...
) -> int | None: ...


def form_int(
    text: str | None,
    name: str,
    *,
    minimum: int = -limits.INT32_MAX,
    maximum: int = limits.INT32_MAX,
    default: int | None = None,
) -> int | None:
    """The integer in a form field (`default` when empty), within [minimum, maximum]."""
    text = (text or "").strip()
    if not text:
        return default
    if not _INTEGER.fullmatch(text):
        raise ServiceError(f"{name} must be an integer; got {text[:40]!r}")
    value = int(text)
    if value < minimum and maximum == limits.INT32_MAX:  # only the store's range above
        raise ServiceError(f"{name} must be at least {minimum}; got {value}")
    if not minimum <= value <= maximum:
        raise ServiceError(f"{name} must be between {minimum} and {maximum}; got {value}")
    return value


def json_int(data: Mapping[str, Any], key: str) -> int | None:
    """The integer under `key` of a JSON object (None when absent) within the store's INTEGER
    range: a larger one would overflow PostgreSQL's column (a 500 instead of a 400)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ServiceError(f"{key} must be an integer")
    if abs(value) > limits.INT32_MAX:
        raise ServiceError(f"{key} must be between {-limits.INT32_MAX} and {limits.INT32_MAX}")
    return value


class BoundedIntConverter(IntegerConverter):
    """`<int:...>` URL parts: ids of at most 10 digits up to the store's INTEGER range, so a
    larger id is a 404, not a database overflow."""

    regex = r"\d{1,10}"

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", limits.INT32_MAX)
        super().__init__(map, *args, **kwargs)


def parse_json(data: bytes) -> Any:
    """A request body as JSON within the bounds of `json_input.loads`; ServiceError
    otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ServiceError("the body is not UTF-8 JSON") from None
    try:
        return json_input.loads(text)
    except json_input.JsonInputError as error:
        raise ServiceError(f"the body is refused: {error}") from None
