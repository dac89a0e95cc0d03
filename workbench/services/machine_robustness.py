"""A machine judge's robustness measured on a campaign (`workbench.judge_robustness`): base
documents are pooled documents the humans call not relevant (else those the judge itself
graded lowest), `per_topic` per topic, attacked in every way and graded by the judge's
endpoint with its template and settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import judge_robustness
from workbench.judge_client import ChatClient
from workbench.relevance import is_relevant
from workbench.services import machine_judges
from workbench.services.errors import ServiceError
from workbench.services.pools import qid_key
from workbench.services.qrels import qrels_labels
from workbench.store.models import Campaign, Document

Key = tuple[str, str]


def robustness(
    session: Session,
    campaign: Campaign,
    judge_name: str,
    *,
    per_topic: int = 2,
    neutralise: bool = True,
    concurrency: int = 4,
    client_factory: Callable[[Any], Any] = ChatClient,
) -> list[judge_robustness.AttackResult]:
    """The attacks' results (see `judge_robustness`) for the judge."""
    judge = machine_judges.get_judge(session, campaign, judge_name)
    level = campaign.relevance_level
    try:
        human, _ = qrels_labels(session, campaign)
    except ServiceError:
        human = {}
    candidates = sorted((k for k, g in human.items() if not is_relevant(g, level)),
                        key=lambda k: (qid_key(k[0]), k[1]))  # fmt: skip
    if not candidates:
        machine = machine_judges.machine_labels(session, judge)
        lowest = min(machine.values(), default=None)
        candidates = sorted((k for k, g in machine.items() if g == lowest),
                            key=lambda k: (qid_key(k[0]), k[1]))  # fmt: skip
    chosen: list[Key] = []
    counts: dict[str, int] = {}
    for key in candidates:
        if counts.get(key[0], 0) < per_topic:
            chosen.append(key)
            counts[key[0]] = counts.get(key[0], 0) + 1
    texts = {
        docno: judge_robustness.Document(title or "", text or "")
        for docno, title, text in session.execute(
            select(Document.docno, Document.title, Document.text).where(
                Document.campaign_id == campaign.id,
                Document.docno.in_(sorted({d for _, d in chosen})),
            )
        )
    }
    bases = {k: texts[k[1]] for k in chosen if k[1] in texts and texts[k[1]].text}
    if not bases:
        raise ServiceError(
            "no document to attack: judge some documents (humans or the machine) first, and "
            "load the documents' text"
        )
    topics = {qid: machine_judges.topic_of(session, campaign, qid) for qid, _ in bases}
    scale = machine_judges.scale(campaign)
    top = max(value for value, _ in scale)
    cases = judge_robustness.attack_cases(bases, topics, top)
    params = {**machine_judges.parameters({}), **judge.params}
    client = client_factory(machine_judges.endpoint_of(judge))
    try:
        grades = judge_robustness.grade_cases(
            client,
            judge.template,
            scale,
            params,
            cases,
            neutralise=neutralise,
            concurrency=concurrency,
        )
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()
    return judge_robustness.summarise(cases, grades, top)


def robustness_table(results: list[judge_robustness.AttackResult], judge: str) -> Any:
    from workbench.tabular import Table, cells

    return Table(
        ["Attack", "Documents", "Inflated", "Top grade", "Flagged", "Cannot judge"],
        [cells(r.attack, r.cases, r.inflated, r.top_grade, r.flagged, r.cannot_judge)
         for r in results],
        caption=f"{judge} on non-relevant documents and their attacked copies",
        label="machine-robustness", digits=3,
        notes=["Inflated: graded above the same document without the attack; Flagged: marked "
               "suspicious (instructions to the judge, keyword stuffing)."],
    )  # fmt: skip
