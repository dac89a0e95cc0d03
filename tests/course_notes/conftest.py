"""The judged fixture campaign of tests/analysis, for the course notes' service and CLI tests."""

from tests.analysis.conftest import evaluated, judged  # noqa: F401
