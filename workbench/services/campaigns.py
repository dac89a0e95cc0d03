"""Campaigns and their relevance scales."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import judging_modes, limits
from workbench.services.errors import ServiceError, found
from workbench.store.models import Campaign, Grade, PreferenceJudgement, Run, Topic

ScalePoint = tuple[int, str, str]  # (value, label, key)

DEFAULT_SCALE: list[ScalePoint] = [
    (0, "Not relevant", "0"),
    (1, "Relevant", "1"),
    (2, "Highly relevant", "2"),
]


def parse_scale(text: str) -> list[ScalePoint]:
    """'0=Not relevant,1=Relevant' or 'value:label:key' items -> [(value, label, key)], by value.

    The key defaults to the value's digits. Values and keys must be unique.
    """
    points: list[ScalePoint] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            value_text, _, label = item.partition("=")
            key = ""
        else:
            value_text, _, rest = item.partition(":")
            label, _, key = rest.partition(":")
        try:
            value = int(value_text.strip())
        except ValueError:
            raise ServiceError(
                f"bad scale item {item!r}: expected VALUE=LABEL or VALUE:LABEL:KEY "
                "with an integer value"
            ) from None
        label, key = label.strip(), key.strip() or str(value)
        if not label:
            raise ServiceError(f"bad scale item {item!r}: the grade needs a label")
        points.append((value, label, key))
    return _checked_scale(points)


# the judging and adjudication pages' own keys (static/judge.js, adjudicate.js): a grade
# cannot take one
NAVIGATION_KEYS = {
    "n": "next document",
    "p": "previous document",
    "s": "skip",
    "c": "cannot judge",
    "m": "comment",
    " ": "scroll",
    "ArrowLeft": "previous document",
    "ArrowRight": "next document",
    "ArrowUp": "scroll",
    "ArrowDown": "scroll",
    "PageUp": "scroll",
    "PageDown": "scroll",
    "Home": "scroll",
    "End": "scroll",
    "Enter": "save",
    "Escape": "leave a text field",
    "j": "next document to adjudicate",
    "k": "previous document to adjudicate",
    "z": "undo the last judgement",
    "t": "next topic",
    "e": "mark an evidence passage",
}


def _checked_scale(points: list[ScalePoint]) -> list[ScalePoint]:
    if len(points) < 2:
        raise ServiceError("a relevance scale needs at least two grades")
    values = [value for value, _, _ in points]
    keys = [key for _, _, key in points]
    if len(set(values)) != len(values):
        raise ServiceError(f"scale values must be unique; got {values}")
    if len(set(keys)) != len(keys):
        raise ServiceError(f"scale keys must be unique; got {keys}")
    if any(len(key) > limits.GRADE_KEY for key in keys):
        raise ServiceError(f"scale keys have at most {limits.GRADE_KEY} characters")
    clashes = [f"{key!r} ({NAVIGATION_KEYS[key]})" for key in keys if key in NAVIGATION_KEYS]
    if clashes:
        raise ServiceError(
            f"grade key(s) {', '.join(clashes)} are the judging or adjudication page's own "
            "keys; choose others, e.g. digits"
        )
    for _, label, key in points:
        if len(label) > limits.GRADE_LABEL:
            raise ServiceError(limits.length_error("grade label", label, limits.GRADE_LABEL))
        if not (label.isprintable() and key.isprintable()):
            raise ServiceError(f"grade labels and keys are printable text; got {label!r}")
    if any(abs(value) > limits.INT32_MAX for value in values):
        raise ServiceError(f"scale values are at most {limits.INT32_MAX}")
    if any(value < 0 for value in values):
        raise ServiceError("scale values must be non-negative (negative qrels values are reserved)")
    return sorted(points)


def create_campaign(
    session: Session,
    name: str,
    *,
    scale: str | list[ScalePoint] = DEFAULT_SCALE,
    relevance_level: int = 1,
    description: str = "",
) -> Campaign:
    """A new campaign with its scale; a grade >= relevance_level counts as relevant."""
    name = name.strip()
    if not name:
        raise ServiceError("a campaign needs a name")
    if len(name) > limits.CAMPAIGN_NAME:
        raise ServiceError(limits.length_error("campaign name", name, limits.CAMPAIGN_NAME))
    if not name.isprintable():
        raise ServiceError(f"a campaign name is one line of printable characters; got {name!r}")
    if len(description) > limits.DESCRIPTION or "\x00" in description:
        raise ServiceError(
            f"a description has at most {limits.DESCRIPTION} characters and no NUL character"
        )
    points = parse_scale(scale) if isinstance(scale, str) else _checked_scale(list(scale))
    if relevance_level not in {value for value, _, _ in points}:
        raise ServiceError(
            f"relevance level {relevance_level} is not a grade of the scale "
            f"{[value for value, _, _ in points]}"
        )
    if session.scalar(select(Campaign.id).where(Campaign.name == name)) is not None:
        raise ServiceError(f"a campaign named {name!r} already exists")
    campaign = Campaign(name=name, description=description, relevance_level=relevance_level)
    campaign.grades = [Grade(value=v, label=label, key=key) for v, label, key in points]
    session.add(campaign)
    session.flush()
    return campaign


def get_campaign(session: Session, name_or_id: str | int) -> Campaign:
    """The campaign of that name (or id); NotFound otherwise."""
    campaign = None
    if isinstance(name_or_id, str):
        campaign = session.scalar(select(Campaign).where(Campaign.name == name_or_id))
        as_id = name_or_id.isascii() and name_or_id.isdecimal() and len(name_or_id) <= 10
        if campaign is None and as_id and int(name_or_id) <= limits.INT32_MAX:
            campaign = session.get(Campaign, int(name_or_id))
    else:
        campaign = session.get(Campaign, name_or_id)
    return found(campaign, f"no campaign {name_or_id!r}")


def list_campaigns(session: Session, *, archived: bool = False) -> list[Campaign]:
    """The campaigns by name: the current ones, or (archived=True) the archived ones."""
    hidden = Campaign.archived_at.is_not(None) if archived else Campaign.archived_at.is_(None)
    return list(session.scalars(select(Campaign).where(hidden).order_by(Campaign.name)))


@dataclass(frozen=True)
class GradeInfo:
    value: int
    label: str
    key: str


@dataclass(frozen=True)
class CampaignInfo:
    """What the pages show of a campaign (read in its session, rendered after it closed)."""

    id: int
    name: str
    description: str
    relevance_level: int
    count_withdrawn: bool
    guidelines: str
    archived_at: dt.datetime | None
    grades: tuple[GradeInfo, ...]
    evidence: bool = False
    judging_mode: str = "document"
    judging_options: tuple[tuple[str, int | str], ...] = ()

    def judging(self) -> str:
        """How assessors judge, as the pages say it."""
        mode = judging_modes.JUDGING_MODES[self.judging_mode]
        declared = {o.name: o for o in mode.options}
        chosen = ", ".join(f"{declared[k].label.lower()} {v}" for k, v in self.judging_options)
        text = mode.label + (f" ({chosen})" if chosen else "")
        return text + ("; assessors mark evidence passages" if self.evidence else "")


def campaign_info(campaign: Campaign) -> CampaignInfo:
    return CampaignInfo(
        id=campaign.id,
        name=campaign.name,
        description=campaign.description,
        relevance_level=campaign.relevance_level,
        count_withdrawn=campaign.count_withdrawn,
        guidelines=campaign.guidelines,
        archived_at=campaign.archived_at,
        grades=tuple(GradeInfo(g.value, g.label, g.key) for g in campaign.grades),
        evidence=campaign.evidence,
        judging_mode=campaign.judging_mode,
        judging_options=tuple(sorted((campaign.judging_options or {}).items())),
    )


@dataclass(frozen=True)
class CampaignRow:
    """A line of the campaigns list: the campaign and its numbers of topics and runs."""

    campaign: CampaignInfo
    topics: int
    runs: int


def count_in(session: Session, model: Any, campaign_id: int) -> int:
    """The number of rows of `model` (a table with a campaign_id) in the campaign."""
    return session.scalar(select(func.count()).where(model.campaign_id == campaign_id)) or 0


def campaign_infos(session: Session, *, archived: bool = False) -> list[CampaignInfo]:
    """`list_campaigns` as the pages show them."""
    return [campaign_info(c) for c in list_campaigns(session, archived=archived)]


def campaign_rows(session: Session) -> list[CampaignRow]:
    """The current campaigns by name, with their numbers of topics and runs."""
    return [
        CampaignRow(campaign_info(c), count_in(session, Topic, c.id), count_in(session, Run, c.id))
        for c in list_campaigns(session)
    ]


def scale_of(campaign: Campaign) -> list[dict[str, int | str]]:
    """The campaign's relevance scale as the judging page and the API show it."""
    return [{"value": g.value, "label": g.label, "key": g.key} for g in campaign.grades]


def set_count_withdrawn(campaign: Campaign, count: bool) -> None:
    """Whether the judgements of withdrawn assignments count in agreement, adjudication and
    qrels (they always stay in the judgement log)."""
    campaign.count_withdrawn = count


def set_judging(
    session: Session,
    campaign: Campaign,
    *,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    evidence: bool | None = None,
) -> None:
    """Set how the campaign's assessors judge (`judging_modes.JUDGING_MODES`, the mode's
    options checked; those not given kept while the mode stays, else at their defaults) and
    whether they mark evidence passages; None keeps a setting. The pairs of a pairwise
    campaign are not changed once preferences have been judged (their answers would name
    pairs no assignment shows)."""
    chosen_mode = campaign.judging_mode if mode is None else mode
    kept = (campaign.judging_options or {}) if chosen_mode == campaign.judging_mode else {}
    try:
        chosen = judging_modes.checked_options(chosen_mode, {**kept, **(options or {})})
    except ValueError as error:
        raise ServiceError(str(error)) from None
    changed = chosen_mode != campaign.judging_mode or chosen != (campaign.judging_options or {})
    judged = session.scalar(
        select(PreferenceJudgement.id)
        .where(PreferenceJudgement.campaign_id == campaign.id)
        .limit(1)
    )
    if changed and campaign.judging_mode == "pairwise" and judged is not None:
        raise ServiceError(
            f"campaign {campaign.name!r} has pairwise preferences already: its pairs stay as "
            "they are"
        )
    campaign.judging_mode, campaign.judging_options = chosen_mode, chosen
    if evidence is not None:
        campaign.evidence = evidence
