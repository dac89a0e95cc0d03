"""Efficiency figures of a campaign's runs: import a sidecar file, read the stored figures.

The file is parsed by `workbench.efficiency` (JSON or CSV). An import works inside the
caller's session and transaction and raises on the first problem (a run the campaign lacks,
a run that already has figures without ``replace``, a latency for a topic the run does not
have), so a failed import changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import efficiency
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign, Run, RunEfficiency, RunTopic


@dataclass(frozen=True)
class EfficiencyImport:
    runs: tuple[str, ...]  # the runs whose figures were stored
    replaced: tuple[str, ...]  # those of them that had figures before
    warnings: tuple[str, ...] = ()

    def summary(self) -> str:
        """'Efficiency figures stored for 2 runs: a, b (replacing those of a).'"""
        noun = "run" if len(self.runs) == 1 else "runs"
        text = f"Efficiency figures stored for {len(self.runs)} {noun}: {', '.join(self.runs)}"
        return text + (
            f" (replacing those of {', '.join(self.replaced)})." if self.replaced else "."
        )


def import_efficiency(
    session: Session, campaign: Campaign, path: str | Path, *, replace: bool = False
) -> EfficiencyImport:
    """Store the figures of a sidecar file for the campaign's runs named in it."""
    path = Path(path)
    try:
        data = path.read_bytes()
        if len(data) > efficiency.MAX_BYTES:
            raise ServiceError(f"{path}: larger than {efficiency.MAX_BYTES:,} bytes")
        records = efficiency.read_efficiency(data.decode("utf-8"), name=str(path))
    except UnicodeDecodeError as error:
        raise ServiceError(f"{path}: not UTF-8 (byte {error.start})") from None
    except efficiency.EfficiencyFormatError as error:
        raise ServiceError(str(error)) from None
    except OSError as error:
        raise ServiceError(f"{path}: {error.strerror or error}") from None
    runs = {
        run.tag: run for run in session.scalars(select(Run).where(Run.campaign_id == campaign.id))
    }
    unknown = [r.run for r in records if r.run not in runs]
    if unknown:
        raise ServiceError(f"{path}: campaign {campaign.name!r} has no run {', '.join(unknown)}")
    stored = {
        e.run_id: e
        for e in session.scalars(
            select(RunEfficiency).where(RunEfficiency.run_id.in_([r.id for r in runs.values()]))
        )
    }
    replaced = [r.run for r in records if runs[r.run].id in stored]
    if replaced and not replace:
        raise ServiceError(
            f"{path}: runs {', '.join(replaced)} already have efficiency figures (replace them "
            "explicitly)"
        )
    for record in records:
        run = runs[record.run]
        if record.per_query_latency_ms:
            topics = set(session.scalars(select(RunTopic.qid).where(RunTopic.run_id == run.id)))
            strange = sorted(set(record.per_query_latency_ms) - topics)
            if strange:
                raise ServiceError(
                    f"{path}: run {run.tag!r} has no topic {', '.join(strange[:20])}"
                )
    for record in records:
        run = runs[record.run]
        row = stored.get(run.id) or RunEfficiency(run_id=run.id)
        row.mean_latency_ms = record.mean_latency_ms
        row.throughput_qps = record.throughput_qps
        row.index_size_bytes = record.index_size_bytes
        row.hardware = record.hardware
        row.cost_per_1000_queries = record.cost_per_1000_queries
        row.per_query_latency_ms = dict(record.per_query_latency_ms)
        row.source = path.name
        session.add(row)
    session.flush()
    return EfficiencyImport(tuple(r.run for r in records), tuple(replaced))


def run_efficiency(session: Session, campaign: Campaign) -> dict[str, efficiency.Efficiency]:
    """Run tag -> its stored figures, for the runs that have them."""
    rows = session.execute(
        select(Run.tag, RunEfficiency)
        .join(RunEfficiency, RunEfficiency.run_id == Run.id)
        .where(Run.campaign_id == campaign.id)
    )
    return {
        tag: efficiency.Efficiency(
            tag,
            mean_latency_ms=e.mean_latency_ms,
            throughput_qps=e.throughput_qps,
            index_size_bytes=e.index_size_bytes,
            hardware=e.hardware,
            cost_per_1000_queries=e.cost_per_1000_queries,
            per_query_latency_ms={str(q): float(v) for q, v in e.per_query_latency_ms.items()},
        )
        for tag, e in rows
    }
