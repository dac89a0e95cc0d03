"""adaptive pools recorded with the judging strategy 'mm-ns' now record 'mm-discounted'

The strategy called 'mm-ns' was our discounted variant of MaxMean, not the published MM-NS of
Losada, Parapar & Barreiro (2017); it is renamed 'mm-discounted' (same rule, same choices), and
the pools that recorded the old name are updated so that they keep judging the same way.
Data only: no schema change.

Revision ID: r28_estimates_mm_discounted
Revises: h_jobs_report_results
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r28_estimates_mm_discounted"
down_revision = "h_jobs_report_results"
branch_labels = None
depends_on = None

POOLS = sa.table("pools", sa.column("id", sa.Integer), sa.column("params", sa.JSON))


def _rename(old: str, new: str) -> None:
    bind = op.get_bind()
    for pool_id, params in bind.execute(sa.select(POOLS.c.id, POOLS.c.params)).all():
        recorded = (params or {}).get("adaptive")
        if isinstance(recorded, dict) and recorded.get("strategy") == old:
            changed = {**params, "adaptive": {**recorded, "strategy": new}}
            bind.execute(POOLS.update().where(POOLS.c.id == pool_id).values(params=changed))


def upgrade() -> None:
    _rename("mm-ns", "mm-discounted")


def downgrade() -> None:
    _rename("mm-discounted", "mm-ns")
