"""tests/slow_tests.txt names tests that exist: a renamed test would silently come back into
the fast loop, and a list that names nothing is no list (scripts/slow_tests.py rewrites it)."""

from __future__ import annotations

import re

from tests.conftest import REPO, listed_slow


def test_every_listed_slow_test_is_a_test_function_of_its_file() -> None:
    listed = listed_slow()
    assert listed, "tests/slow_tests.txt lists no test"
    for node in listed:
        path, _, name = node.partition("::")
        function = re.sub(r"\[.*\]$", "", name.rpartition("::")[2])
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^\s*(async )?def {re.escape(function)}\(", source, re.M), node
