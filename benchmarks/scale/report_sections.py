"""CPU seconds of each section of a campaign's evaluation report, as the report job builds it.

    python benchmarks/scale/report_sections.py --db sqlite:///scale.sqlite [--campaign 1]

The report is built once (`reports.pipeline.build_report`, randomization test, incomplete qrels
allowed, as `workbench evaluate --test randomization --allow-incomplete`), and the process's
CPU time is read before each section: a section's figure includes the shared parts it is the
first to need (the runs, the qrels and the table for the first section). Every section is
built in this process (`build_report(apart=False)`: no section in a child, whose CPU this
process would not count), unless `--apart`: then the sections that can be are built in a
child as the report job builds them, and the figures are this process's CPU (user + system)
and the child's; this process's is about the report's wall time on a quiet machine with a
core free for the child. Use a copy of the store; nothing is written to it.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import time

from workbench.reports.pipeline import build_report, parse
from workbench.services.campaigns import get_campaign
from workbench.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the store's URL (a copy)")
    parser.add_argument("--campaign", default="1", help="campaign name or id")
    parser.add_argument("--apart", action="store_true", help="sections apart, as the job does")
    args = parser.parse_args()
    store = open_store(args.db)
    request = parse({"test": ["randomization"], "allow_incomplete": ["1"]})
    marks: list[tuple[str, float]] = []
    start = time.process_time()
    with store.read_session() as session:
        campaign = get_campaign(session, args.campaign)
        build_report(
            session,
            campaign,
            request,
            lambda title: marks.append((title, time.process_time())),
            apart=args.apart,  # without: every section in this process, its CPU counted here
        )
    marks.append(("end", time.process_time()))
    for (title, at), (_, after) in itertools.pairwise(marks):
        print(f"{title:50s} {after - at:7.2f} s")
    print(f"{'total':50s} {marks[-1][1] - start:7.2f} s CPU")
    if args.apart:
        mine = resource.getrusage(resource.RUSAGE_SELF)
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(
            f"this process {mine.ru_utime:.1f} s user + {mine.ru_stime:.1f} s system; "
            f"the child {child.ru_utime:.1f} s user + {child.ru_stime:.1f} s system"
        )


if __name__ == "__main__":
    main()
