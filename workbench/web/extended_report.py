"""The evaluation page's further sections (course notes): options from the request, tables
and plots for the template `reports/_notes_sections.html`. Built by
`services.extended_evaluation.extended_sections`, rendered by `reports.extended`."""

from __future__ import annotations

from typing import Any

from flask import request

from workbench.reports import extended as tables
from workbench.services.evaluation_report import NotesOptions
from workbench.services.extended_evaluation import ExtendedSections
from workbench.web.images import svg_image


def _number(name: str, kind: type) -> Any:
    text = request.args.get(name, "").strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        return None
    return value if value > 0 else None


def notes_options() -> NotesOptions:
    """The section options from the query string: collection size N, minimum difference,
    sweep pattern, interleaving method."""
    return NotesOptions(
        num_docs=_number("num_docs", int),
        delta=_number("delta", float),
        sweep=request.args.get("sweep", "").strip()[:200],
        interleaving=request.args.get("interleaving", "team-draft"),
    )


def notes_page(sections: ExtendedSections, options: dict[str, Any]) -> dict[str, Any]:
    """Tables, plots and reasons of the further sections, for the template."""
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
        page["efficiency_plots"] = [svg_image(svg) for svg in plots if svg is not None]
    if sections.interleaving is not None:
        page["interleaving"] = tables.interleaving_table(sections.interleaving)
    if sections.sweep is not None:
        page["sweep"] = tables.sweep_table(sections.sweep)
        page["cross_validation"] = tables.cross_validation_table(sections.sweep)
        page["sweep_plot"] = svg_image(tables.sweep_plot(sections.sweep))
    return page
