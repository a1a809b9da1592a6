"""A covering index for the leaderboard's aggregation: a task's runs read in group order from one index.

The task page and `bench show` aggregate one metric of a task's done runs per setting (leaderboard/queries.py
`_setting_stats`: runs joined to metrics, grouped by setting, method and hardware). At 100k runs SQLite read every
run row through ix_runs_status and every metric row by its key, then sorted the groups in a temporary B-tree (0.31 s
on a quiet 2-core AMD EPYC). ix_runs_board (task, status, setting_key, method, hardware, run_key) gives it the runs in
group order without reading the table (0.20 s). It replaces ix_runs_task, its first column, so that a write updates
as many indexes as before (benchmarks/store_writes.py). A covering index of the metrics too (run_key, name, value)
would take the query to 0.16 s, but costs every write of the table with two to five rows a run (+12 % on the batch
writer's 10,000 runs): not taken.

Downgrade: ix_runs_task back, ix_runs_board dropped. No row changes either way.

Revision ID: 0008_board_indexes
Revises: 0007_preference_sft_model
Create Date: 2026-12-07
"""

from alembic import op

revision = "0008_board_indexes"
down_revision = "0007_preference_sft_model"
branch_labels = None
depends_on = None

RUNS_BOARD = ("task", "status", "setting_key", "method", "hardware", "run_key")


def upgrade() -> None:
    op.create_index("ix_runs_board", "runs", list(RUNS_BOARD))
    op.drop_index("ix_runs_task", table_name="runs")


def downgrade() -> None:
    op.create_index("ix_runs_task", "runs", ["task"])
    op.drop_index("ix_runs_board", table_name="runs")
