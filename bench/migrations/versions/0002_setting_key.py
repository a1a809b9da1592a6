"""runs.setting_key: sha256 of the cell without its seed, so aggregation over seeds is a GROUP BY.

Revision ID: 0002_setting_key
Revises: 0001_initial
Create Date: 2026-12-02
"""

import json
import sqlite3

import sqlalchemy as sa
from alembic import op

from bench.spec import setting_key

revision = "0002_setting_key"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def _as_dict(value):
    return json.loads(value) if isinstance(value, str) else value


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("setting_key", sa.String(64)))
        batch.create_index("ix_runs_setting_key", ["setting_key"])
    connection = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("method", sa.String),
                    sa.column("method_config", sa.JSON), sa.column("task", sa.String),
                    sa.column("task_config", sa.JSON), sa.column("hardware", sa.String),
                    sa.column("setting_key", sa.String))
    rows = connection.execute(sa.select(runs.c.id, runs.c.method, runs.c.method_config, runs.c.task,
                                        runs.c.task_config, runs.c.hardware)).all()
    for row in rows:  # backfill: the same key the store computes for new runs
        key = setting_key(row.method, _as_dict(row.method_config), row.task, _as_dict(row.task_config), row.hardware)
        connection.execute(runs.update().where(runs.c.id == row.id).values(setting_key=key))


def downgrade() -> None:
    # not batch mode: on SQLite it rebuilds `runs`, and dropping the old table fires the
    # metrics' and curves' ON DELETE CASCADE, deleting every one of them. Drop the column in place.
    op.drop_index("ix_runs_setting_key", table_name="runs")
    if op.get_bind().dialect.name == "sqlite":
        if sqlite3.sqlite_version_info < (3, 35):
            from bench.errors import BenchError

            raise BenchError(f"downgrading below 0002 needs SQLite >= 3.35 (ALTER TABLE DROP COLUMN); this is "
                             f"{sqlite3.sqlite_version}, and rebuilding the table would delete every metric and curve")
        op.execute("ALTER TABLE runs DROP COLUMN setting_key")
    else:
        op.drop_column("runs", "setting_key")
