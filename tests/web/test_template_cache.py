"""The compiled templates shared by the apps of one process (web.SharedTemplateCode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import Environment
from jinja2.bccache import Bucket

from tests.web.conftest import make_app
from workbench.web import TEMPLATE_CODE, SharedTemplateCode


def test_a_second_app_renders_without_compiling_the_templates_again(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = make_app(database_url, tmp_path / "first")
    with first.test_request_context():
        first.jinja_env.get_template("base.html")
    compiled: list[str | None] = []
    compile_source = Environment.compile

    def counted(self: Environment, source: str, name: str | None = None, *args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(name)
        return compile_source(self, source, name, *args, **kwargs)

    monkeypatch.setattr(Environment, "compile", counted)
    second = make_app(database_url, tmp_path / "second")
    assert second.jinja_env.bytecode_cache is TEMPLATE_CODE
    with second.test_request_context():
        template = second.jinja_env.get_template("base.html")
    assert compiled == [] and template is not None
    with second.test_request_context():
        second.jinja_env.from_string("{{ 1 + 1 }}")  # not a file: compiled, never cached
    assert compiled == [None]


def test_an_edited_template_is_compiled_anew() -> None:
    cache = SharedTemplateCode()
    environment = Environment(bytecode_cache=cache)
    stored = Bucket(environment, "key", "checksum of the old source")
    stored.code = compile("x = 1", "<template>", "exec")
    cache.dump_bytecode(stored)
    same = Bucket(environment, "key", "checksum of the old source")
    cache.load_bytecode(same)
    assert same.code is stored.code
    edited = Bucket(environment, "key", "checksum of the new source")
    cache.load_bytecode(edited)
    assert edited.code is None
