"""The evaluation page's further sections (course notes): options from the request, tables
and plots for the template `reports/_notes_sections.html`. Built by
`services.extended_evaluation.extended_sections`, rendered by `reports.extended`."""

from __future__ import annotations

import base64
from typing import Any

from flask import request

from workbench.reports import extended as tables
from workbench.services.extended_evaluation import extended_sections


def _svg_image(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _number(name: str, kind: type) -> Any:
    text = request.args.get(name, "").strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        return None
    return value if value > 0 else None


DEFAULT_OPTIONS: dict[str, Any] = {
    "num_docs": None,
    "delta": None,
    "sweep": "",
    "interleaving": "team-draft",
}


def notes_request() -> dict[str, Any]:
    """The section options: collection size N, minimum difference, sweep pattern, method."""
    method = request.args.get("interleaving", "team-draft")
    return {
        "num_docs": _number("num_docs", int),
        "delta": _number("delta", float),
        "sweep": request.args.get("sweep", "").strip()[:200],
        "interleaving": method if method in ("team-draft", "balanced") else "team-draft",
    }


def notes_page(session: Any, campaign: Any, table: Any, runs: Any, choice: dict[str, Any],
               alpha: float) -> dict[str, Any]:  # fmt: skip
    """Tables, plots and reasons of the further sections, for the template; the options come
    with the report's choice (``choice["notes"]``, from `notes_request`), as a report job
    runs outside the request."""
    options = {**DEFAULT_OPTIONS, **(choice.get("notes") or {})}
    sections = extended_sections(
        session, campaign, table, runs, choice["qrels"], test=choice["test"], alpha=alpha,
        num_docs=options["num_docs"], min_difference=options["delta"],
        sweep_pattern=options["sweep"] or None, interleaving_method=options["interleaving"],
        allow_incomplete=bool(choice.get("allow_incomplete")),
    )  # fmt: skip
    page: dict[str, Any] = {"options": options, "sections": sections}
    if sections.collection is not None:
        page["collection"] = tables.collection_scale_table(sections.collection)
    if sections.power is not None:
        page["power_sentence"] = sections.power.sentence
        page["topic_set_size"] = tables.topic_set_size_table(sections.power)
        page["power"] = tables.power_table(sections.power)
    if sections.efficiency is not None:
        page["efficiency"] = tables.efficiency_table(sections.efficiency)
        plots = [tables.efficiency_plot(sections.efficiency, cost) for cost in tables.COSTS]
        page["efficiency_plots"] = [_svg_image(svg) for svg in plots if svg is not None]
    if sections.interleaving is not None:
        page["interleaving"] = tables.interleaving_table(sections.interleaving)
    if sections.sweep is not None:
        page["sweep"] = tables.sweep_table(sections.sweep)
        page["cross_validation"] = tables.cross_validation_table(sections.sweep)
        page["sweep_plot"] = _svg_image(tables.sweep_plot(sections.sweep))
    return page
