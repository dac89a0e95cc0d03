"""The URL builders shared by the test process's apps (tests/url_builders.py) are the ones
werkzeug compiles for each rule of a new app: same arguments, same code, same URLs."""

from __future__ import annotations

from pathlib import Path

from flask import url_for

from tests.url_builders import ORIGINAL
from tests.web.conftest import make_app


def test_every_rule_of_a_second_app_builds_with_werkzeugs_own_code(
    database_url: str, tmp_path: Path
) -> None:
    assert ORIGINAL is not None
    make_app(database_url, tmp_path / "first")
    app = make_app(database_url, tmp_path / "second")
    rules = list(app.url_map.iter_rules())
    assert len(rules) > 100
    for rule in rules:
        for append_unknown, built in ((False, rule._build), (True, rule._build_unknown)):
            own = ORIGINAL(rule, append_unknown)
            assert built.__func__.__code__.co_code == own.__code__.co_code, rule.rule
            assert built.__func__.__code__.co_consts == own.__code__.co_consts, rule.rule
            assert built.__func__.__code__.co_varnames == own.__code__.co_varnames, rule.rule
    with app.test_request_context():
        assert url_for("reports.evaluation", campaign_id=7, measures="map") == (
            "/reports/7/evaluation?measures=map"
        )
