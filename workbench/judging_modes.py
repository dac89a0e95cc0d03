"""How a campaign's assessors judge: the registry of judging modes and their options (pure).

- ``document``: one document per screen, graded by keys (the judging page);
- ``passages``: for short documents (passages, as in TREC Deep Learning), a list of
  ``per_screen`` passages of one topic per screen, each graded by keys, the focused one
  outlined; still the pool's seeded per-assessor order and blind to runs and ranks;
- ``pairwise``: two documents of a topic side by side, the assessor says which is better
  (or that they are equal); the pairs come from a design of `workbench.pairs`.

The CLI's ``campaign mode`` options and the campaign page's form are generated from
`JUDGING_MODES` and each mode's `ModeOption`s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.pairs import DEFAULT_TOP, MAX_TOP, PAIR_DESIGNS


@dataclass(frozen=True)
class ModeOption:
    """An option of a judging mode: an integer within [minimum, maximum] or one of
    `choices` (then the first is the default)."""

    name: str
    label: str
    help: str
    default: int | str
    minimum: int = 0
    maximum: int = 0
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgingMode:
    name: str
    label: str
    help: str
    options: tuple[ModeOption, ...] = ()


DEFAULT_PER_SCREEN = 10
MAX_PER_SCREEN = 50

JUDGING_MODES: dict[str, JudgingMode] = {
    mode.name: mode
    for mode in (
        JudgingMode(
            "document",
            "One document per screen",
            "Grade one document at a time, the topic beside it.",
        ),
        JudgingMode(
            "passages",
            "A list of passages per screen",
            "Short documents (passages): several of one topic per screen, each graded by "
            "keys; j/k move between them.",
            (
                ModeOption(
                    "per_screen",
                    "Passages per screen",
                    "How many passages one screen lists.",
                    DEFAULT_PER_SCREEN,
                    minimum=2,
                    maximum=MAX_PER_SCREEN,
                ),
            ),
        ),
        JudgingMode(
            "pairwise",
            "Pairwise preferences",
            "Two documents of a topic side by side: which is better, or are they equal?",
            (
                ModeOption(
                    "design",
                    "Pairs",
                    "; ".join(f"{d.name}: {d.help}" for d in PAIR_DESIGNS.values()),
                    next(iter(PAIR_DESIGNS)),
                    choices=tuple(PAIR_DESIGNS),
                ),
                ModeOption(
                    "top",
                    "Top documents per topic",
                    "The k documents of the pool, by best rank, whose pairs are judged "
                    "(k(k-1)/2 pairs per topic).",
                    DEFAULT_TOP,
                    minimum=2,
                    maximum=MAX_TOP,
                ),
            ),
        ),
    )
}


def checked_options(mode: str, given: Mapping[str, Any]) -> dict[str, int | str]:
    """The mode's options from `given` (absent or empty: the default), each checked: an
    unknown mode or option, a number out of bounds or an unknown choice is a ValueError
    with the reason."""
    if mode not in JUDGING_MODES:
        raise ValueError(
            f"unknown judging mode {mode!r}; expected one of {', '.join(JUDGING_MODES)}"
        )
    declared = {option.name: option for option in JUDGING_MODES[mode].options}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ValueError(f"judging mode {mode!r} has no option {unknown[0]!r}")
    chosen: dict[str, int | str] = {}
    for name, option in declared.items():
        value = given.get(name)
        if value is None or value == "":
            chosen[name] = option.default
        elif option.choices:
            if value not in option.choices:
                raise ValueError(
                    f"{option.label.lower()}: expected one of {', '.join(option.choices)}; "
                    f"got {str(value)[:40]!r}"
                )
            chosen[name] = str(value)
        else:
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{option.label.lower()}: expected a whole number; got {str(value)[:40]!r}"
                ) from None
            if not option.minimum <= number <= option.maximum:
                raise ValueError(
                    f"{option.label.lower()}: expected {option.minimum} to {option.maximum}; "
                    f"got {number}"
                )
            chosen[name] = number
    return chosen
