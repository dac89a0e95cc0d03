"""Parameter sweeps and K-fold cross-validation over topics (pure; notes 002, "Setting
parameter values": use training and test data, or cross-validation, to avoid overfitting).

A set of runs is one system's parameter grid: each run tag names a setting, read with a
pattern such as ``bm25_k1={k1}_b={b}`` (each ``{name}`` matches a value; the rest is literal)
or from a mapping file (CSV or TSV with a header ``tag,<param>,<param>...``).

Cross-validation: the topics are shuffled with a seed and split into K folds; for each fold
the setting with the best mean on the other K - 1 folds (ties: the first tag in sorted
order) is scored on the held-out fold. The cross-validated score is the mean over all topics
of the chosen settings' held-out scores; the best-in-hindsight score is the best setting's
mean over all topics, chosen on the very topics it is scored on. Their difference is the
overfitting gap: how much tuning on the test topics flatters a system.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

Value = float | str
Setting = dict[str, Value]

MAX_PATTERN_CHARS = 500
MAX_MAPPING_BYTES = 10_000_000
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SweepError(ValueError):
    """A pattern, mapping or score set that cannot define a parameter grid."""


def _value(text: str) -> Value:
    """A number when the text is one (1.2, 0.75, 100), else the text."""
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def compile_pattern(pattern: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A regular expression for a tag pattern: ``{name}`` fields match one or more characters
    (non-greedy, so literal separators delimit them); everything else is literal."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise SweepError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    names: list[str] = []
    parts: list[str] = []
    position = 0
    for match in _FIELD.finditer(pattern):
        name = match.group(1)
        if name in names:
            raise SweepError(f"pattern {pattern!r} names {{{name}}} twice")
        if match.start() == position and names:
            raise SweepError(f"pattern {pattern!r}: two fields need a literal between them")
        parts.append(re.escape(pattern[position : match.start()]))
        parts.append(f"(?P<{name}>.+?)")
        names.append(name)
        position = match.end()
    parts.append(re.escape(pattern[position:]))
    if not names:
        raise SweepError(f"pattern {pattern!r} has no {{parameter}} field")
    return re.compile("".join(parts)), tuple(names)


@dataclass(frozen=True)
class Grid:
    """Run tag -> its setting; the parameter names in order; tags that are not in the grid."""

    parameters: tuple[str, ...]
    settings: dict[str, Setting]
    excluded: tuple[str, ...] = ()

    def values(self, parameter: str) -> list[Value]:
        """The distinct values of a parameter, numbers ascending (then texts)."""
        seen = {s[parameter] for s in self.settings.values()}
        return sorted(seen, key=lambda v: (1, 0.0, v) if isinstance(v, str) else (0, v, ""))


def grid_from_tags(tags: Iterable[str], pattern: str) -> Grid:
    """The runs whose whole tag matches ``pattern``; the others are listed as excluded.
    Two tags with the same setting are an error (the grid would be ambiguous)."""
    regex, names = compile_pattern(pattern)
    settings: dict[str, Setting] = {}
    excluded = []
    seen: dict[tuple[Value, ...], str] = {}
    for tag in tags:
        match = regex.fullmatch(tag)
        if match is None:
            excluded.append(tag)
            continue
        setting = {name: _value(match.group(name)) for name in names}
        key = tuple(setting[n] for n in names)
        if key in seen:
            raise SweepError(f"runs {seen[key]!r} and {tag!r} have the same setting {setting}")
        seen[key] = tag
        settings[tag] = setting
    if not settings:
        raise SweepError(f"no run tag matches the pattern {pattern!r}")
    return Grid(names, settings, tuple(excluded))


def grid_from_mapping(text: str, tags: Iterable[str], *, name: str = "mapping") -> Grid:
    """A grid from CSV or TSV text with a header ``tag,<param>...``; every mapped tag must be a
    run; runs not in the mapping are excluded. Errors name the line."""
    if len(text.encode()) > MAX_MAPPING_BYTES:
        raise SweepError(f"{name}: larger than {MAX_MAPPING_BYTES:,} bytes")
    lines = text.splitlines()
    if not lines:
        raise SweepError(f"{name}: empty; expected a header 'tag,<parameter>...'")
    delimiter = "\t" if "\t" in lines[0] else ","
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    header = [h.strip() for h in rows[0]]
    if len(header) < 2 or header[0] != "tag" or len(set(header)) != len(header):
        raise SweepError(f"{name}:1: expected a header 'tag,<parameter>...'; got {lines[0]!r}")
    known = set(tags)
    settings: dict[str, Setting] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise SweepError(f"{name}:{number}: expected {len(header)} fields; got {len(row)}")
        tag = row[0].strip()
        if tag not in known:
            raise SweepError(f"{name}:{number}: {tag!r} is not a run")
        if tag in settings:
            raise SweepError(f"{name}:{number}: run {tag!r} is mapped twice")
        settings[tag] = {h: _value(v.strip()) for h, v in zip(header[1:], row[1:], strict=True)}
    if not settings:
        raise SweepError(f"{name}: maps no run")
    excluded = tuple(t for t in tags if t not in settings)
    return Grid(tuple(header[1:]), settings, excluded)


# ------------------------------------------------------------------------- cross-validation


@dataclass(frozen=True)
class Fold:
    index: int
    test_topics: tuple[str, ...]
    chosen: str  # the tag with the best training mean
    training_score: float
    test_score: float  # the chosen setting's mean on the held-out topics
    best_test_score: float  # the best setting's mean on the held-out topics


@dataclass(frozen=True)
class CrossValidation:
    k: int
    seed: int
    n_topics: int
    folds: tuple[Fold, ...]
    cv_score: float  # mean over all topics of the held-out scores of the chosen settings
    best_tag: str  # best in hindsight: best mean over all topics
    best_score: float
    overfitting_gap: float  # best_score - cv_score

    @property
    def chosen(self) -> dict[str, int]:
        """How many folds chose each setting."""
        counts: dict[str, int] = {}
        for fold in self.folds:
            counts[fold.chosen] = counts.get(fold.chosen, 0) + 1
        return counts


def _matrix(scores: Mapping[str, Mapping[str, float]]) -> tuple[list[str], list[str], np.ndarray]:
    tags = sorted(scores)
    if len(tags) < 1:
        raise SweepError("no settings to cross-validate")
    topic_sets = [set(scores[t]) for t in tags]
    topics = sorted(set.intersection(*topic_sets))
    if set.union(*topic_sets) != set(topics):
        raise SweepError(
            "every setting needs a score on the same topics (evaluate over the common topics)"
        )
    return tags, topics, np.array([[scores[t][q] for q in topics] for t in tags], dtype=float)


def best_in_hindsight(scores: Mapping[str, Mapping[str, float]]) -> tuple[str, float]:
    """The setting with the best mean over all topics (ties: first tag in sorted order)."""
    tags, _, matrix = _matrix(scores)
    means = matrix.mean(1)
    best = int(np.argmax(means))
    return tags[best], float(means[best])


def cross_validate(
    scores: Mapping[str, Mapping[str, float]], *, k: int = 5, seed: int = 0
) -> CrossValidation:
    """K-fold cross-validation over topics of the choice of setting; ``scores`` maps a tag to
    its per-topic scores (all tags on the same topics)."""
    tags, topics, matrix = _matrix(scores)
    if not 2 <= k <= len(topics):
        raise SweepError(f"K must be between 2 and the number of topics ({len(topics)}); got {k}")
    order = np.random.default_rng(seed).permutation(len(topics))
    folds = []
    held_out = np.empty(len(topics))
    for index, test in enumerate(np.array_split(order, k)):
        train = np.setdiff1d(order, test)
        training_means = matrix[:, train].mean(1)
        chosen = int(np.argmax(training_means))
        held_out[test] = matrix[chosen, test]
        folds.append(
            Fold(
                index + 1,
                tuple(topics[i] for i in sorted(test)),
                tags[chosen],
                float(training_means[chosen]),
                float(matrix[chosen, test].mean()),
                float(matrix[:, test].mean(1).max()),
            )
        )
    best_tag, best_score = best_in_hindsight(scores)
    cv_score = float(held_out.mean())
    return CrossValidation(
        k, seed, len(topics), tuple(folds), cv_score, best_tag, best_score, best_score - cv_score
    )


def heat_matrix(
    grid: Grid, means: Mapping[str, float], x: str, y: str
) -> tuple[list[Value], list[Value], list[list[float]]]:
    """(x values, y values, rows[y][x] of the mean; NaN where the grid has no run). Settings
    that differ in a third parameter must not share a cell."""
    for parameter in (x, y):
        if parameter not in grid.parameters:
            raise SweepError(f"{parameter!r} is not a parameter of the grid {grid.parameters}")
    xs, ys = grid.values(x), grid.values(y)
    cells: dict[tuple[Value, Value], str] = {}
    for tag, setting in grid.settings.items():
        key = (setting[x], setting[y])
        if key in cells:
            raise SweepError(f"runs {cells[key]!r} and {tag!r} share the cell {x}, {y} = {key}")
        cells[key] = tag
    rows = [
        [float(means[cells[(vx, vy)]]) if (vx, vy) in cells else math.nan for vx in xs] for vy in ys
    ]
    return xs, ys, rows


@dataclass(frozen=True)
class SweepResult:
    """A grid's mean scores over the common topics and its cross-validation."""

    measure: str
    grid: Grid
    means: dict[str, float]  # tag -> mean over the common topics
    topics: tuple[str, ...]  # the common topics every setting was scored on
    dropped_topics: tuple[str, ...]  # topics some setting lacks (left out, and said so)
    cv: CrossValidation

    def heat(
        self, x: str | None = None, y: str | None = None
    ) -> tuple[list[Value], list[Value], list[list[float]]]:
        """heat_matrix over the first two parameters (or x, y)."""
        names = self.grid.parameters
        return heat_matrix(self.grid, self.means, x or names[0], y or names[1])


def sweep(
    grid: Grid,
    scores: Mapping[str, Mapping[str, float]],
    *,
    measure: str,
    k: int = 5,
    seed: int = 0,
) -> SweepResult:
    """Mean of ``measure`` per setting over the topics every setting has, and K-fold
    cross-validation of the choice of setting over those topics."""
    missing = [t for t in grid.settings if t not in scores]
    if missing:
        raise SweepError(f"no scores for the runs {', '.join(missing)}")
    topic_sets = [set(scores[t]) for t in grid.settings]
    common = set.intersection(*topic_sets)
    dropped = tuple(sorted(set.union(*topic_sets) - common))
    restricted = {t: {q: scores[t][q] for q in common} for t in grid.settings}
    means = {t: float(np.mean(list(v.values()))) if v else math.nan for t, v in restricted.items()}
    cv = cross_validate(restricted, k=k, seed=seed)
    return SweepResult(measure, grid, means, tuple(sorted(common)), dropped, cv)
