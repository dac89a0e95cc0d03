"""JSON text read within bounds: the one reader of every JSON input a user sends (API bodies,
efficiency sidecar files) (pure).

`loads` refuses, with a `JsonInputError` that says why, before or while parsing: arrays and
objects nested deeper than `limits.JSON_DEPTH` (counted in one pass over the text, so that the
parser's recursion never meets them), NaN and infinities, integers of more than 18 digits,
strings that are not valid Unicode (lone surrogates) or that contain NUL, and text that is not
JSON (with the line of the error).
"""

from __future__ import annotations

import json
import math
from typing import Any

from workbench import limits

MAX_INTEGER_DIGITS = 18


class JsonInputError(ValueError):
    """JSON input refused: the message says why; `line` is the line of a syntax error."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def depth_within(text: str, limit: int) -> bool:
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
    raise JsonInputError(f"expected a finite number; got {name}")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise JsonInputError(f"an integer of {len(text)} digits is out of range")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError(f"the number {text[:40]} is out of range")
    return value


def _check_strings(value: Any) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise JsonInputError("text cannot contain a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise JsonInputError("text is not valid Unicode (a lone surrogate)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def loads(text: str, *, depth: int = limits.JSON_DEPTH) -> Any:
    """The JSON value of `text` within the bounds above; JsonInputError otherwise."""
    if not depth_within(text, depth):
        raise JsonInputError(f"JSON nested deeper than {depth} levels")
    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except JsonInputError:
        raise
    except json.JSONDecodeError as error:
        raise JsonInputError(f"not valid JSON: {error}", error.lineno) from None
    except (ValueError, RecursionError) as error:  # int() of a huge number, a deep value
        raise JsonInputError(f"not valid JSON: {error}") from None
    _check_strings(value)
    return value
