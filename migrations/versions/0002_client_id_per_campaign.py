"""client_id scoped to the campaign and assessor

A judgement's client_id (the browser's idempotency key) was unique per assessor across the
whole store: the same id sent to two campaigns stored only the first judgement and answered
the second with the first's id. It is now unique per (campaign, assessor).

Revision ID: 0002_client_id_per_campaign
Revises: 0001
Create Date: 2026-11-23 10:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_client_id_per_campaign"
down_revision = "0001"
branch_labels = None
depends_on = None

TABLE = "judgements"
NEW = "uq_judgements_campaign_user_client"
OLD_COLUMNS = ["user_id", "client_id"]
# SQLite reflects the unnamed constraint of 0001 without a name: the batch copy names it so.
NAMING = {"uq": "uq_%(table_name)s_%(column_0_name)s_%(column_1_name)s"}


def _old_name() -> str:
    for constraint in sa.inspect(op.get_bind()).get_unique_constraints(TABLE):
        if constraint["column_names"] == OLD_COLUMNS and constraint["name"]:
            return str(constraint["name"])
    return "uq_judgements_user_id_client_id"


def upgrade() -> None:
    old = _old_name()
    with op.batch_alter_table(TABLE, naming_convention=NAMING) as batch_op:
        batch_op.drop_constraint(old, type_="unique")
        batch_op.create_unique_constraint(NEW, ["campaign_id", "user_id", "client_id"])


def downgrade() -> None:
    """Fails where one assessor used the same client_id in two campaigns."""
    with op.batch_alter_table(TABLE, naming_convention=NAMING) as batch_op:
        batch_op.drop_constraint(NEW, type_="unique")
        batch_op.create_unique_constraint("uq_judgements_user_id_client_id", OLD_COLUMNS)
