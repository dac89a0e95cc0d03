"""The one error every TREC-format reader raises, and the wording of its common cases."""

from __future__ import annotations

WITHOUT_NUL = "text without NUL characters"  # what a line holding a NUL should have been
UTF8 = "UTF-8 text"  # what a line holding bytes that are not UTF-8 should have been


class TrecFormatError(ValueError):
    """A malformed line (or file, ``line_number`` 0) in a TREC-format input."""

    def __init__(self, path: str, line_number: int, line: str, expected: str) -> None:
        self.path = path
        self.line_number = line_number
        self.line = line
        self.expected = expected
        super().__init__(f"{path}:{line_number}: expected {expected}; got {line!r}")
