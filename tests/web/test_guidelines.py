"""Campaign guidelines: Markdown rendered with raw HTML escaped; only admins set them."""

from __future__ import annotations

import pytest

from tests.web.conftest import get_store_of
from workbench.services import guidelines
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign


def test_markdown_is_rendered_and_raw_html_escaped() -> None:
    assert guidelines.render("**Vital**: <img src=x onerror=alert(1)>") == (
        "<p><strong>Vital</strong>: &lt;img src=x onerror=alert(1)&gt;</p>\n"
    )
    assert guidelines.render("[x](javascript:alert(1))") == "<p>[x](javascript:alert(1))</p>\n"
    assert guidelines.render("  \n") == ""


def test_only_admins_set_them_and_the_length_is_bounded(app, world, as_user) -> None:
    url = f"/assess/campaigns/{world.campaign_id}/guidelines"
    assert as_user("alice").post(url, data={"guidelines": "x"}).status_code == 403
    saved = as_user("admin").post(url, data={"guidelines": "Judge *carefully*.\r\n"})
    assert saved.status_code == 303
    store = get_store_of(app)
    with store.read_session() as s:
        assert s.get(Campaign, world.campaign_id).guidelines == "Judge *carefully*.\n"
    with store.session() as s, pytest.raises(ServiceError, match="at most 50000 characters"):
        guidelines.set_guidelines(s, s.get(Campaign, world.campaign_id), "x" * 50_001)
    page = as_user("alice").get(f"/assess/{world.assignment['alice', 'T1']}").text
    assert "<p>Judge <em>carefully</em>.</p>" in page and 'data-show-first="1"' in page
