"""The report jobs' child process (`services.jobs.serve` over the store named by the
environment): `python -m workbench.web.job_child`, or `main` forked from the fork server that
imported this module (`services.forked`). Importing it imports the modules that register the
job kinds (report pages, query-log and upload tasks) and matplotlib, which the report pages
draw with: a forked child inherits them instead of importing them (over a second of CPU)."""

from __future__ import annotations

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401

import workbench.web.admin_figures
import workbench.web.querylogs
import workbench.web.reports
import workbench.web.uploads  # noqa: F401
from workbench.services import jobs
from workbench.services.store_handle import open_store


def main() -> None:
    """Compute the job ids read on stdin (see `services.jobs.serve`)."""
    jobs.serve(open_store())


if __name__ == "__main__":
    main()
