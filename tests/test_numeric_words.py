"""Numbers typed by users are ASCII digits: '²' and '٣' are digits to str.isdigit() but not
numbers a user means (int('²') raises), so each parser refuses them with its message
(schemathesis found GET /api/v1/campaigns/1/progress?pools=%C2%B2 answered with a 500)."""

from __future__ import annotations

import pytest

from workbench.documents import SizeLimits
from workbench.services.errors import ServiceError
from workbench.services.pools import qid_key
from workbench.services.scope import parse_pools


@pytest.mark.parametrize("word", ["²", "¹2", "①", "٣"])
def test_pool_numbers_are_ascii_digits(word: str) -> None:
    with pytest.raises(ServiceError, match="pools must be pool numbers"):
        parse_pools(word)


def test_pool_numbers_parse() -> None:
    assert parse_pools("3, 1 2,3") == (1, 2, 3)
    assert parse_pools(["2", "1"]) == (1, 2)
    assert parse_pools(" ") is None


def test_a_size_limit_is_ascii_digits() -> None:
    with pytest.raises(ValueError, match="must be a positive integer"):
        SizeLimits.from_env({"WORKBENCH_MAX_DOCUMENT_BYTES": "²"})
    assert SizeLimits.from_env({"WORKBENCH_MAX_DOCUMENT_BYTES": "12"}).document_bytes == 12


def test_topic_ids_that_look_like_digits_sort_as_text() -> None:
    assert sorted(["10", "²", "9", "a"], key=qid_key) == ["9", "10", "a", "²"]
