"""Values as valid JSON holds them (pure): the one conversion of every JSON output (reports,
API bodies, dashboards); `workbench.json_input` is the reading side."""

from __future__ import annotations

import math
from dataclasses import asdict, is_dataclass
from typing import Any


def json_safe(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, NaN and infinities to None (valid JSON)."""
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return json_safe(value.item())
    return value
