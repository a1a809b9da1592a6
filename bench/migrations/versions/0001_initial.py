"""Initial schema: runs, metrics, curves, environments.

Revision ID: 0001_initial
Revises:
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "environments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False, unique=True),
        sa.Column("git_sha", sa.String(40)),
        sa.Column("git_dirty", sa.Boolean),
        sa.Column("python", sa.String(32), nullable=False),
        sa.Column("packages", sa.JSON, nullable=False),
        sa.Column("cpu", sa.String(256)),
        sa.Column("gpu", sa.String(256)),
        sa.Column("cuda", sa.String(32)),
        sa.Column("host", sa.String(256)),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_key", sa.String(64), nullable=False, unique=True),
        sa.Column("method", sa.String(128), nullable=False, index=True),
        sa.Column("method_config", sa.JSON, nullable=False),
        sa.Column("task", sa.String(128), nullable=False, index=True),
        sa.Column("task_version", sa.Integer, nullable=False),
        sa.Column("task_config", sa.JSON, nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("hardware", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("error", sa.Text),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("wall_s", sa.Float),
        sa.Column("peak_mem_mb", sa.Float),
        sa.Column("runner", sa.String(32), nullable=False),
        sa.Column("code_version", sa.String(64)),
        sa.Column("environment_id", sa.Integer, sa.ForeignKey("environments.id")),
    )
    op.create_table(
        "metrics",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_key", sa.String(64), sa.ForeignKey("runs.run_key", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.UniqueConstraint("run_key", "name"),
    )
    op.create_table(
        "curves",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_key", sa.String(64), sa.ForeignKey("runs.run_key", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
    )
    op.create_index("ix_curves_run_key_name", "curves", ["run_key", "name"])


def downgrade() -> None:
    op.drop_index("ix_curves_run_key_name", table_name="curves")
    op.drop_table("curves")
    op.drop_table("metrics")
    op.drop_table("runs")
    op.drop_table("environments")
