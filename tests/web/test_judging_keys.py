"""Grade keys that are the judging or adjudication page's own keys are refused when the
scale is defined."""

from __future__ import annotations

import html

import pytest
from click.testing import CliRunner

from workbench.cli import main
from workbench.services import campaigns
from workbench.services.errors import ServiceError


@pytest.mark.parametrize(
    ("scale", "named"),
    [
        ("0:No:n,1:Yes:y", "'n' (next document)"),
        ("0:No:0,1:Yes:j", "'j' (next document to adjudicate)"),
        ("0:No:0,1:Yes:p", "'p' (previous document)"),
        ("0:No:s,1:Yes:c", "'s' (skip), 'c' (cannot judge)"),
        ("0:No:m,1:Yes:1", "'m' (comment)"),
        ("0:No:0,1:Yes:ArrowUp", "'ArrowUp' (scroll)"),
        ("0:No:0,1:Yes:Home", "'Home' (scroll)"),
    ],
)
def test_the_service_refuses_navigation_keys(scale: str, named: str) -> None:
    with pytest.raises(ServiceError) as raised:
        campaigns.parse_scale(scale)
    assert str(raised.value) == (
        f"grade key(s) {named} are the judging or adjudication page's own keys; choose "
        "others, e.g. digits"
    )


def test_other_keys_are_accepted() -> None:
    assert campaigns.parse_scale("0:No:x,1:Yes:y,2:Very:N") == [
        (0, "No", "x"),
        (1, "Yes", "y"),
        (2, "Very", "N"),
    ]


def test_the_web_form_and_the_command_line_say_why(app, as_user, world_url) -> None:
    page = as_user("admin").post(
        "/admin/campaigns", data={"name": "x", "scale": "0:No:n,1:Yes:1"}, follow_redirects=True
    )
    assert (
        "grade key(s) 'n' (next document) are the judging or adjudication page's own keys"
        in html.unescape(page.text)
    )
    result = CliRunner().invoke(
        main, ["--db", world_url[0], "campaign", "create", "y", "--scale", "0:No:0,1:Yes:c"]
    )
    assert result.exit_code != 0
    assert (
        "grade key(s) 'c' (cannot judge) are the judging or adjudication page's own keys"
        in result.output
    )
