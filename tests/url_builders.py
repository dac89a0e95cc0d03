"""One compiled URL builder and one parse per rule shape for the whole test process.

Every Flask app compiles two URL-building functions for each of its ~580 rules (werkzeug's
`Rule._compile_builder`: an AST made and compiled per rule), about 0.1 s of CPU an app, and
the suite makes an app per test (each test has its own store): a tenth of the web tests' time.
A builder is a pure function of the rule's parsed parts, its defaults and `append_unknown`
(the rule itself is its first argument when it is called), so the one compiled for the same
inputs by an earlier app is the same code. Rules with a default for one of their variables
(converted at compile time by the rule's converter) are compiled each time.

Each app also parsed each rule again (`Rule._parse_rule`: its parts' regular expressions and
weights, its variables' converters), half of what was left of making an app: the parse is a
function of the rule's text and the map's converter classes, so it is kept per process too
(its parts, trace and converters: the converters, werkzeug's and the app's bounded integer,
keep no state beyond their settings).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing.rules import Rule, RulePart

_built: dict[tuple[Any, ...], Callable[..., tuple[str, str]]] = {}
_parsed: dict[tuple[Any, ...], tuple[tuple[RulePart, ...], tuple[Any, ...], dict[str, Any]]] = {}


ORIGINAL = Rule.__dict__.get("_compile_builder")
ORIGINAL_PARSE = Rule.__dict__.get("_parse_rule")


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
    share_parsed_rules()


def share_parsed_rules() -> None:
    """Have werkzeug's Rule reuse the parse of the same rule text with the same converter
    classes (idempotent)."""
    parse = ORIGINAL_PARSE
    if parse is None or getattr(Rule._parse_rule, "shared", False):
        return

    def shared(self: Rule, rule: str) -> list[RulePart]:
        assert self.map is not None
        key = (rule, tuple(sorted(self.map.converters.items())))
        found = _parsed.get(key)
        if found is None:
            start, before = len(self._trace), set(self._converters)
            parts = list(parse(self, rule))
            added = {name: c for name, c in self._converters.items() if name not in before}
            _parsed[key] = (tuple(parts), tuple(self._trace[start:]), added)
            return parts
        kept_parts, trace, converters = found
        self._trace.extend(trace)
        self._converters.update(converters)
        self.arguments.update(converters)
        return list(kept_parts)

    shared.shared = True  # type: ignore[attr-defined]
    Rule._parse_rule = shared  # type: ignore[method-assign]
