"""runs.cpu_s: the CPU seconds a run's process spent (every thread), beside its wall seconds.

A claim's cost in the verdict lock and on the leaderboard is the CPU its runs took, which on a shared
machine says more than their wall time. Older runs keep NULL: nothing measured them.

Revision ID: 0004_cpu_seconds
Revises: 0003_leases
Create Date: 2026-12-04
"""

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0004_cpu_seconds"
down_revision = "0003_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("cpu_s", sa.Float))


def downgrade() -> None:
    # as in 0002: never batch mode on SQLite, whose table rebuild would cascade-delete every metric and curve
    if op.get_bind().dialect.name == "sqlite":
        if sqlite3.sqlite_version_info < (3, 35):
            from bench.errors import BenchError

            raise BenchError(f"downgrading below 0004 needs SQLite >= 3.35 (ALTER TABLE DROP COLUMN); this is "
                             f"{sqlite3.sqlite_version}, and rebuilding the table would delete every metric and curve")
        op.execute("ALTER TABLE runs DROP COLUMN cpu_s")
    else:
        op.drop_column("runs", "cpu_s")
