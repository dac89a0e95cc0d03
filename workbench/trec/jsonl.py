"""JSONL lines read strictly: one object a line, typed fields, no NUL characters."""

from __future__ import annotations

import json
from typing import Any

from workbench.trec.errors import WITHOUT_NUL, TrecFormatError


def has_nul(value: object) -> bool:
    """Whether a decoded JSON value holds a NUL character in any string."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def json_object(line: str, path: str, number: int) -> dict[str, Any]:
    """One JSONL line as an object, or a TrecFormatError (bad JSON, nested too deep, NUL)."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise TrecFormatError(path, number, line, f"a JSON object ({error.msg})") from None
    except RecursionError:
        raise TrecFormatError(path, number, line, "a JSON object nested less deep") from None
    if not isinstance(obj, dict):
        raise TrecFormatError(path, number, line, "a JSON object")
    if ("\x00" in line or "\\u0000" in line) and has_nul(obj):  # a NUL, raw or escaped
        raise TrecFormatError(path, number, line, WITHOUT_NUL)
    return obj


def json_field(
    obj: dict[str, Any],
    keys: tuple[str, ...],
    path: str,
    number: int,
    line: str,
    *,
    ids: bool = False,
    required: str = "",
) -> str | None:
    """The first of ``keys`` present in a JSONL object, as a string; None when absent or null
    (an error saying ``required`` is expected, when given).  A value must be a string
    (``ids``: or an integer, not a boolean); anything else is an error naming the key and
    the type found.
    """
    key = value = None
    for key in keys:
        if key in obj:
            value = obj[key]
            break
    if type(value) is str:
        return value
    if value is None:
        if required:
            raise TrecFormatError(path, number, line, required)
        return None
    if isinstance(value, str) or (ids and isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    kind = "a string or an integer" if ids else "a string"
    expected = f"{kind} as {key!r} (not {_json_type(value)})"
    raise TrecFormatError(path, number, line, expected)


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "an array"}
    return names.get(type(value), "an object")
