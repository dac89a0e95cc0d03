"""A stored run's docnos blob ('\\n'-joined UTF-8) read back into one fixed-width array without
a bytes object per docno (`store.runs._docnos_array`): what splitting it gives."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.store.runs import _docnos_array


def test_docnos_array_is_the_split_blob() -> None:
    rng = np.random.default_rng(3)
    alphabet = ["a", "Z", "9", "-", "é", "文", "_", "."]
    cases = [[""], ["", "x"], ["x", ""], ["only"], ["", ""], ["a", "bcd", "ef"], ["ab", "c", "de"]]
    for width in (1, 2, 15):  # docnos of one length: the bytes reshaped
        cases.append([f"{i:0{width}d}"[-width:] for i in range(int(rng.integers(1, 50)))])
        cases.append(["é" * width, "文" * width])
    for _ in range(200):
        n = int(rng.integers(1, 40))
        cases.append(
            ["".join(rng.choice(alphabet, size=int(rng.integers(0, 25)))) for _ in range(n)]
        )
    for docnos in cases:
        parts = [d.encode() for d in docnos]
        got = _docnos_array(b"\n".join(parts), len(parts))
        expected = np.array(parts, dtype=bytes)
        assert got.dtype == expected.dtype
        assert got.tolist() == expected.tolist()
    assert _docnos_array(b"", 0).dtype == np.dtype("S1")
    assert len(_docnos_array(b"", 0)) == 0


def test_docnos_array_refuses_a_blob_of_another_count() -> None:
    with pytest.raises(ValueError, match="holds 2 docnos, not 3"):
        _docnos_array(b"a\nb", 3)
