"""Rewrite tests/slow_tests.txt: the tests of the fast loop whose setup and call take more
than THRESHOLD seconds on this machine (tests/conftest.py marks the tests listed `slow`).

Measured the way the fast loop runs, on every core with pytest-xdist, with the list ignored
(`WORKBENCH_SLOW_TESTS=ignore`): `python3 scripts/slow_tests.py [THRESHOLD]`. Run it on a
quiet machine; the list is data, kept in git, and says when and where it was measured.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LISTED = REPO / "tests" / "slow_tests.txt"
PHASE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+)$")


def measure() -> Counter[str]:
    """Node id -> seconds of its setup, call and teardown in one fast loop."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-m",
        "not slow",
        "-n",
        "auto",
        "-p",
        "no:cacheprovider",
        "--durations=0",
        "--durations-min=0",
        "--deselect",
        "tests/test_slow_tests_list.py",
    ]  # the list's own check left out: it needs the list
    env = os.environ | {"WORKBENCH_SLOW_TESTS": "ignore"}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the fast loop failed; nothing rewritten\n{done.stdout[-3000:]}")
    seconds: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        found = PHASE.match(line)
        if found:
            seconds[found.group(3)] += float(found.group(1))
    return seconds


def main() -> None:
    threshold = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    seconds = measure()
    slow = sorted(node for node, spent in seconds.items() if spent > threshold)
    header = (
        f"# The fast loop's tests that took more than {threshold:g} s (setup and call) on\n"
        f"# {os.cpu_count()} cores ({platform.machine()}), {dt.date.today()}: marked `slow` by "
        "tests/conftest.py, so they run\n# in CI and in `pytest` without -m, not in the fast "
        f"loop. {len(slow)} tests, {sum(seconds[n] for n in slow):.1f} s of the\n"
        f"# loop's {sum(seconds.values()):.1f} s. Written by scripts/slow_tests.py; edit it by "
        "running that.\n"
    )
    LISTED.write_text(header + "".join(f"{node}\n" for node in slow))
    print(f"{len(slow)} tests listed in {LISTED.relative_to(REPO)}")


if __name__ == "__main__":
    main()
