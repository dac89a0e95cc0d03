"""The stub chat-completions server's own behaviour (workbench.llm_test_server)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

from workbench import llm_test_server


def test_a_client_that_hung_up_is_not_reported_but_a_bug_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A judge that timed out leaves the stub writing to a closed socket: socketserver printed
    that BrokenPipeError's traceback into CI's log. Other errors are still printed."""
    server = llm_test_server._Server(("127.0.0.1", 0), BaseHTTPRequestHandler)
    try:
        for error in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
            try:
                raise error
            except OSError:
                server.handle_error(None, ("127.0.0.1", 1))
        try:
            raise ValueError("a bug in the stub")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    printed = capsys.readouterr().err
    assert "BrokenPipeError" not in printed and "ConnectionResetError" not in printed
    assert "ValueError: a bug in the stub" in printed
