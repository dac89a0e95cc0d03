"""The report jobs' child process (`services.jobs.serve` over the store named by the
environment): `python -m workbench.web.job_child`, or `main` forked from the fork server that
imported this module (`services.forked`). Importing it imports the modules that register the
job kinds (report pages, query-log and upload tasks), the modules their views import when
first called (the report pipeline and its sections, the formats, the agreement services),
matplotlib, which the report pages draw with, and scipy's modules, which the tests and
intervals load on first use (`workbench.lazy`), and configures the ORM's mappers: a forked
child inherits them instead of importing them (over a second of CPU, scipy.stats alone) or
configuring them again (70 ms before its first evaluation report)."""

from __future__ import annotations

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401
import scipy.optimize
import scipy.special
import scipy.stats  # noqa: F401

import workbench.reports.formats
import workbench.reports.pipeline
import workbench.services.agreement
import workbench.services.agreement_tables
import workbench.web.admin_figures
import workbench.web.querylogs
import workbench.web.reports
import workbench.web.uploads  # noqa: F401
from workbench.services import jobs
from workbench.services.store_handle import open_store, prepare_models

prepare_models()


def main() -> None:
    """Compute the job ids read on stdin (see `services.jobs.serve`)."""
    jobs.serve(open_store())


if __name__ == "__main__":
    main()
