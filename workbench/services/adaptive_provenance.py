"""What is said of adaptive pools wherever their judgements are used: each pool's settings in
words, the warning an evaluation must carry, and each pool's provenance (method, budgets,
stopped topics, reserved sample) that qrels exports, judgement logs and reports record.

The pools themselves and their judging are `services.adaptive_pools`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services import pools
from workbench.services.adaptive_pools import settings_of
from workbench.store.models import AdaptiveTopic, Campaign, Pool


def evaluation_warning(session: Session, campaign: Campaign) -> str | None:
    """What an evaluation of the campaign must say when one of its pools is adaptive."""
    adaptive_ids = [
        p.number
        for p in session.scalars(
            select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.number)
        )
        if settings_of(p) is not None
    ]
    if not adaptive_ids:
        return None
    return (
        f"pool(s) {', '.join(map(str, adaptive_ids))} judged adaptively: the pooled documents "
        "left unjudged are not a random sample, so measures that count them as non-relevant "
        "favour the runs the method followed, and bpref and infAP are biased too (infAP "
        "assumes a uniform sample); with a reserved sample, `workbench estimate` gives "
        "unbiased estimates (statAP, xinfAP)"
    )


@dataclass(frozen=True)
class Provenance:
    """How an adaptive pool chose what was judged: what exported qrels must record."""

    pool: int
    method: str  # the adaptive method (`workbench.adaptive.METHODS`)
    budget: int  # the pool's budget per topic
    raised: dict[str, int]  # qid -> budget, for the topics whose budget differs
    stopped: tuple[str, ...]  # topics the organiser stopped
    sample_share: float = 0.0  # of the budget, for the reserved random sample

    def describe(self) -> str:
        """'pool 3 judged adaptively: method mm, budget 200 judgements per topic ...'."""
        text = (
            f"pool {self.pool} judged adaptively: method {self.method}, budget "
            f"{self.budget} judgements per topic"
        )
        if self.raised:
            text += " (" + ", ".join(f"topic {q}: {b}" for q, b in self.raised.items()) + ")"
        if self.stopped:
            text += f"; stopped early: topic(s) {', '.join(self.stopped)}"
        if self.sample_share:
            text += (
                f"; {self.sample_share:.0%} of the budget went to a simple random sample of "
                "each topic's pool, judged first"
            )
        return text


def provenance(session: Session, campaign: Campaign) -> list[Provenance]:
    """The method and budgets of each adaptive pool of the campaign, oldest pool first."""
    found = []
    for pool in session.scalars(
        select(Pool).where(Pool.campaign_id == campaign.id).order_by(Pool.id)
    ):
        settings = settings_of(pool)
        if settings is None:
            continue
        topics = sorted(
            session.scalars(select(AdaptiveTopic).where(AdaptiveTopic.pool_id == pool.id)),
            key=lambda t: pools.qid_key(t.qid),
        )
        found.append(
            Provenance(
                pool=pool.id,
                method=settings.method,
                budget=settings.budget,
                raised={t.qid: t.budget for t in topics if t.budget != settings.budget},
                stopped=tuple(t.qid for t in topics if t.stopped),
                sample_share=settings.sample_share,
            )
        )
    return found


def unjudged_notes(
    session: Session, campaign: Campaign, pools: Collection[int] | None = None
) -> tuple[str, ...]:
    """What qrels of a campaign judged adaptively must say (the messages of a qrels export,
    the notes of a report): each adaptive pool's method and budget, and that its unjudged
    documents are not a random sample. `pools`: only these pool ids (default: every one)."""
    return tuple(
        f"{p.describe()}; the pooled documents left unjudged are not a random sample"
        for p in provenance(session, campaign)
        if pools is None or p.pool in pools
    )


def export_header(session: Session, campaign: Campaign) -> str:
    """The `#` comment lines that open judgement logs of a campaign judged adaptively (''
    otherwise): `unjudged_notes` as comments."""
    return "".join(f"# ADAPTIVE {note}.\n" for note in unjudged_notes(session, campaign))


def describe_settings(pool: Pool) -> str:
    """'adaptive mm, budget 200 per topic, batch 5, 20 % to other judges' (or ''), with the
    reserved sample and the stopping rule when the pool has them."""
    settings = settings_of(pool)
    if settings is None:
        return ""
    text = (
        f"adaptive {settings.method}, budget {settings.budget} per topic, batch "
        f"{settings.batch}, {math.floor(100 * settings.secondary_share)} % to other judges"
    )
    if settings.sample_share:
        text += f", a random sample of {settings.sample_share:.0%} of the budget reserved"
    if settings.stop_rule:
        text += (
            f", stopping rule {settings.stop_rule} (recall {settings.recall_target:g} at "
            f"{100 * settings.confidence:g} %"
            + (", stops topics by itself)" if settings.auto_stop else ")")
        )
    return text
