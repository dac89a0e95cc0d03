"""The per-topic figure: grouped bars up to `PER_TOPIC_BARS_AT_MOST` bars, a runs x topics heat
map above (issue 29 §2: 150 runs x 250 topics would be 37,500 bars)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from workbench.reports import plots
from workbench.reports.plots import PER_TOPIC_BARS_AT_MOST, per_topic_figure


def _scores(runs: int, topics: int) -> tuple[dict[str, dict[str, float]], list[str]]:
    qids = [str(301 + i) for i in range(topics)]
    scores = {f"run{r}": {q: ((r * 7 + i * 3) % 10) / 10 for i, q in enumerate(qids)}
              for r in range(runs)}  # fmt: skip
    return scores, qids


def _bars(svg: str) -> int:
    return svg.count('id="patch_') - 2  # the figure's and the axes' backgrounds


def test_bars_up_to_the_bound_then_a_heat_map() -> None:
    scores, topics = _scores(20, 20)
    assert len(scores) * len(topics) == PER_TOPIC_BARS_AT_MOST
    name, title, svg = per_topic_figure(scores, topics, measure="map")
    assert (name, title) == ("bars", "map per topic")
    assert "<image" not in svg and _bars(svg) >= PER_TOPIC_BARS_AT_MOST  # and the legend's
    scores, topics = _scores(20, 21)  # one topic more: 420 cells
    name, title, svg = per_topic_figure(scores, topics, measure="map")
    assert name == "heatmap"
    assert title == (
        "map per topic: a heat map of 20 runs x 21 topics (the values are in the per-topic table)"
    )
    root = ET.fromstring(svg)
    images = [e for e in root.iter() if e.tag.endswith("image")]
    assert len(images) == 2  # the cells, and the colour bar
    assert _bars(svg) < 10  # no bar per cell: the colour bar's outline and the like only
    assert svg == per_topic_figure(scores, topics, measure="map")[2]  # deterministic


def test_the_heat_map_shows_every_value_at_its_cell_on_a_fixed_scale() -> None:
    topics = ["401", "402", "403"]
    scores = {
        "bm25": {"401": 0.25, "402": math.nan, "403": 0.5},
        "lm": {"401": 0.75},  # lacks 402 and 403: 0, as in the bars
    }
    figure = plots.per_topic_heatmap_figure(scores, topics, measure="map")
    axes = figure.axes[0]
    image = axes.images[0]
    cells = image.get_array()
    assert cells.shape == (2, 3)
    assert cells.mask.tolist() == [[False, True, False], [False, False, False]]  # NaN: grey
    assert cells.filled(-1).tolist() == [[0.25, -1, 0.5], [0.75, 0.0, 0.0]]
    assert (image.norm.vmin, image.norm.vmax) == (0.0, 1.0)  # [0, 1] kept, not autoscaled
    assert [t.get_text() for t in axes.get_yticklabels()] == ["bm25", "lm"]
    assert [t.get_text() for t in axes.get_xticklabels()] == topics
    counts = plots.per_topic_heatmap_figure({"r": {"1": 3.0, "2": -1.0}}, ["1", "2"], measure="x")
    norm = counts.axes[0].images[0].norm
    assert (norm.vmin, norm.vmax) == (-1.0, 3.0)


def test_the_heat_maps_labels_are_plain_text() -> None:
    scores = {rf"$\fake{r}$": {f"$q{i}$": 0.5 for i in range(30)} for r in range(20)}
    svg = plots.per_topic_heatmap(scores, [f"$q{i}$" for i in range(30)], measure=r"$\alpha$")
    assert r"$\alpha$" in svg and r"$\fake3$" in svg and "$q29$" in svg


def test_the_heat_map_of_a_trec_size_report_costs_as_little_as_a_small_one() -> None:
    """One image whatever the cells: 150 runs x 250 topics gives an SVG whose size is the
    labels' and the image's (a bar chart of the same is 37,500 bars)."""
    rng = np.random.default_rng(3)
    topics = [str(q) for q in range(401, 651)]
    scores = {f"run{r:03d}": dict(zip(topics, rng.random(250).tolist(), strict=True))
              for r in range(150)}  # fmt: skip
    name, _title, svg = per_topic_figure(scores, topics, measure="map")
    assert name == "heatmap"
    assert _bars(svg) < 10
    assert len(svg) < 1_000_000
