"""The admin pages' judging figures as report jobs (`services.judging_figures`): computed in
the job process from one snapshot, kept with the store's fingerprint, and shown by the
progress, assignments and campaign pages.

A page waits at most ADMIN_FIGURES_WAIT_SECONDS (default: REPORT_JOB_WAIT_SECONDS, else
0.5 s) for figures of the store as it is now; past that it shows the last ones with what they
are (`FiguresView.note`: computed at judgement N, the store has changed since, an update is
being computed), or says they are being computed when there are none yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import current_app

from workbench.services import jobs, judging_figures
from workbench.services.store_handle import Session
from workbench.web.report_jobs import page_job, request_page

WAIT_S = 0.5


def _progress(
    session: Session, campaign_id: int, params: dict[str, Any], _progress: jobs.Progress
) -> dict[str, Any]:
    return {"figures": judging_figures.progress_figures(session, campaign_id, params["pools"])}


def _assignments(
    session: Session, campaign_id: int, _params: dict[str, Any], _progress: jobs.Progress
) -> dict[str, Any]:
    return {"figures": judging_figures.assignment_figures(session, campaign_id)}


def _campaign(
    session: Session, campaign_id: int, _params: dict[str, Any], _progress: jobs.Progress
) -> dict[str, Any]:
    return {"figures": judging_figures.campaign_figures(session, campaign_id)}


page_job("progress-figures", _progress, depends=judging_figures.depends)
page_job("assignment-figures", _assignments, depends=judging_figures.depends)
page_job("campaign-figures", _campaign, depends=judging_figures.depends)


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
    state, page = request_page(kind, campaign_id, params or {}, wait=wait)
    failed = state.error if state.status == jobs.FAILED else ""
    shown = page["figures"] if page is not None else None
    return FiguresView(shown, state.fresh, state.pending, failed)
