"""leases: a cell is claimed by one driver before it runs (run_key, owner, heartbeat).

Revision ID: 0003_leases
Revises: 0002_setting_key
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_leases"
down_revision = "0002_setting_key"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("run_key", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("heartbeat", sa.Float, nullable=False),
        sa.Column("acquired", sa.Float, nullable=False),
    )
    op.create_index("ix_leases_owner", "leases", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_leases_owner", table_name="leases")
    op.drop_table("leases")
