"""Word forms for highlighting: Snowball stems of both sides."""

from __future__ import annotations

from workbench import highlight


def test_word_forms_share_a_stem() -> None:
    found = highlight.stems("Recycling: recycled panels; they recycle, RECYCLES it_s 3D")
    assert found == {
        "recycling": "recycl",
        "recycled": "recycl",
        "panels": "panel",
        "they": "they",
        "recycle": "recycl",
        "recycles": "recycl",
        "it": "it",
        "s": "s",
        "3d": "3d",
    }
    assert highlight.words("A a b A") == ["a", "b"]
    assert highlight.stems("") == {}
