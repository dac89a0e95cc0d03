"""adaptive pools: the strategy's choices in order; 'mm-ns' renamed 'mm-discounted'

`adaptive_topics.choices` lists the documents a topic's strategy chose, in order, including
the documents of a reserved random sample it picked on the way (judged already, they cost
nothing): the strategy's next choice is a function of that sequence. Existing topics get their
revealed documents in reveal order, which is what their strategy chose.

The strategy called 'mm-ns' was our discounted variant of MaxMean, not the published MM-NS of
Losada, Parapar & Barreiro (2017); it is renamed 'mm-discounted' (same rule, same choices), and
the pools that recorded the old name are updated so that they keep judging the same way.

Revision ID: r28_estimates_adaptive
Revises: r27_machine_judges
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r28_estimates_adaptive"
down_revision = "r27_machine_judges"
branch_labels = None
depends_on = None

POOLS = sa.table("pools", sa.column("id", sa.Integer), sa.column("params", sa.JSON))
TOPICS = sa.table(
    "adaptive_topics",
    sa.column("id", sa.Integer),
    sa.column("pool_id", sa.Integer),
    sa.column("qid", sa.String),
    sa.column("choices", sa.JSON),
)
ENTRIES = sa.table(
    "pool_entries",
    sa.column("pool_id", sa.Integer),
    sa.column("qid", sa.String),
    sa.column("docno", sa.String),
    sa.column("build", sa.Integer),
    sa.column("sampled", sa.Boolean),
)


def _rename(old: str, new: str) -> None:
    bind = op.get_bind()
    for pool_id, params in bind.execute(sa.select(POOLS.c.id, POOLS.c.params)).all():
        recorded = (params or {}).get("adaptive")
        if isinstance(recorded, dict) and recorded.get("strategy") == old:
            changed = {**params, "adaptive": {**recorded, "strategy": new}}
            bind.execute(POOLS.update().where(POOLS.c.id == pool_id).values(params=changed))


def upgrade() -> None:
    # plain ADD COLUMN: no copy of the table on SQLite
    op.add_column(
        "adaptive_topics", sa.Column("choices", sa.JSON(), nullable=False, server_default="[]")
    )
    bind = op.get_bind()
    for topic_id, pool_id, qid in bind.execute(
        sa.select(TOPICS.c.id, TOPICS.c.pool_id, TOPICS.c.qid)
    ).all():
        revealed = bind.execute(
            sa.select(ENTRIES.c.docno)
            .where(ENTRIES.c.pool_id == pool_id, ENTRIES.c.qid == qid, ENTRIES.c.sampled)
            .order_by(ENTRIES.c.build, ENTRIES.c.docno)
        ).scalars()
        bind.execute(
            TOPICS.update().where(TOPICS.c.id == topic_id).values(choices=list(revealed))
        )
    _rename("mm-ns", "mm-discounted")


OLD_SETTINGS = ("strategy", "budget", "batch", "secondary_share")
"""What an adaptive pool recorded before this revision (the code of that revision builds its
settings from these keys alone)."""


def _forget_new_settings() -> None:
    """Downgrade: the reserved sample and the stopping rule are dropped from the recorded
    settings (the sample's documents stay revealed, to be judged as any other)."""
    bind = op.get_bind()
    for pool_id, params in bind.execute(sa.select(POOLS.c.id, POOLS.c.params)).all():
        recorded = (params or {}).get("adaptive")
        if isinstance(recorded, dict) and set(recorded) - set(OLD_SETTINGS):
            kept = {k: v for k, v in recorded.items() if k in OLD_SETTINGS}
            bind.execute(
                POOLS.update().where(POOLS.c.id == pool_id).values(
                    params={**params, "adaptive": kept}
                )
            )


def downgrade() -> None:
    _forget_new_settings()
    _rename("mm-discounted", "mm-ns")
    with op.batch_alter_table("adaptive_topics") as batch:
        batch.drop_column("choices")
