"""Build a realistic campaign from the CACM collection, through the `workbench` command.

    python examples/cacm_campaign.py [--db sqlite:///cacm.sqlite] [--cacm ../shared/data/cacm]
                                     [--files cacm-files] [--depth 20]

Writes importable files (the 52 judged CACM queries as TSV topics, 3,204 abstracts as JSONL,
one run per simple ranker of `workbench.baselines`, the CACM qrels), then creates the campaign
"cacm": imports them (the qrels as the reference set "cacm-reference"), builds a depth-k pool
over every run and assigns each topic to two of three assessors. Log in as `organiser` /
`cacm-organiser` with `workbench serve --db URL`; assessors are `ann`, `ben`, `cat` with
passwords `cacm-ann`, …
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from workbench import cacm

HERE = Path(__file__).resolve().parent
ASSESSORS = ("ann", "ben", "cat")


def workbench(db: str, *args: str, stdin: str | None = None) -> None:
    """Run `workbench --db DB ARGS…` as a user would; stop on the first failure."""
    command = [sys.executable, "-m", "workbench", "--db", db, *args]
    print("$ workbench", *args, flush=True)
    subprocess.run(command, input=stdin, text=True, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="sqlite:///cacm.sqlite")
    parser.add_argument("--cacm", type=Path, default=HERE.parent.parent / "shared/data/cacm")
    parser.add_argument("--files", type=Path, default=Path("cacm-files"))
    parser.add_argument("--depth", type=int, default=20, help="pool depth (default 20)")
    args = parser.parse_args()

    files = cacm.write_campaign_files(cacm.load(args.cacm), args.files)
    db = args.db
    workbench(db, "campaign", "create", "cacm", "--description", "CACM abstracts, 52 queries")
    workbench(db, "import", "topics", "--campaign", "cacm", str(files.topics))
    workbench(db, "import", "documents", "--campaign", "cacm", str(files.documents))
    workbench(db, "import", "runs", "--campaign", "cacm", *map(str, files.runs))
    workbench(
        db, "import", "qrels", "--campaign", "cacm", str(files.qrels), "--name", "cacm-reference"
    )
    workbench(db, "pool", "build", "--campaign", "cacm", "--depth", str(args.depth), "--seed", "1")
    workbench(
        db,
        "user",
        "add",
        "organiser",
        "--role",
        "admin",
        "--password-stdin",
        stdin="cacm-organiser\n",
    )
    for name in ASSESSORS:
        workbench(db, "user", "add", name, "--password-stdin", stdin=f"cacm-{name}\n")
    workbench(
        db,
        "assign",
        "--campaign",
        "cacm",
        "--judges-per-topic",
        "2",
        "--assessors",
        ",".join(ASSESSORS),
    )
    print(f"\nDone. Serve it with: workbench serve --db {db}")


if __name__ == "__main__":
    main()
