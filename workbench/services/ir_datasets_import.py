"""`workbench import ir-datasets`: a dataset of ir_datasets into a campaign (its topics,
documents, qrels and scored documents as a run; each part optional).

The parts are first written as files (`workbench.ir_datasets_files`, streamed with progress)
and read back by the importers that read any file, so they are checked alike.  Nothing is
stored until every part has been read: the topics, run and qrels are read and checked
(`prepare_*`), a tag or qrels name the campaign already has is refused (unless replacing),
then the documents are imported (all or nothing), then the topics, the run and the qrels.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sqlalchemy import select

from workbench import limits, trec
from workbench.ir_datasets_files import PARTS, DatasetError, Progress, write_files
from workbench.services import (
    campaigns,
    document_imports,
    import_steps,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import ServiceError
from workbench.store import Store
from workbench.store.models import QrelsSet, Run


def import_ir_dataset(
    store: Store,
    campaign: int | str,
    dataset_id: str,
    *,
    parts: tuple[str, ...] = PARTS,
    run_tag: str | None = None,
    qrels_name: str | None = None,
    replace: bool = False,
    progress: Progress | None = None,
) -> list[import_steps.ImportReport]:
    """Import the dataset's ``parts`` (topics, documents, qrels, run) into the campaign; the
    qrels are named ``qrels_name`` (default: the dataset's id), the run ``run_tag``
    (default: the dataset's id).  ``replace``: documents and a run already stored are
    replaced.  Returns one report per part imported; a part the dataset lacks is said in a
    warning of the first report (or refused when it was the only part asked for)."""
    with store.read_session() as session:
        target = campaigns.get_campaign(session, campaign)
        campaign_id, name = target.id, target.name
    with tempfile.TemporaryDirectory(prefix="workbench-ir-datasets-") as folder:
        try:
            files = write_files(
                dataset_id, Path(folder), parts=parts, run_tag=run_tag, progress=progress
            )
        except DatasetError as error:
            raise ServiceError(f"{dataset_id}: {error}") from None
        if not any((files.topics, files.documents, files.qrels, files.run)):
            raise ServiceError(f"{dataset_id} has none of the parts asked for ({', '.join(parts)})")
        if files.topics:  # checked before anything is stored
            trec.read_topics(files.topics, limits=limits.STORE_LIMITS)
        runs = run_imports.prepare_runs([files.run]) if files.run else []
        qrels = qrels_imports.prepare_qrels([files.qrels]) if files.qrels else []
        qrels_name = qrels_name or dataset_id
        _refuse_taken(store, campaign_id, name, files.run_tag if runs else None,
                      qrels_name if qrels else None, replace)  # fmt: skip
        reports = []
        if files.documents:
            reports.append(
                document_imports.import_documents_in_steps(
                    store, campaign_id, [files.documents], replace=replace
                )
            )
        if files.topics:
            with store.session() as session:
                target = campaigns.get_campaign(session, campaign_id)
                reports.append(topic_imports.import_topics(session, target, files.topics))
        if runs:
            reports.append(
                run_imports.import_runs_in_steps(store, campaign_id, runs, replace=replace)
            )
        if qrels:
            with store.session() as session:
                target = campaigns.get_campaign(session, campaign_id)
                reports.append(
                    qrels_imports.import_qrels(session, target, qrels[0], name=qrels_name)
                )
    if files.lacking:
        reports[0].warnings.append(f"{dataset_id} has no {' or '.join(files.lacking)}")
    return reports


def _refuse_taken(
    store: Store,
    campaign_id: int,
    name: str,
    tag: str | None,
    qrels_name: str | None,
    replace: bool,
) -> None:
    """Refuse, before anything is stored, a run tag or qrels name the campaign has."""
    with store.read_session() as session:
        stored = select(Run.id).where(Run.campaign_id == campaign_id, Run.tag == tag)
        if tag is not None and not replace and session.scalar(stored):
            raise ServiceError(
                f"campaign {name!r} already has a run tagged {tag!r} (replace it, or give "
                "another tag)"
            )
        if qrels_name is not None and session.scalar(
            select(QrelsSet.id).where(
                QrelsSet.campaign_id == campaign_id, QrelsSet.name == qrels_name
            )
        ):
            raise ServiceError(f"campaign {name!r} already has qrels named {qrels_name!r}")
