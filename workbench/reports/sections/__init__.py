"""The report's sections, in the order every output shows them: the one registry that the
CLI (`workbench evaluate`), the web page, every download and the API walk.

Adding a section: write a module here that declares `SECTION = Section(...)`
(`reports.document.Section`: a name, a title, what it needs from the shared context, its
build, tables, plots, notes and dict form, its options) and add one line below.
"""

from __future__ import annotations

from workbench.reports.document import Section
from workbench.reports.sections import (
    clicks,
    collection,
    efficiency,
    interleaving,
    pairwise,
    per_topic,
    power,
    precision_recall,
    reusability,
    stability,
    summary,
    sweep,
    tukey,
)

SECTIONS: tuple[Section, ...] = (
    summary.SECTION,
    per_topic.SECTION,
    precision_recall.SECTION,
    pairwise.SECTION,
    tukey.SECTION,
    stability.SECTION,
    reusability.BY_RUN,
    reusability.BY_GROUP,
    collection.SECTION,
    power.SECTION,
    sweep.SECTION,
    interleaving.SECTION,
    efficiency.SECTION,
    clicks.SECTION,
)
