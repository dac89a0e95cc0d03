"""Imports of runs into a campaign, each stored whole as RunTopic blobs (one row per run and
topic, bulk-inserted).

An import writes each run's lines as a new `RunVersion` ('open'), whose RunTopicRow rows no
reader sees (readers read the `run_topics` view of live versions), in transactions of at most
about WRITE_BATCH_BYTES. Then one tiny transaction re-checks what may have changed meanwhile
(tags taken, topics deleted, versions cleared), stores the Run rows (a replaced run keeps its
id and gets the new fields) and makes the new versions live and the ones they replace dead:
every run of the import appears at once, or none. Dead versions are then deleted in short
transactions. A failed import deletes its versions; the open versions of a process that died
(no heartbeat for STALE_IMPORT_S) and dead versions left behind are cleared by the next run
import of the campaign.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import deque
from collections.abc import Collection, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import limits, trec
from workbench.services import campaigns
from workbench.services.errors import ServiceError
from workbench.services.import_steps import (
    DELETE_BATCH_ROWS,
    WRITE_BATCH_BYTES,
    ImportReport,
    PathLike,
    Steps,
    caller_steps,
    store_steps,
)
from workbench.services.topics import MAX_LISTED, campaign_qids, chosen_topics, listed
from workbench.store import Store
from workbench.store.db import cast_result
from workbench.store.models import (
    Campaign,
    Document,
    Run,
    RunTopicRow,
    RunVersion,
    utcnow,
)
from workbench.store.runs import RUN_TOPIC_ROW_COLUMNS, bulk_insert, run_topic_rows
from workbench.trec.run_metadata import metadata_of_runs, read_run_metadata

PARSE_AHEAD = 2  # run files parsed ahead of the inserts, on worker threads
STALE_IMPORT_S = 600.0


@dataclass(frozen=True)
class RunOptions:
    """How `import_runs` stores runs (see its docstring)."""

    replace: bool = False
    group: str = ""
    contributes: bool = True
    split_tags: bool = False
    topics: Collection[str] | None = None
    skip_unknown_topics: bool = False


@dataclass
class _WrittenRun:
    """A run written as an open version, waiting for the import's commit."""

    tag: str
    path: Path
    version_id: int
    run_id: int | None  # the stored run it replaces
    qids: frozenset[str]
    fields: dict[str, Any]


def import_runs(
    session: Session,
    campaign: Campaign,
    paths: Iterable[PathLike | _ParsedRun],
    **options: Any,
) -> ImportReport:
    """Store each run whole, in the caller's transaction (which holds the store's write lock
    on SQLite for the whole import: for large files use `import_runs_in_steps`). Options
    (`RunOptions`):

    A tag already in the campaign is refused unless replace=True (the run keeps its id, so
    pools that name it still do). group and contributes are stored with each run. A file
    with two tags is refused unless split_tags (one run per tag). topics: keep only these
    campaign topics of every run (a judged subset); topics the campaign lacks are an error
    that lists them, unless skip_unknown_topics (they are left out and reported). Docnos the
    campaign's documents lack are imported and reported.
    """
    report = _import_runs(caller_steps(session), campaign.id, paths, RunOptions(**options))
    for run in [obj for obj in session.identity_map.values() if isinstance(obj, Run)]:
        session.expire(run)  # its fields were written without the ORM
    return report


def import_runs_in_steps(
    store: Store,
    campaign: int | str,
    paths: Iterable[PathLike | _ParsedRun],
    **options: Any,
) -> ImportReport:
    """`import_runs` in short transactions of the store (campaign: its id or name), so that
    no write lock is held for long and none while a file is read: the runs are written
    invisible, then shown all at once by one tiny transaction (or never: a bad file or a
    refusal deletes what was written)."""

    with store.read_session() as session:
        campaign_id = campaigns.get_campaign(session, campaign).id
    return _import_runs(store_steps(store), campaign_id, paths, RunOptions(**options))


def _import_runs(
    steps: Steps,
    campaign_id: int,
    paths: Iterable[PathLike | _ParsedRun],
    options: RunOptions,
) -> ImportReport:
    if len(options.group) > limits.RUN_GROUP:
        raise ServiceError(limits.length_error("run group", options.group, limits.RUN_GROUP))
    with steps.read() as connection, Session(connection) as session:  # before any write
        campaign = session.get_one(Campaign, campaign_id)
        name = campaign.name
        known_qids = campaign_qids(session, campaign)
        stored = _stored_runs(session, campaign_id)
        documents = DocnoSet(session, campaign)
    chosen = (
        known_qids
        if options.topics is None
        else chosen_topics(options.topics, known_qids, campaign)
    )
    _clear_dead_versions(steps, campaign_id)
    report = ImportReport("runs")
    batch_tags: dict[str, str] = {}
    written: list[_WrittenRun] = []
    versions: list[int] = []  # every version opened, written or not
    try:
        with closing(_parsed_runs(paths, options.split_tags)) as parsed_runs:
            for parsed in parsed_runs:
                path = parsed.path
                report.files += 1
                for run, all_rows in parsed.runs:
                    report.lines += run.n_lines
                    if run.tag in batch_tags:
                        raise ServiceError(
                            f"{path}: run tag {run.tag!r} is also the tag of {batch_tags[run.tag]}"
                        )
                    batch_tags[run.tag] = str(path)
                    rows = _kept_rows(
                        run, all_rows, path, name, known_qids, chosen, report, options
                    )
                    run_id = stored.get(run.tag)
                    if run_id is not None and not options.replace:
                        raise _tag_taken(path, name, run.tag)
                    version_id = _open_version(steps, campaign_id, run_id)
                    versions.append(version_id)
                    _write_version(steps, version_id, rows, versions)
                    fields = {
                        "file_name": path.name,
                        "checksum": parsed.checksum,
                        "group": options.group,
                        "contributes": options.contributes,
                        "line_count": sum(row[1] for row in rows),
                        "ir_metadata": parsed.metadata.get(run.tag),
                    }
                    qids = frozenset(row[0] for row in rows)
                    written.append(_WrittenRun(run.tag, path, version_id, run_id, qids, fields))
                    report.warnings.extend(documents.missing_warning(run, qids))
        try:
            _commit_runs(steps, campaign, written, options.replace, report)
        except IntegrityError:  # a server store: another import's commit at the same moment
            raise ServiceError(
                "another import stored or replaced one of these runs at the same moment; "
                "nothing was imported: retry it"
            ) from None
    except BaseException:
        if steps.own_transactions:  # else the caller's transaction rolls it all back
            with suppress(Exception):  # if this fails too, the next import clears it
                _delete_versions(steps, RunVersion.id.in_(versions))
        raise
    _delete_versions(steps, (RunVersion.campaign_id == campaign_id) & (RunVersion.state == "dead"))
    return report


def _stored_runs(db: Session | Connection, campaign_id: int) -> dict[str, int]:
    """The campaign's runs: tag -> id."""
    rows = db.execute(select(Run.tag, Run.id).where(Run.campaign_id == campaign_id))
    return {tag: run_id for tag, run_id in rows}


def _tag_taken(path: Path, campaign_name: str, tag: str) -> ServiceError:
    return ServiceError(
        f"{path}: campaign {campaign_name!r} already has a run tagged {tag!r} "
        "(ask for replacement to overwrite it)"
    )


def _open_version(steps: Steps, campaign_id: int, run_id: int | None) -> int:
    with steps.write() as connection:
        added = connection.execute(
            insert(RunVersion).values(
                campaign_id=campaign_id, run_id=run_id, state="open", heartbeat_at=utcnow()
            )
        )
    key = added.inserted_primary_key
    assert key is not None
    return int(key[0])


def _write_version(steps: Steps, version_id: int, rows: list[tuple], versions: list[int]) -> None:
    """Write the RunTopicRow rows of an open version, about WRITE_BATCH_BYTES of blobs per
    transaction, each beating the heartbeat of the import's open `versions`."""
    at = 0
    while at < len(rows):
        size, end = 0, at
        while end < len(rows) and (end == at or size < WRITE_BATCH_BYTES):
            size += sum(len(blob) for blob in rows[end][2:])
            end += 1
        with steps.write() as connection:
            bulk_insert(
                connection,
                RunTopicRow.__table__,
                RUN_TOPIC_ROW_COLUMNS,
                [(version_id, *row) for row in rows[at:end]],
            )
            connection.execute(
                update(RunVersion)
                .where(RunVersion.id.in_(versions), RunVersion.state == "open")
                .values(heartbeat_at=utcnow())
            )
        at = end


def _commit_runs(
    steps: Steps,
    campaign: Campaign,
    written: list[_WrittenRun],
    replace: bool,
    report: ImportReport,
) -> None:
    """Show every written run at once: one short transaction that re-checks the refusals
    (a tag stored meanwhile, a topic deleted, a version cleared or its run deleted), stores
    the runs and makes their versions live and the replaced ones dead."""
    with steps.write() as connection, Session(connection) as session:
        ids = [w.version_id for w in written]
        still_open = connection.scalar(
            select(func.count())
            .select_from(RunVersion)
            .where(RunVersion.id.in_(ids), RunVersion.state == "open")
        )
        if still_open != len(ids):
            raise ServiceError(
                "a run or the campaign was deleted while the run import ran (or the import "
                "was cleared as dead); nothing was imported: retry it"
            )
        qids = campaign_qids(session, campaign)
        stored = _stored_runs(connection, campaign.id)
        for run in written:
            gone = sorted(run.qids - qids)
            if gone:
                raise ServiceError(
                    f"{run.path}: run {run.tag!r}: topic(s) {listed(gone)} were deleted from "
                    "the campaign while the import ran; nothing was imported"
                )
            run_id = stored.get(run.tag)
            if run_id is None:
                added = connection.execute(
                    insert(Run).values(campaign_id=campaign.id, tag=run.tag, **run.fields)
                )
                key = added.inserted_primary_key
                assert key is not None
                run_id = int(key[0])
                report.added += 1
            else:
                if run.run_id is None and not replace:
                    raise _tag_taken(run.path, campaign.name, run.tag)
                connection.execute(update(Run).where(Run.id == run_id).values(**run.fields))
                connection.execute(
                    update(RunVersion)
                    .where(RunVersion.run_id == run_id, RunVersion.state == "live")
                    .values(state="dead")
                )
                report.updated += 1
            connection.execute(
                update(RunVersion)
                .where(RunVersion.id == run.version_id)
                .values(run_id=run_id, state="live", heartbeat_at=utcnow())
            )


def _delete_versions(steps: Steps, which: Any) -> None:
    """Delete the run versions `which` selects with their rows, DELETE_BATCH_ROWS rows per
    short transaction, then the versions themselves."""
    versions = select(RunVersion.id).where(which)
    while True:
        with steps.write() as connection:
            deleted = connection.execute(
                delete(RunTopicRow).where(
                    RunTopicRow.id.in_(
                        select(RunTopicRow.id)
                        .where(RunTopicRow.version_id.in_(versions))
                        .limit(DELETE_BATCH_ROWS)
                        .scalar_subquery()
                    )
                )
            )
            if not cast_result(deleted).rowcount:
                connection.execute(delete(RunVersion).where(which))
                return


def _clear_dead_versions(steps: Steps, campaign_id: int) -> None:
    """Delete the campaign's dead versions and the open ones whose import died."""
    horizon = utcnow() - dt.timedelta(seconds=STALE_IMPORT_S)
    stale = (RunVersion.state == "open") & (RunVersion.heartbeat_at < horizon)
    _delete_versions(
        steps, (RunVersion.campaign_id == campaign_id) & ((RunVersion.state == "dead") | stale)
    )


def topic_list(text: str) -> list[str]:
    """Topics given as qids separated by commas, spaces or lines (no qid holds either)."""
    qids = text.replace(",", " ").split()
    if not qids:
        raise ServiceError("the topic list is empty")
    return list(dict.fromkeys(qids))


def _kept_rows(
    run: trec.Run,
    rows: list[tuple],
    path: Path,
    campaign_name: str,
    known: set[str],
    chosen: set[str],
    report: ImportReport,
    options: RunOptions,
) -> list[tuple]:
    """The RunTopic rows of the run's chosen topics; unknown topics refused or reported."""
    unknown = [qid for qid in run.topics() if qid not in known]
    if unknown and not options.skip_unknown_topics:
        raise ServiceError(
            f"{path}: run {run.tag!r} names {len(unknown)} topic(s) the campaign "
            f"{campaign_name!r} lacks: {listed(unknown)} (skip unknown topics to leave them out)"
        )
    if unknown:
        report.warnings.append(
            f"{path}: run {run.tag!r}: {len(unknown)} topic(s) the campaign lacks were "
            f"skipped: {listed(unknown)}"
        )
    outside = [qid for qid in run.topics() if qid in known and qid not in chosen]
    if outside:
        report.warnings.append(
            f"{path}: run {run.tag!r}: {len(outside)} topic(s) outside the chosen topics were "
            f"left out: {listed(outside)}"
        )
    kept = [row for row in rows if row[0] in chosen]
    if not kept:
        raise ServiceError(f"{path}: run {run.tag!r} has no line for any chosen campaign topic")
    return kept


class DocnoSet:
    """The campaign's docnos as 64-bit hashes, for counting the run docnos it lacks."""

    def __init__(self, session: Session, campaign: Campaign) -> None:
        docnos = [
            d.encode()
            for d in session.scalars(
                select(Document.docno).where(Document.campaign_id == campaign.id)
            )
        ]
        self.count = len(docnos)
        self.hashes = np.sort(trec.docno_hash(np.array(docnos, dtype=bytes))) if docnos else None

    def missing_warning(self, run: trec.Run, qids: Collection[str]) -> list[str]:
        """A warning counting and listing the distinct docnos of the run's topics ``qids``
        that no document of the campaign has (their pool entries will show 'no text')."""
        if len(qids) == len(run.topics()):  # every topic of the run: all its lines
            rows, hashes = np.arange(run.n_lines), run.docno_hashes
        else:
            rows = np.concatenate(
                [np.arange(run.topic_slice(q).start, run.topic_slice(q).stop) for q in qids]
            )
            hashes = run.docno_hashes[rows]
        if self.hashes is None:  # nothing to list: no docno of the run has a document
            return [
                f"run {run.tag!r}: its {distinct_count(hashes)} docno(s) have no text: the "
                "campaign has no documents yet (pooled, they show 'no text' until imported)"
            ]
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        lacking = rows[self.hashes[at] != hashes]
        if not len(lacking):
            return []
        # distinct by hash (a uint64 sort), and only the first MAX_LISTED docnos sorted: the
        # sort of every distinct docno as text took most of a large import's time
        one_each = distinct_rows(run.docno_hashes[lacking])
        distinct = run.docnos[lacking[one_each]]
        if len(distinct) > MAX_LISTED:
            distinct = np.partition(distinct, MAX_LISTED)[:MAX_LISTED]
        shown = sorted(d.decode() for d in distinct.tolist())  # UTF-8 order is text order
        more = f" and {len(one_each) - len(shown)} more" if len(one_each) > len(shown) else ""
        return [
            f"run {run.tag!r}: {len(one_each)} docno(s) are not among the campaign's documents "
            f"({self.count} documents; pooled, they show 'no text' until imported): "
            f"{listed(shown)}{more}"
        ]


def distinct_count(hashes: np.ndarray) -> int:
    """How many distinct values ``hashes`` holds: a sort of the values (SIMD in numpy, a
    third of the time of the argsort `distinct_rows` needs for its rows)."""
    ordered = np.sort(hashes)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1 if len(ordered) else 0


def distinct_rows(hashes: np.ndarray) -> np.ndarray:
    """One row (any) of each distinct value of ``hashes``: an unstable argsort, not
    np.unique's stable one with return_index (twice as long, for rows never listed)."""
    order = np.argsort(hashes)
    ordered = hashes[order]
    new = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return order[new]


@dataclass
class _ParsedRun:
    path: Path
    checksum: str
    runs: list[tuple[trec.Run, list[tuple]]]  # each run, its RUN_TOPIC_ROW_COLUMNS but the first
    metadata: dict[str, str] = field(default_factory=dict)  # run tag -> its ir_metadata YAML


def prepare_runs(paths: Iterable[PathLike], *, split_tags: bool = False) -> list[_ParsedRun]:
    """Read, check and encode every run file without the store, so that `import_runs` of the
    result spends its write transactions (the store's write lock, on SQLite) on the writes
    alone. Raises as `import_runs` would for a bad file."""
    return list(_parsed_runs(paths, split_tags))


def _parse_run(path: PathLike | _ParsedRun, split_tags: bool) -> _ParsedRun:
    if isinstance(path, _ParsedRun):  # prepared by prepare_runs
        return path
    path = Path(path)
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    runs = trec.read_runs(path, limits=limits.STORE_LIMITS, split_tags=split_tags)
    block = read_run_metadata(path)  # ir_metadata (PRIMAD) from the file's comment lines
    metadata = metadata_of_runs(block, [run.tag for run in runs], str(path))
    return _ParsedRun(
        path,
        checksum,
        [(run, list(run_topic_rows(run))) for run in runs],
        {tag: block.text for tag, block in metadata.items()},
    )


def _parsed_runs(
    paths: Iterable[PathLike | _ParsedRun], split_tags: bool
) -> Generator[_ParsedRun, None, None]:
    """The runs parsed and encoded in order, PARSE_AHEAD files ahead on worker threads
    (numpy and zlib release the GIL, so parsing overlaps the inserts); the first bad file
    raises in order."""
    pending: deque[Future[_ParsedRun]] = deque()
    with ThreadPoolExecutor(max_workers=PARSE_AHEAD) as workers:
        try:
            for path in paths:
                pending.append(workers.submit(_parse_run, path, split_tags))
                if len(pending) > PARSE_AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
