"""Machine judges of a campaign: the prompt template, the judges and their labels.

A machine judge is a judge of its own, `machine:<model>` (or another name that starts with
`machine:`): its labels live in their own table (`MachineJudgement`), never in the judgement
log of the assessors, so that they never overwrite a human judgement and no assessor page
reads them. The endpoint's key is taken from the environment variable the judge names
(default WORKBENCH_LLM_API_KEY) or, when given, from the judge's settings in the store; it is
never shown, exported or written to a log (`JudgeInfo` has no key). Base URL and model
default to WORKBENCH_LLM_BASE_URL and WORKBENCH_LLM_MODEL.

`PARAMETERS` is the one list of a judge's settings: the CLI options and the web form are
generated from it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import judge_prompt, limits
from workbench.judge_client import Endpoint
from workbench.services.archive import refuse_if_archived
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import (
    Campaign,
    MachineJudge,
    MachineJudgement,
    MachineTemplate,
    Topic,
    utcnow,
)

PREFIX = "machine:"
BASE_URL_ENV = "WORKBENCH_LLM_BASE_URL"
MODEL_ENV = "WORKBENCH_LLM_MODEL"
KEY_ENV = "WORKBENCH_LLM_API_KEY"


@dataclass(frozen=True)
class Parameter:
    """A judge setting: `name` (CLI `--name` with dashes, the form's field), kind, default,
    bounds and help. `answer` settings change what the model answers (they enter the cache
    key); the others only how it is asked or priced."""

    name: str
    kind: Literal["float", "int"]
    default: float | int | None
    help: str
    minimum: float = 0.0
    maximum: float = 1e9
    answer: bool = False


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("temperature", "float", 0.0, "Sampling temperature.", 0.0, 2.0, answer=True),
    Parameter("max_tokens", "int", 200, "Longest answer, in tokens.", 1, 100_000, answer=True),
    Parameter("seed", "int", 0, "Sampling seed sent to the endpoint.", 0, 2**31 - 1, answer=True),
    Parameter(
        "top_logprobs",
        "int",
        5,
        "Token alternatives to ask log-probabilities for (0: none; some servers refuse them).",
        0,
        20,
        answer=True,
    ),
    Parameter(
        "max_document_chars",
        "int",
        judge_prompt.MAX_DOCUMENT_CHARS,
        "Documents are cut after this many characters (the label is flagged 'truncated').",
        100,
        10_000_000,
        answer=True,
    ),
    Parameter("timeout_s", "float", 60.0, "Seconds per attempt.", 0.1, 3600.0),
    Parameter("attempts", "int", 5, "Attempts per question (429, 5xx, timeouts).", 1, 100),
    Parameter("backoff_s", "float", 1.0, "First back-off delay, doubled per retry.", 0.0, 600.0),
    Parameter("backoff_cap_s", "float", 60.0, "Longest back-off delay.", 0.0, 3600.0),
    Parameter("price_input", "float", 0.0, "Price per million prompt tokens.", 0.0, 1e6),
    Parameter("price_output", "float", 0.0, "Price per million answer tokens.", 0.0, 1e6),
)
PARAMETER = {p.name: p for p in PARAMETERS}


def parameters(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter, from `values` (text or numbers; None or '' for the default), checked
    against its bounds; ServiceError names the bad one."""
    unknown = set(values) - set(PARAMETER)
    if unknown:
        raise ServiceError(f"unknown judge setting(s): {', '.join(sorted(unknown))}")
    out: dict[str, Any] = {}
    for p in PARAMETERS:
        raw = values.get(p.name)
        if raw is None or raw == "":
            out[p.name] = p.default
            continue
        try:
            value = float(raw) if p.kind == "float" else int(str(raw).strip())
        except (TypeError, ValueError):
            expected = "an integer" if p.kind == "int" else "a number"
            raise ServiceError(f"{p.name}: expected {expected}, got {str(raw)[:40]!r}") from None
        if not p.minimum <= value <= p.maximum:
            raise ServiceError(f"{p.name}: {value} is outside {p.minimum:g}..{p.maximum:g}")
        out[p.name] = value
    return out


def answer_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that shape the answer (part of the cache key)."""
    return {p.name: params.get(p.name, p.default) for p in PARAMETERS if p.answer}


# ------------------------------------------------------------------------------ template


def campaign_template(session: Session, campaign: Campaign) -> str:
    """The campaign's template, or the default one."""
    row = session.get(MachineTemplate, campaign.id)
    return row.template if row is not None else judge_prompt.DEFAULT_TEMPLATE


def set_template(session: Session, campaign: Campaign, template: str | None) -> str:
    """Set the campaign's template (None or blank: back to the default); refused with the
    reason when it cannot be used. Judges made before keep their own copy."""
    refuse_if_archived(campaign)
    row = session.get(MachineTemplate, campaign.id)
    if template is None or not template.strip():
        if row is not None:
            session.delete(row)
        return judge_prompt.DEFAULT_TEMPLATE
    template = template.replace("\r\n", "\n")
    if len(template) > limits.DESCRIPTION:
        raise ServiceError(limits.length_error("template", template, limits.DESCRIPTION))
    try:
        judge_prompt.check_template(template)
    except judge_prompt.TemplateError as error:
        raise ServiceError(str(error)) from None
    if row is None:
        session.add(MachineTemplate(campaign_id=campaign.id, template=template))
    else:
        row.template, row.updated_at = template, utcnow()
    return template


# -------------------------------------------------------------------------------- judges


@dataclass(frozen=True)
class JudgeInfo:
    """A judge as pages and commands show it (never its key)."""

    id: int
    name: str
    model: str
    base_url: str
    key_source: str  # "environment WORKBENCH_LLM_API_KEY", "stored in the campaign", "none"
    template_hash: str
    params: dict[str, Any]
    created_at: dt.datetime
    labels: int = 0
    cannot_judge: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "created_at": self.created_at.isoformat()}


def add_judge(
    session: Session,
    campaign: Campaign,
    *,
    model: str | None = None,
    name: str | None = None,
    base_url: str | None = None,
    api_key_env: str = "",
    api_key: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> MachineJudge:
    """A new machine judge of the campaign with the campaign's current template."""
    refuse_if_archived(campaign)
    model = (model or os.environ.get(MODEL_ENV, "")).strip()
    if not model:
        raise ServiceError(f"name the model (or set {MODEL_ENV})")
    if len(model) > limits.MACHINE_MODEL:
        raise ServiceError(limits.length_error("model", model, limits.MACHINE_MODEL))
    name = (name or f"{PREFIX}{model}").strip()
    if not name.startswith(PREFIX) or name == PREFIX:
        raise ServiceError(f"a machine judge's name starts with {PREFIX!r}: got {name!r}")
    if len(name) > limits.MACHINE_JUDGE_NAME:
        raise ServiceError(limits.length_error("judge name", name, limits.MACHINE_JUDGE_NAME))
    base_url = (base_url or "").strip()
    if base_url and not base_url.startswith(("http://", "https://")):
        raise ServiceError(f"base URL {base_url!r}: expected http:// or https://")
    if len(base_url) > limits.FILE_NAME:
        raise ServiceError(limits.length_error("base URL", base_url, limits.FILE_NAME))
    if api_key_env and not api_key_env.replace("_", "").isalnum():
        raise ServiceError(f"{api_key_env!r} is not an environment variable name")
    exists = session.scalar(
        select(MachineJudge.id).where(
            MachineJudge.campaign_id == campaign.id, MachineJudge.name == name
        )
    )
    if exists is not None:
        raise ServiceError(
            f"campaign {campaign.name!r} already has a judge {name!r}: name this one "
            f"differently (e.g. {name}@2)"
        )
    template = campaign_template(session, campaign)
    judge = MachineJudge(
        campaign_id=campaign.id,
        name=name,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        api_key=api_key or None,
        template=template,
        template_hash=judge_prompt.template_hash(template),
        params=parameters(settings or {}),
    )
    session.add(judge)
    session.flush()
    return judge


def get_judge(session: Session, campaign: Campaign, name: str) -> MachineJudge:
    """The campaign's judge of that name; NotFound lists the judges there are."""
    judge = session.scalar(
        select(MachineJudge).where(
            MachineJudge.campaign_id == campaign.id, MachineJudge.name == name
        )
    )
    if judge is None:
        names = judge_names(session, campaign)
        raise NotFound(
            f"campaign {campaign.name!r} has no machine judge {name!r}"
            + (f"; its judges: {', '.join(names)}" if names else "; add one first")
        )
    return judge


def judge_names(session: Session, campaign: Campaign) -> list[str]:
    return list(
        session.scalars(
            select(MachineJudge.name)
            .where(MachineJudge.campaign_id == campaign.id)
            .order_by(MachineJudge.name)
        )
    )


def delete_judge(session: Session, campaign: Campaign, name: str) -> None:
    """Delete a judge with its labels and jobs (human judgements are never touched)."""
    refuse_if_archived(campaign)
    session.delete(get_judge(session, campaign, name))


def key_source(judge: MachineJudge) -> str:
    if judge.api_key:
        return "stored in the campaign"
    return f"environment {judge.api_key_env or KEY_ENV}"


def judge_info(session: Session, judge: MachineJudge) -> JudgeInfo:
    labels, cannot, prompt, completion, cost = session.execute(
        select(
            func.count(MachineJudgement.grade),
            func.count(MachineJudgement.cannot_judge),
            func.coalesce(func.sum(MachineJudgement.prompt_tokens), 0),
            func.coalesce(func.sum(MachineJudgement.completion_tokens), 0),
            func.coalesce(func.sum(MachineJudgement.cost), 0.0),
        ).where(MachineJudgement.judge_id == judge.id)
    ).one()
    return JudgeInfo(
        judge.id, judge.name, judge.model, judge.base_url or os.environ.get(BASE_URL_ENV, ""),
        key_source(judge), judge.template_hash, dict(judge.params), judge.created_at,
        labels, cannot, int(prompt), int(completion), float(cost),
    )  # fmt: skip


def judge_infos(session: Session, campaign: Campaign) -> list[JudgeInfo]:
    judges = session.scalars(
        select(MachineJudge)
        .where(MachineJudge.campaign_id == campaign.id)
        .order_by(MachineJudge.name)
    )
    return [judge_info(session, judge) for judge in judges]


def endpoint_of(judge: MachineJudge) -> Endpoint:
    """The judge's endpoint: its base URL (else $WORKBENCH_LLM_BASE_URL), model, key (stored,
    else the environment variable it names, else $WORKBENCH_LLM_API_KEY) and retry settings."""
    base_url = judge.base_url or os.environ.get(BASE_URL_ENV, "")
    if not base_url:
        raise ServiceError(
            f"judge {judge.name!r} has no base URL: give one (e.g. http://127.0.0.1:8000/v1 "
            f"for vLLM) or set {BASE_URL_ENV}"
        )
    key = judge.api_key or os.environ.get(judge.api_key_env or KEY_ENV, "")
    params = {**parameters({}), **judge.params}
    return Endpoint(
        base_url=base_url,
        model=judge.model,
        api_key=key,
        timeout_s=float(params["timeout_s"]),
        attempts=int(params["attempts"]),
        backoff_s=float(params["backoff_s"]),
        backoff_cap_s=float(params["backoff_cap_s"]),
    )


def scale(campaign: Campaign) -> list[tuple[int, str]]:
    return [(g.value, g.label) for g in campaign.grades]


def topic_of(session: Session, campaign: Campaign, qid: str) -> judge_prompt.Topic:
    topic = session.scalar(select(Topic).where(Topic.campaign_id == campaign.id, Topic.qid == qid))
    if topic is None:
        raise NotFound(f"campaign {campaign.name!r} has no topic {qid!r}")
    return judge_prompt.Topic(topic.title, topic.description, topic.narrative)


# -------------------------------------------------------------------------------- labels


def machine_labels(session: Session, judge: MachineJudge) -> dict[tuple[str, str], int]:
    """(qid, docno) -> the judge's grade (documents it could not judge left out)."""
    rows = session.execute(
        select(MachineJudgement.qid, MachineJudgement.docno, MachineJudgement.grade).where(
            MachineJudgement.judge_id == judge.id, MachineJudgement.grade.is_not(None)
        )
    )
    return {(qid, docno): grade for qid, docno, grade in rows if grade is not None}


@dataclass(frozen=True)
class MachineLabel:
    """A machine judgement with its provenance, as exports and pages show it."""

    judge: str
    model: str
    qid: str
    docno: str
    grade: int | None
    cannot_judge: str | None
    reason: str
    raw_answer: str
    certainty: float | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    cost: float
    attempts: int
    cached: bool
    flags: tuple[str, ...]
    template_hash: str
    parameters: str  # the judge's answer settings, as JSON
    created_at: dt.datetime


def machine_judgements(
    session: Session, campaign: Campaign, judge: MachineJudge | None = None
) -> list[MachineLabel]:
    """Every machine judgement of the campaign (or of one judge), oldest first."""
    query = (
        select(MachineJudgement, MachineJudge.name, MachineJudge.model, MachineJudge.params)
        .join(MachineJudge, MachineJudge.id == MachineJudgement.judge_id)
        .where(MachineJudgement.campaign_id == campaign.id)
        .order_by(MachineJudgement.id)
    )
    if judge is not None:
        query = query.where(MachineJudgement.judge_id == judge.id)
    return [
        MachineLabel(
            name,
            model,
            j.qid,
            j.docno,
            j.grade,
            j.cannot_judge,
            j.reason,
            j.raw_answer,
            j.certainty,
            j.prompt_tokens,
            j.completion_tokens,
            j.latency_ms,
            j.cost,
            j.attempts,
            j.cached,
            tuple(j.flags or ()),
            j.template_hash,
            json.dumps(answer_parameters({**parameters({}), **params}), sort_keys=True),
            j.created_at,
        )
        for j, name, model, params in session.execute(query)
    ]
