"""Imports of qrels files into a campaign, each a named QrelsSet."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from workbench import limits, trec
from workbench.services import changes
from workbench.services.errors import ServiceError
from workbench.services.import_steps import (
    ImportReport,
    PathLike,
)
from workbench.services.topics import campaign_qids, listed
from workbench.store.models import (
    Campaign,
    QrelsEntry,
    QrelsSet,
)


@dataclass(frozen=True)
class PreparedQrels:
    """A qrels file read and checked without the store (`prepare_qrels`): its labels as
    (qid, iteration, docno, rel) in file order."""

    path: Path
    topics: frozenset[str]
    entries: list[tuple[str, str, str, int]]


def prepare_qrels(paths: Iterable[PathLike]) -> list[PreparedQrels]:
    """Read and check qrels files before the write transaction of `import_qrels`, which then
    only writes. Raises as `import_qrels` would for a bad file."""
    prepared = []
    for path in paths:
        qrels = trec.read_qrels(path, limits=limits.STORE_LIMITS, strict=True)
        entries = [
            (qid, str(iteration), docno, int(rel)) for qid, iteration, docno, rel in qrels.entries()
        ]
        prepared.append(PreparedQrels(Path(path), frozenset(qrels.topics()), entries))
    return prepared


def import_qrels(
    session: Session,
    campaign: Campaign,
    source: PathLike | PreparedQrels,
    *,
    name: str | None = None,
) -> ImportReport:
    """Store a qrels file (read here, or by `prepare_qrels`) as a named QrelsSet (default
    name: the file name)."""
    qrels = source if isinstance(source, PreparedQrels) else prepare_qrels([source])[0]
    name = name or qrels.path.name
    if len(name) > limits.QRELS_SET_NAME:
        raise ServiceError(limits.length_error("qrels name", name, limits.QRELS_SET_NAME))
    exists = session.scalar(
        select(QrelsSet.id).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == name)
    )
    if exists is not None:
        raise ServiceError(f"campaign {campaign.name!r} already has qrels named {name!r}")
    qrels_set = QrelsSet(campaign_id=campaign.id, name=name, source=qrels.path.name)
    session.add(qrels_set)
    session.flush()
    rows = [
        {
            "qrels_set_id": qrels_set.id,
            "qid": qid,
            "iteration": iteration,
            "docno": docno,
            "rel": rel,
        }
        for qid, iteration, docno, rel in qrels.entries
    ]
    if rows:
        session.execute(insert(QrelsEntry), rows)
        changes.changed(session, campaign.id)
    report = ImportReport("qrels", files=1, added=len(rows), lines=len(rows))
    unknown = sorted(qrels.topics - campaign_qids(session, campaign))
    if unknown:
        report.warnings.append(
            f"{len(unknown)} qrels topic(s) are not topics of the campaign: {listed(unknown)}"
        )
    return report
