"""Integers read from forms: bounds said in the message, the store's range always enforced."""

from __future__ import annotations

import pytest

from workbench import limits
from workbench.services.errors import ServiceError
from workbench.web.inputs import form_int


def test_an_empty_field_is_the_default_and_digits_are_read() -> None:
    assert form_int("  ", "k", default=5) == 5
    assert form_int(None, "k") is None
    assert form_int(" 12 ", "k", minimum=1) == 12


def test_a_lower_bound_alone_is_said_as_at_least() -> None:
    with pytest.raises(ServiceError, match=r"^k must be at least 1; got 0$"):
        form_int("0", "k", minimum=1)


def test_two_bounds_are_said_as_a_range() -> None:
    with pytest.raises(ServiceError, match=r"^limit must be between 1 and 200; got 201$"):
        form_int("201", "limit", minimum=1, maximum=200)
    with pytest.raises(ServiceError, match=rf"^k must be between 1 and {limits.INT32_MAX}; got"):
        form_int(str(limits.INT32_MAX + 1), "k", minimum=1)


@pytest.mark.parametrize("text", ["1.5", "²", "1e3", "9" * 19])
def test_anything_but_ascii_digits_is_refused(text: str) -> None:
    with pytest.raises(ServiceError, match="k must be an integer"):
        form_int(text, "k")
