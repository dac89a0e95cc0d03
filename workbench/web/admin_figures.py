"""The admin pages' judging figures as report jobs (`services.judging_figures`): computed in
the job process from one snapshot, kept with the store's fingerprint, and shown by the
progress, assignments and campaign pages; and the adjudication page's disagreements
(`adjudication_queue.queue_figures`).

A page waits at most ADMIN_FIGURES_WAIT_SECONDS (default: REPORT_JOB_WAIT_SECONDS, else
0.5 s) for figures of the store as it is now; past that it shows the last ones with what they
are (`FiguresView.note`: computed at judgement N, the store has changed since, an update is
being computed), or says they are being computed when there are none yet. A store that cannot
be written (read-only, a full disk) cannot queue a job: the figures are then computed in the
request, as before, with a warning in the log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import current_app

from workbench.services import adjudication_queue, jobs, judging_figures
from workbench.services.adjudication import MergeSpec
from workbench.services.store_handle import STORAGE_ERRORS, Session, storage_problem
from workbench.web.db import get_store
from workbench.web.report_jobs import page_job, request_page

WAIT_S = 0.5


BUILDERS: dict[str, Callable[[Session, int, dict[str, Any]], judging_figures.Figures]] = {
    "progress-figures": lambda s, c, params: judging_figures.progress_figures(
        s, c, params["pools"]
    ),
    "assignment-figures": lambda s, c, _params: judging_figures.assignment_figures(s, c),
    "campaign-figures": lambda s, c, params: judging_figures.campaign_figures(s, c, params["pool"]),
    "adjudication-figures": lambda s, c, params: adjudication_queue.queue_figures(
        s, c, MergeSpec(**params)
    ),
}
"""Job kind -> what computes its figures (from one read session)."""


def _register(kind: str) -> None:
    def build(
        session: Session, campaign_id: int, params: dict[str, Any], _progress: jobs.Progress
    ) -> dict[str, Any]:
        return {"figures": BUILDERS[kind](session, campaign_id, params)}

    page_job(kind, build, depends=judging_figures.depends)


for _kind in BUILDERS:
    _register(_kind)


@dataclass(frozen=True)
class FiguresView:
    """A page's figures (None: none computed yet) and what the page says of them."""

    figures: Any
    fresh: bool
    pending: bool
    failed: str  # the last computation's error, if it failed

    @property
    def note(self) -> str:
        """'' for current figures; else what the shown ones are, or that none are yet."""
        if self.failed:
            return f"The figures could not be computed: {self.failed}"
        if self.figures is None:
            return "Being computed in the background: reload in a moment."
        if self.fresh:
            return ""
        mark = self.figures.as_of
        update = (
            "an update is being computed: reload for it"
            if self.pending
            else "reload to compute them again"
        )
        return (
            f"As of judgement {mark.highest} ({mark.count} judgement events): the store has "
            f"changed since, {update}."
        )


def figures(kind: str, campaign_id: int, params: dict[str, Any] | None = None) -> FiguresView:
    """The figures of job `kind` (one of the three above) for the campaign."""
    config = current_app.config
    wait = float(
        config.get("ADMIN_FIGURES_WAIT_SECONDS", config.get("REPORT_JOB_WAIT_SECONDS", WAIT_S))
    )
    params = params or {}
    try:
        state, page = request_page(kind, campaign_id, params, wait=wait)
    except STORAGE_ERRORS as error:  # a read-only store, a full disk: no job can be queued
        problem = storage_problem(error)
        if problem is None:
            raise
        current_app.logger.warning("judging figures computed in the request: %s", problem)
        with get_store().read_session() as session:
            computed = BUILDERS[kind](session, campaign_id, params)
        return FiguresView(computed, fresh=True, pending=False, failed="")
    failed = state.error if state.status == jobs.FAILED else ""
    shown = page["figures"] if page is not None else None
    return FiguresView(shown, state.fresh, state.pending, failed)
