"""Request input read within bounds: integers from forms, JSON bodies of the API.

Everything here refuses bad input with a ServiceError (a 400 with the message) before it
reaches the store: an integer outside the store's column range, a JSON body nested deeper
than limits.JSON_DEPTH, NaN or infinities, integers of more than 18 digits, strings that are
not valid Unicode (lone surrogates) or that contain NUL.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, overload

from werkzeug.routing import IntegerConverter

from workbench import limits
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


class BoundedIntConverter(IntegerConverter):
    """`<int:...>` URL parts: ids of at most 10 digits up to the store's INTEGER range, so a
    larger id is a 404, not a database overflow."""

    regex = r"\d{1,10}"

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", limits.INT32_MAX)
        super().__init__(map, *args, **kwargs)


def _depth_within(text: str, limit: int) -> bool:
    """Whether arrays and objects nest at most `limit` deep (brackets inside strings do not
    count); one pass over the text."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
    return True


def _refuse_constant(name: str) -> Any:
    raise ServiceError(f"{name} is not a number JSON allows")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 18:
        raise ServiceError(f"an integer of {len(text)} digits is out of range")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ServiceError(f"the number {text[:40]} is out of range")
    return value


def _check_strings(value: Any) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise ServiceError("text cannot contain a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ServiceError("text is not valid Unicode (a lone surrogate)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def parse_json(data: bytes) -> Any:
    """A request body as JSON within the bounds above; ServiceError otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ServiceError("the body is not UTF-8 JSON") from None
    if not _depth_within(text, limits.JSON_DEPTH):
        raise ServiceError(f"JSON nested deeper than {limits.JSON_DEPTH} levels")
    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except ServiceError:
        raise
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        raise ServiceError(f"the body is not valid JSON: {error}") from None
    _check_strings(value)
    return value
