"""The one error every TREC-format reader raises, and the wording of its common cases."""

from __future__ import annotations

WITHOUT_NUL = "text without NUL characters"  # what a line holding a NUL should have been
UTF8 = "UTF-8 text"  # what a line holding bytes that are not UTF-8 should have been


SHOWN_BYTES = 120  # of a line that is not UTF-8, in an error message


class TrecFormatError(ValueError):
    """A malformed line (or file, ``line_number`` 0) in a TREC-format input."""

    def __init__(
        self, path: str, line_number: int, line: str, expected: str, *, shown: str | None = None
    ) -> None:
        self.path = path
        self.line_number = line_number
        self.line = line
        self.expected = expected
        super().__init__(f"{path}:{line_number}: expected {expected}; got {shown or repr(line)}")

    @classmethod
    def of_bytes(cls, path: str, line_number: int, raw: bytes, expected: str) -> TrecFormatError:
        """The error for a line read as bytes: shown as text when it is UTF-8, else as its
        bytes with the others escaped (b'\\x89PNG...'), never as replacement characters."""
        raw = raw.rstrip(b"\r")
        try:
            return cls(path, line_number, raw.decode("utf-8"), expected)
        except UnicodeDecodeError:
            cut = raw[:SHOWN_BYTES]
            shown = repr(cut) + ("..." if len(raw) > SHOWN_BYTES else "")
            return cls(
                path, line_number, raw.decode("utf-8", "backslashreplace"), expected, shown=shown
            )
