"""The questions of a machine judging job (`services.machine_jobs`): the documents still to
judge, read in chunks and prepared as prompts (documents sharing a cache key asked once, as in
`judge_prompt.cache_key`), labels copied from the cache or recorded as "cannot judge" without
asking, and an answer turned into the values of its label row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import judge_prompt
from workbench.judge_client import Reply
from workbench.services import machine_judges
from workbench.store import Store
from workbench.store.models import Campaign, Document, MachineJudge, MachineJudgement

CHUNK = 64  # documents read and prepared at a time

Key = tuple[str, str]
"""A document of a topic: (qid, docno)."""


@dataclass
class Task:
    """One question: its documents (several when duplicates share a cache key)."""

    keys: list[Key]
    cache_key: str
    prompt: judge_prompt.Prompt | None
    flags: tuple[str, ...]
    problem: str | None = None  # cannot judge without asking (no text)


@dataclass(frozen=True)
class JobView:
    """What the threads and row builders need of the job (no ORM object across threads)."""

    id: int
    judge_id: int
    campaign_id: int
    template_hash: str


def prepared_tasks(
    session: Session,
    campaign: Campaign,
    judge: MachineJudge,
    keys: Sequence[Key],
    topics: dict[str, judge_prompt.Topic],
) -> list[Task]:
    """The questions for `keys`, duplicates (same cache key) merged into one."""
    docnos = sorted({docno for _, docno in keys})
    documents = {
        docno: judge_prompt.Document(title or "", text or "")
        for docno, title, text in session.execute(
            select(Document.docno, Document.title, Document.text).where(
                Document.campaign_id == campaign.id, Document.docno.in_(docnos)
            )
        )
    }
    params = {**machine_judges.parameters({}), **judge.params}
    answer = machine_judges.answer_parameters(params)
    grades = machine_judges.scale(campaign)
    tasks: dict[str, Task] = {}
    for qid, docno in keys:
        if qid not in topics:
            topics[qid] = machine_judges.topic_of(session, campaign, qid)
        topic, document = topics[qid], documents.get(docno)
        if document is None or not (document.text or document.title):
            missing = f"missing:{qid}:{docno}"
            tasks[missing] = Task(
                [(qid, docno)],
                missing,
                None,
                (),
                "the document's text is not loaded in the campaign",
            )
            continue
        key = judge_prompt.cache_key(judge.model, judge.template_hash, answer, topic, document)
        if key in tasks:
            tasks[key].keys.append((qid, docno))
            continue
        prompt = judge_prompt.render(
            judge.template, topic, document, grades, max_chars=int(params["max_document_chars"])
        )
        flags = prompt.flags + judge_prompt.suspicion(document, topic).flags
        tasks[key] = Task([(qid, docno)], key, prompt, flags)
    return list(tasks.values())


def cached_labels(
    session: Session, campaign_id: int, keys: Sequence[str]
) -> dict[str, MachineJudgement]:
    """An answered label of the campaign for each cache key that has one."""
    if not keys:
        return {}
    rows = session.scalars(
        select(MachineJudgement).where(
            MachineJudgement.campaign_id == campaign_id,
            MachineJudgement.cache_key.in_(list(keys)),
            MachineJudgement.answered.is_(True),
        )
    )
    found: dict[str, MachineJudgement] = {}
    for row in rows:
        found.setdefault(row.cache_key, row)
    return found


def label_row(job: JobView, task: Task, key: Key, **values: Any) -> dict[str, Any]:
    """The MachineJudgement values of one document of a question, with its provenance."""
    return {
        "judge_id": job.judge_id,
        "campaign_id": job.campaign_id,
        "qid": key[0],
        "docno": key[1],
        "cache_key": task.cache_key,
        "template_hash": job.template_hash,
        "job_id": job.id,
        "flags": list(task.flags),
        **values,
    }


def answer_values(reply: Reply, grades: Sequence[int], params: dict[str, Any]) -> dict[str, Any]:
    """A reply's label values: the parsed grade (or why it cannot judge), tokens, latency,
    cost = (prompt tokens x price_input + completion tokens x price_output) / 10^6, and the
    grade probabilities from the token log-probabilities (certainty: the chosen grade's)."""
    parsed = judge_prompt.parse_answer(reply.text, grades, reply.finish_reason)
    probabilities = judge_prompt.grade_probabilities(reply.logprobs, grades)
    cost = (
        reply.prompt_tokens * float(params["price_input"])
        + reply.completion_tokens * float(params["price_output"])
    ) / 1e6
    return {
        "grade": parsed.grade,
        "cannot_judge": parsed.cannot_judge,
        "reason": parsed.reason,
        "raw_answer": reply.text,
        "answered": True,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_ms": reply.latency_ms,
        "cost": cost,
        "certainty": probabilities.get(parsed.grade) if parsed.grade is not None else None,
        "probabilities": {str(g): p for g, p in probabilities.items()},
        "attempts": reply.attempts,
        "cached": False,
    }


def unanswered_ids(store: Store, judge_id: int) -> dict[Key, int]:
    """The ids of the judge's labels that the endpoint never answered (asked again)."""
    with store.read_session() as session:
        rows = session.execute(
            select(MachineJudgement.qid, MachineJudgement.docno, MachineJudgement.id).where(
                MachineJudgement.judge_id == judge_id, MachineJudgement.answered.is_(False)
            )
        )
        return {(qid, docno): row_id for qid, docno, row_id in rows}


@dataclass
class Chunks:
    """The documents still to judge, read CHUNK at a time."""

    keys: list[Key]
    position: int = 0

    def exhausted(self) -> bool:
        return self.position >= len(self.keys)


def next_chunk(
    store: Store,
    chunks: Chunks,
    campaign: Campaign,
    judge: MachineJudge,
    topics: dict[str, judge_prompt.Topic],
    record: Callable[..., None],
) -> list[Task]:
    """The next chunk's questions to ask; those answered from the cache, and documents that
    cannot be asked about, are recorded at once."""
    while not chunks.exhausted():
        keys = chunks.keys[chunks.position : chunks.position + CHUNK]
        chunks.position += len(keys)
        with store.read_session() as session:
            campaign_row = session.get(Campaign, campaign.id)
            judge_row = session.get(MachineJudge, judge.id)
            assert campaign_row is not None and judge_row is not None
            tasks = prepared_tasks(session, campaign_row, judge_row, keys, topics)
            cached = cached_labels(session, campaign.id, [t.cache_key for t in tasks if t.prompt])
            to_ask = []
            for task in tasks:
                if task.problem is not None:
                    record(task, {"grade": None, "cannot_judge": task.problem, "answered": True,
                                  "attempts": 0, "cached": False})  # fmt: skip
                elif task.cache_key in cached:
                    hit = cached[task.cache_key]
                    record(task, {
                        "grade": hit.grade, "cannot_judge": hit.cannot_judge,
                        "reason": hit.reason, "raw_answer": hit.raw_answer, "answered": True,
                        "certainty": hit.certainty, "probabilities": dict(hit.probabilities),
                    }, cached=True)  # fmt: skip
                else:
                    to_ask.append(task)
        if to_ask:
            return to_ask
    return []
