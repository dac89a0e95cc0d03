"""How many examples each property-based (Hypothesis) test tries, and how many random seeds
each test parametrized over seeds (`range(examples(n))`) runs: the count written at the
test in CI, a quarter of it (at least 5) in a developer's runs, the fast loop among them.

The profile is $HYPOTHESIS_PROFILE ("ci" or "dev"; `.ci/run` sets "ci"); without it, "ci"
where $CI is set (to anything but "", "0" or "false", as CI services set it) and "dev"
elsewhere. "dev" also lowers Hypothesis's default of 100
examples to 25 for a test that writes no count. Fewer examples while developing and the full
count in CI is the practice Hypothesis's documentation describes for its settings profiles;
a failing example either finds is saved in the example database (`.hypothesis/`) and tried
first on the next run, so a failure CI finds is replayed by a developer's fast loop.
"""

from __future__ import annotations

import importlib.util
import os

IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false")
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if IN_CI else "dev")
if PROFILE not in ("ci", "dev"):
    raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}: expected 'ci' or 'dev'")
DEV_SHARE = 4
"""The dev profile runs 1/DEV_SHARE of each test's examples."""
DEV_MINIMUM = 5


def examples(count: int) -> int:
    """The examples a test written for `count` runs under the current profile."""
    return count if PROFILE == "ci" else max(DEV_MINIMUM, -(-count // DEV_SHARE))


if importlib.util.find_spec("hypothesis"):  # the wheel check's venv has pytest only
    from hypothesis import settings

    settings.register_profile("ci", max_examples=100)
    settings.register_profile("dev", max_examples=examples(100))
    settings.load_profile(PROFILE)
