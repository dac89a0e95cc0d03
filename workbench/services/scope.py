"""Which pools a campaign's figures are about: completeness of its qrels, judging progress,
reusability (leave-one-out) and the pool the Assignments page offers first.

The default scope is the pools that have active assignments: the pools someone was asked to
judge. A pool built and never assigned (an experiment, or one not handed out yet) would
otherwise leave the final qrels "incomplete" forever, its documents unlabelled. When no pool
has an assignment (judgements made outside the app, a campaign judged by hand), every pool
that is not archived. Archived pools are never in scope: asking for one is refused. The scope
is named wherever a figure depends on it (`PoolScope.describe`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services.errors import ServiceError, found
from workbench.services.pools import get_pool
from workbench.store.models import Assignment, Campaign, Pool

DEFAULT_RULE = "the pools with assignments; archived pools never"
ALL_POOLS_RULE = "no pool has assignments: every pool that is not archived"


@dataclass(frozen=True)
class PoolScope:
    """The pools in scope: their numbers in the campaign (`numbers`), their store ids, and how
    they were chosen (`rule`: the default's rule, or "chosen")."""

    numbers: tuple[int, ...]
    ids: tuple[int, ...]
    rule: str

    @property
    def chosen(self) -> bool:
        return self.rule == "chosen"

    def describe(self) -> str:
        """'pool 1 (the pools with assignments; archived pools never)', 'pools 1, 3 (chosen)'."""
        if not self.numbers:
            return f"no pool ({self.rule})"
        word = "pool" if len(self.numbers) == 1 else "pools"
        return f"{word} {', '.join(map(str, self.numbers))} ({self.rule})"


def parse_pools(text: str | Iterable[str] | None) -> tuple[int, ...] | None:
    """Pool numbers from '1,2', '1 2' or several such texts; None when none is given."""
    if text is None:
        return None
    parts = [text] if isinstance(text, str) else list(text)
    words = [w for part in parts for w in re.split(r"[\s,]+", part.strip()) if w]
    if not words:
        return None
    numbers = []
    for word in words:
        if not (word.isascii() and word.isdigit()) or int(word) < 1 or len(word) > 9:
            raise ServiceError(f"pools must be pool numbers such as 1,2; got {word[:40]!r}")
        numbers.append(int(word))
    return tuple(sorted(set(numbers)))


def pool_scope(
    session: Session, campaign: Campaign, numbers: Sequence[int] | None = None
) -> PoolScope:
    """The pools numbered `numbers` (each must exist and not be archived), or the default."""
    pools = list(
        session.scalars(select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.number))
    )
    if numbers is not None:
        by_number = {p.number: p for p in pools}
        unknown = [n for n in numbers if n not in by_number]
        if unknown:
            raise ServiceError(
                f"campaign {campaign.name!r} has no pool {', '.join(map(str, unknown))}"
            )
        archived = [n for n in numbers if by_number[n].archived_at is not None]
        if archived:
            raise ServiceError(
                f"pool {', '.join(map(str, archived))} is archived: archived pools are never in "
                "scope (restore it first)"
            )
        chosen = [by_number[n] for n in sorted(set(numbers))]
        return PoolScope(tuple(p.number for p in chosen), tuple(p.id for p in chosen), "chosen")
    current = [p for p in pools if p.archived_at is None]
    assigned = set(
        session.scalars(
            select(Assignment.pool_id)
            .where(Assignment.campaign_id == campaign.id, Assignment.active.is_(True))
            .distinct()
        )
    )
    with_assignments = [p for p in current if p.id in assigned]
    if with_assignments:
        return PoolScope(
            tuple(p.number for p in with_assignments),
            tuple(p.id for p in with_assignments),
            DEFAULT_RULE,
        )
    return PoolScope(tuple(p.number for p in current), tuple(p.id for p in current), ALL_POOLS_RULE)


def default_assignment_pool(session: Session, campaign: Campaign) -> Pool | None:
    """The pool the Assignments page and `workbench assign` take when none is named: the
    newest pool of the default scope (the newest pool with assignments; when none has any,
    the newest pool that is not archived)."""
    scope = pool_scope(session, campaign)
    if not scope.ids:
        return None
    return session.get(Pool, scope.ids[-1])


def pool_to_assign(session: Session, campaign: Campaign, number: int | None) -> Pool:
    """The campaign's pool numbered `number` (NotFound if none such), else
    `default_assignment_pool`; a campaign without a pool is refused."""
    if number is not None:
        return get_pool(session, campaign, number)
    return found(default_assignment_pool(session, campaign), "build a pool before assigning topics")
