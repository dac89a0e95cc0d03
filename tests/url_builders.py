"""One compiled URL builder per rule shape for the whole test process.

Every Flask app compiles two URL-building functions for each of its ~580 rules (werkzeug's
`Rule._compile_builder`: an AST made and compiled per rule), about 0.1 s of CPU an app, and
the suite makes an app per test (each test has its own store): a tenth of the web tests' time.
A builder is a pure function of the rule's parsed parts, its defaults and `append_unknown`
(the rule itself is its first argument when it is called), so the one compiled for the same
inputs by an earlier app is the same code. Rules with a default for one of their variables
(converted at compile time by the rule's converter) are compiled each time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing.rules import Rule

_built: dict[tuple[Any, ...], Callable[..., tuple[str, str]]] = {}


ORIGINAL = Rule.__dict__.get("_compile_builder")


def share_url_builders() -> None:
    """Have werkzeug's Rule reuse builders compiled for the same rule shape (idempotent)."""
    compile_builder = ORIGINAL
    if compile_builder is None or getattr(Rule._compile_builder, "shared", False):
        return  # another werkzeug (left as it is), or done

    def shared(self: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        defaults = self.defaults or {}
        trace = tuple(getattr(self, "_trace", ()))
        if defaults and any(dynamic and part in defaults for dynamic, part in trace):
            return compile_builder(self, append_unknown)  # type: ignore[no-any-return]
        key = (append_unknown, trace, tuple(defaults), self.rule)  # defaults in order: arguments
        builder = _built.get(key)
        if builder is None:
            builder = _built[key] = compile_builder(self, append_unknown)
        return builder

    shared.shared = True  # type: ignore[attr-defined]
    Rule._compile_builder = shared  # type: ignore[method-assign]
