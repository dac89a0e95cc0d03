"""SVG plots with matplotlib's object API (no pyplot state, so safe in web workers).

Every function returns the SVG text of one figure; the output is deterministic (no date,
fixed element ids), so identical data gives identical files. Every label is plain text: run
tags, topic ids and names are never parsed as mathtext or TeX (`$\\fake$` shows as itself).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ParamSpec

P = ParamSpec("P")

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RECALL_LEVELS = [i / 10 for i in range(11)]


def _plain_text(plot: Callable[P, str]) -> Callable[P, str]:
    """Draw with mathtext and TeX off, so that labels are shown as given."""

    @functools.wraps(plot)
    def plain(*args: P.args, **kwargs: P.kwargs) -> str:
        from matplotlib import rc_context

        with rc_context({"text.parse_math": False, "text.usetex": False}):
            return plot(*args, **kwargs)

    return plain


def _figure(width: float, height: float) -> Figure:
    """A new figure; matplotlib is imported on first use (it takes about a second)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _svg(figure: Figure) -> str:
    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context({"svg.hashsalt": "workbench", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


@_plain_text
def precision_recall_curves(curves: Mapping[str, Sequence[float]], *, title: str = "") -> str:
    """11-point interpolated precision-recall curves, one line per run (values at recall
    0.0, 0.1, ..., 1.0)."""
    figure = _figure(6, 4.5)
    axes = figure.add_subplot()
    for tag, values in curves.items():
        if len(values) != len(RECALL_LEVELS):
            raise ValueError(f"run {tag!r}: expected 11 interpolated precision values")
        axes.plot(RECALL_LEVELS, list(values), marker="o", markersize=3, label=tag)
    axes.set(
        xlabel="Recall",
        ylabel="Interpolated precision",
        title=title or "11-point interpolated precision-recall",
        xlim=(0, 1),
        ylim=(0, 1.02),
    )
    axes.grid(alpha=0.3)
    if curves:
        axes.legend(fontsize="small", loc="upper right")
    return _svg(figure)


@_plain_text
def per_topic_bars(
    scores: Mapping[str, Mapping[str, float]], topics: Sequence[str], *, measure: str
) -> str:
    """Grouped bars: for each topic, one bar per run (scores: run -> topic -> value)."""
    runs = list(scores)
    width = 0.8 / max(len(runs), 1)
    figure = _figure(max(6.0, 0.4 * len(topics) * max(len(runs), 1) / 2 + 2), 4)
    axes = figure.add_subplot()
    for k, tag in enumerate(runs):
        xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(topics))]
        axes.bar(xs, [scores[tag].get(q, 0.0) for q in topics], width=width, label=tag)
    axes.set_xticks(range(len(topics)), list(topics), rotation=90 if len(topics) > 15 else 0)
    axes.set(xlabel="Topic", ylabel=measure, title=f"{measure} per topic")
    axes.grid(axis="y", alpha=0.3)
    if runs:  # beside the axes, where it hides no bar
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)


PER_TOPIC_BARS_AT_MOST = 400
"""The most bars (runs x topics) `per_topic_figure` draws as grouped bars; above it, a heat
map (docs/methods.md §21): a bar chart of 150 runs x 250 topics is 37,500 bars in a figure
thousands of inches wide, unreadable and about 25 s to draw."""


def per_topic_figure(
    scores: Mapping[str, Mapping[str, float]], topics: Sequence[str], *, measure: str
) -> tuple[str, str, str]:
    """(name, title, SVG) of the per-topic figure: grouped bars (`per_topic_bars`) while
    runs x topics <= PER_TOPIC_BARS_AT_MOST, else a runs x topics heat map
    (`per_topic_heatmap`). The title says which, and that the values are in the table."""
    if len(scores) * len(topics) <= PER_TOPIC_BARS_AT_MOST:
        return "bars", f"{measure} per topic", per_topic_bars(scores, topics, measure=measure)
    title = (
        f"{measure} per topic: a heat map of {len(scores)} runs x {len(topics)} topics "
        "(the values are in the per-topic table)"
    )
    return "heatmap", title, per_topic_heatmap(scores, topics, measure=measure)


@_plain_text
def per_topic_heatmap(
    scores: Mapping[str, Mapping[str, float]], topics: Sequence[str], *, measure: str
) -> str:
    """A runs x topics heat map of one measure (`per_topic_heatmap_figure`)."""
    return _svg(per_topic_heatmap_figure(scores, topics, measure=measure))


def per_topic_heatmap_figure(
    scores: Mapping[str, Mapping[str, float]], topics: Sequence[str], *, measure: str
) -> Figure:
    """The heat map's figure: runs (rows, in the order given) x topics (columns), one image
    whatever the number of cells (each cell a pixel, scaled by the viewer). A topic a run
    lacks is 0, as in the bars; an undefined value (NaN) is grey. The colour scale runs from
    min(0, lowest) to max(1, highest), so that a measure in [0, 1] keeps its whole range."""
    import numpy as np
    from matplotlib import colormaps

    runs = list(scores)
    matrix = np.ma.masked_invalid(
        np.array([[scores[r].get(q, 0.0) for q in topics] for r in runs], dtype=float)
    )
    low = min(0.0, float(matrix.min())) if matrix.count() else 0.0
    high = max(1.0, float(matrix.max())) if matrix.count() else 1.0
    width = 3.0 + 0.13 * len(topics)
    figure = _figure(width, 1.5 + 0.13 * len(runs))
    axes = figure.add_subplot()
    colours = colormaps["viridis"].with_extremes(bad="lightgrey")
    image = axes.imshow(matrix, cmap=colours, vmin=low, vmax=high, aspect="auto",
                        interpolation="none")  # fmt: skip
    axes.set_xticks(range(len(topics)), list(topics), rotation=90, fontsize="x-small")
    axes.set_yticks(range(len(runs)), runs, fontsize="x-small")
    axes.set(xlabel="Topic", ylabel="Run", title=f"{measure} per topic and run")
    figure.colorbar(image, ax=axes, fraction=min(0.15, 0.6 / width), pad=0.02, label=measure)
    return figure


@_plain_text
def confusion_heatmap(
    matrix: Sequence[Sequence[int]], labels: Sequence[int | str], *, first: str, second: str
) -> str:
    """A confusion matrix as a heat map with the counts written in the cells."""
    return _svg(confusion_figure(matrix, labels, first=first, second=second))


def confusion_figure(
    matrix: Sequence[Sequence[int]], labels: Sequence[int | str], *, first: str, second: str
) -> Figure:
    """The heat map's figure. The colour scale runs from 0 to the largest count; a count is
    written in white on the darker half of the scale, in black on the lighter half."""
    figure = _figure(1.2 + 0.8 * len(labels), 1.0 + 0.8 * len(labels))
    axes = figure.add_subplot()
    peak = max((max(row) for row in matrix), default=0)
    image = axes.imshow(matrix, cmap="Blues", vmin=0, vmax=max(peak, 1))
    for i, row in enumerate(matrix):
        for j, count in enumerate(row):
            colour = "white" if peak and count > peak / 2 else "black"
            axes.text(j, i, str(count), ha="center", va="center", color=colour)
    ticks = range(len(labels))
    axes.set_xticks(ticks, [str(x) for x in labels])
    axes.set_yticks(ticks, [str(x) for x in labels])
    axes.set(xlabel=second, ylabel=first, title=f"{first} vs {second}")
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    return figure


def parameter_heatmap(
    xs: Sequence[float | str],
    ys: Sequence[float | str],
    rows: Sequence[Sequence[float]],
    *,
    x_name: str,
    y_name: str,
    measure: str,
    best: tuple[float | str, float | str] | None = None,
) -> str:
    """A measure over a two-parameter grid (rows[y][x]; NaN cells are left blank), the value
    written in each cell, the best-in-hindsight cell outlined."""
    import numpy as np

    figure = _figure(1.8 + 0.75 * len(xs), 1.4 + 0.55 * len(ys))
    axes = figure.add_subplot()
    matrix = np.ma.masked_invalid(np.array(rows, dtype=float))
    image = axes.imshow(matrix, cmap="viridis", origin="lower", aspect="auto")
    low, high = float(matrix.min()), float(matrix.max())
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value == value:  # not NaN
                dark = high > low and value < low + (high - low) / 2  # viridis: low is dark
                axes.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize="x-small",
                          color="white" if dark else "black")  # fmt: skip
    if best is not None and best[0] in xs and best[1] in ys:
        from matplotlib.patches import Rectangle

        j, i = list(xs).index(best[0]), list(ys).index(best[1])
        axes.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
    axes.set_xticks(range(len(xs)), [f"{x:g}" if isinstance(x, float) else x for x in xs])
    axes.set_yticks(range(len(ys)), [f"{y:g}" if isinstance(y, float) else y for y in ys])
    outlined = " (best outlined)" if best is not None else ""
    axes.set(
        xlabel=x_name, ylabel=y_name, title=f"{measure} over the {x_name} x {y_name} grid{outlined}"
    )
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04, label=measure)
    return _svg(figure)


def parameter_curve(
    xs: Sequence[float | str], values: Sequence[float], *, x_name: str, measure: str
) -> str:
    """A measure along a one-parameter sweep."""
    figure = _figure(5, 3.5)
    axes = figure.add_subplot()
    positions = list(xs) if all(isinstance(x, float) for x in xs) else list(range(len(xs)))
    axes.plot(positions, list(values), marker="o")
    if positions != list(xs):
        axes.set_xticks(positions, [str(x) for x in xs])
    axes.set(xlabel=x_name, ylabel=measure, title=f"{measure} over {x_name}")
    axes.grid(alpha=0.3)
    return _svg(figure)


def pareto_plot(
    points: Mapping[str, tuple[float, float]],
    frontier: Sequence[str],
    *,
    cost: str,
    measure: str,
) -> str:
    """Effectiveness (y) against a cost such as latency (x), one labelled point per run; the
    runs on the Pareto frontier joined by a line (cost ascending)."""
    figure = _figure(6, 4.5)
    axes = figure.add_subplot()
    on_frontier = set(frontier)
    for tag, (x, y) in points.items():
        marker, colour = ("o", "tab:red") if tag in on_frontier else ("s", "tab:gray")
        axes.scatter([x], [y], marker=marker, color=colour, zorder=3)
        axes.annotate(tag, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="small")
    line = sorted((points[t] for t in frontier), key=lambda p: p[0])
    if line:
        axes.plot([p[0] for p in line], [p[1] for p in line], color="tab:red", lw=1,
                  label="Pareto frontier")  # fmt: skip
        axes.legend(fontsize="small", loc="lower right")
    axes.set(xlabel=cost, ylabel=measure, title=f"{measure} against {cost}")
    axes.grid(alpha=0.3)
    return _svg(figure)


def curves(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    ylim: tuple[float, float] | None = None,
) -> str:
    """One line with markers per series (name -> (xs, ys)), e.g. a measure against cost."""
    figure = _figure(6, 4.5)
    axes = figure.add_subplot()
    for name, (xs, ys) in series.items():
        axes.plot(list(xs), list(ys), marker="o", markersize=3, label=name)
    axes.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if ylim is not None:
        axes.set_ylim(*ylim)
    axes.grid(alpha=0.3)
    if series:
        axes.legend(fontsize="small", loc="lower right")
    return _svg(figure)


@_plain_text
def stacked_shares(
    shares: Mapping[str, Mapping[str, float]], parts: Sequence[str], *, title: str, xlabel: str
) -> str:
    """One horizontal bar per row (shares: row -> part -> share of the row), its parts
    stacked left to right in the order of `parts`."""
    rows = list(shares)
    figure = _figure(6.5, 1.2 + 0.45 * max(len(rows), 1))
    axes = figure.add_subplot()
    left = [0.0] * len(rows)
    for part in parts:
        widths = [shares[r].get(part, 0.0) for r in rows]
        axes.barh(range(len(rows)), widths, left=left, label=part)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    axes.set_yticks(range(len(rows)), rows)
    axes.invert_yaxis()
    axes.set(xlabel=xlabel, title=title, xlim=(0, 1))
    if parts:
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)


@_plain_text
def interval_points(
    points: Mapping[str, tuple[float, float, float]], *, title: str, xlabel: str
) -> str:
    """One point per row with its interval (row -> (value, low, high)); NaN rows are left
    empty."""
    rows = list(points)
    figure = _figure(6, 1.2 + 0.45 * max(len(rows), 1))
    axes = figure.add_subplot()
    for i, row in enumerate(rows):
        value, low, high = points[row]
        if value == value:  # not NaN
            axes.errorbar([value], [i], xerr=[[value - low], [high - value]], fmt="o", capsize=3)
    axes.set_yticks(range(len(rows)), rows)
    axes.invert_yaxis()
    axes.set(xlabel=xlabel, title=title, xlim=(-0.02, 1.02))
    axes.grid(axis="x", alpha=0.3)
    return _svg(figure)


@_plain_text
def category_lines(
    series: Mapping[str, Mapping[str, float]],
    xs: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ylim: tuple[float | None, float | None] = (None, None),
) -> str:
    """One line per series over categorical x values (series -> x -> value; absent x values
    break the line); `ylim` bounds the y axis (None: matplotlib's choice)."""
    figure = _figure(6.5, 4)
    axes = figure.add_subplot()
    for name, values in series.items():
        ys = [values.get(x, float("nan")) for x in xs]
        axes.plot(range(len(xs)), ys, marker="o", markersize=3, label=name)
    step = max(1, len(xs) // 12)
    ticks = list(range(0, len(xs), step))
    axes.set_xticks(ticks, [xs[i] for i in ticks], rotation=45 if len(xs) > 4 else 0, ha="right")
    axes.set(xlabel=xlabel, ylabel=ylabel, title=title)
    axes.set_ylim(*ylim)
    axes.grid(alpha=0.3)
    if series:
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)
