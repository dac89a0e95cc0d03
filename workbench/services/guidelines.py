"""A campaign's judging guidelines: Markdown the organiser writes, rendered safely.

Rendering is CommonMark with raw HTML disabled (markdown-it-py): any `<tag>` in the text is
shown as text, never passed through, and links with javascript:, vbscript:, file: or data:
(other than images) URLs are not made links (markdown-it's validateLink).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from sqlalchemy.orm import Session

from workbench.services.errors import ServiceError
from workbench.store.models import Campaign

MAX_LENGTH = 50_000  # characters


def render(text: str) -> str:
    """The HTML of Markdown `text`, raw HTML escaped ('' for blank text)."""
    if not text.strip():
        return ""
    return MarkdownIt("commonmark", {"html": False}).render(text)


def set_guidelines(session: Session, campaign: Campaign, text: str) -> None:
    """Replace the campaign's guidelines ('' removes them); at most MAX_LENGTH characters."""
    text = text.replace("\r\n", "\n")
    if len(text) > MAX_LENGTH:
        raise ServiceError(f"the guidelines have at most {MAX_LENGTH} characters; got {len(text)}")
    campaign.guidelines = text
