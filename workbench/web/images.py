"""Plots embedded in pages: SVG text as a data: URL for an <img> (the content security policy
allows data: images, and an image cannot run script)."""

from __future__ import annotations

import base64


def svg_image(svg: str) -> str:
    """A data: URL for an <img> of the SVG text."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
