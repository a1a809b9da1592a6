"""runs.log: the library warnings and log messages a run produced, kept with it instead of printed.

A reproduction's terminal shows the progress display and the verdicts; what transformers, diffusers, cvxpy
and the other libraries say while a cell runs (deprecations, solver notes, loading messages) is stored with
the run (`bench show-run KEY`, the app's run page). Older runs keep NULL: nothing captured them.

Revision ID: 0005_run_log
Revises: 0004_cpu_seconds
Create Date: 2026-12-05
"""

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0005_run_log"
down_revision = "0004_cpu_seconds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("log", sa.Text))


def downgrade() -> None:
    # as in 0002: never batch mode on SQLite, whose table rebuild would cascade-delete every metric and curve
    if op.get_bind().dialect.name == "sqlite":
        if sqlite3.sqlite_version_info < (3, 35):
            from bench.errors import BenchError

            raise BenchError(f"downgrading below 0005 needs SQLite >= 3.35 (ALTER TABLE DROP COLUMN); this is "
                             f"{sqlite3.sqlite_version}, and rebuilding the table would delete every metric and curve")
        op.execute("ALTER TABLE runs DROP COLUMN log")
    else:
        op.drop_column("runs", "log")
