"""Migration 0008: the leaderboard's aggregation reads a task's runs from a covering index, and writes keep their
number of indexes."""

from alembic import command
from sqlalchemy import inspect, text

from bench.spec import Cell, RunRecord
from bench.store import Store, _alembic_config, schema_state
from tests.pg import pg_server_url, pg_url, sqlite_or_pg_url  # noqa: F401 - fixtures (url)

BOARD = ("task", "status", "setting_key", "method", "hardware", "run_key")


def _indexes(store: Store) -> dict[str, dict[str, tuple[str, ...]]]:
    with store.engine.connect() as connection:
        found = inspect(connection)
        return {table: {ix["name"]: tuple(ix["column_names"]) for ix in found.get_indexes(table)}
                for table in ("runs", "metrics")}


def _store_with_runs(url: str) -> Store:
    store = Store.open(url)
    for seed in range(4):
        cell = Cell("m", "t", seed, {"c": 1.0}, {"beta": 0.01})
        store.save(RunRecord(cell, "done", task_version=1, metrics={"final_gap": 0.5 + seed, "other": 1.0},
                             curves={}, error=None, started_at=1.7e9, wall_s=0.5), runner="local")
    return store


def _rows(store: Store) -> tuple[list, list]:
    with store.engine.connect() as connection:
        return (connection.execute(text("SELECT * FROM runs ORDER BY id")).all(),
                connection.execute(text("SELECT * FROM metrics ORDER BY id")).all())


def test_the_board_index_replaces_the_task_index_and_the_downgrade_restores_it(url):
    store = _store_with_runs(url)
    before = _rows(store)
    indexes = _indexes(store)
    assert indexes["runs"]["ix_runs_board"] == BOARD and "ix_runs_task" not in indexes["runs"]
    metrics = indexes["metrics"]
    with store.engine.begin() as connection:
        command.downgrade(_alembic_config(connection), "0007_preference_sft_model")
    indexes = _indexes(store)
    assert indexes["runs"]["ix_runs_task"] == ("task",) and "ix_runs_board" not in indexes["runs"]
    assert indexes["metrics"] == metrics
    assert schema_state(store.engine) == "old:0007_preference_sft_model" and _rows(store) == before
    with store.engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "head")
    assert schema_state(store.engine) == "current" and _rows(store) == before


def test_sqlite_reads_a_boards_runs_in_group_order_from_the_index_alone(tmp_path):
    """The aggregation of the task page and `bench show`, planned on a store with the statistics a write session
    leaves (ANALYZE)."""
    from leaderboard.queries import _setting_stats, setting_stats_query

    store = _store_with_runs(f"sqlite:///{tmp_path / 'bench.db'}")
    with store.engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE")
        rows = _setting_stats(connection, "t", "final_gap", None, 1)
        assert [(n, s1) for *_, n, s1, _s2, _s3, _key in rows] == [(4, 0.5 + 1.5 + 2.5 + 3.5)]
        query = setting_stats_query("t", "final_gap", None, 1).compile(connection,
                                                                       compile_kwargs={"literal_binds": True})
        plan = " ".join(str(r[-1]) for r in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {query}"))
    assert "COVERING INDEX ix_runs_board" in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # read in group order
