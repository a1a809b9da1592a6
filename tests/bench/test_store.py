import sqlite3

import pytest
from sqlalchemy import create_engine, text

from bench.errors import BenchError
from bench.spec import Cell, RunRecord
from bench.store import SCHEMA_HEAD, Store, schema_state, upgrade


def _record(seed=0, status="done", value=1.0):
    cell = Cell("m", "t", seed, {"c": 1.0}, {"beta": 0.01})
    return RunRecord(cell, status, task_version=1, metrics={"final_gap": value, "other": 2.0},
                     curves={"gap": [(1, 3.0), (10, 2.0)]}, error=None if status == "done" else "boom",
                     started_at=1.7e9, wall_s=0.5, cpu_s=0.75, peak_mem_mb=100.0)


def test_schema_head_matches_the_alembic_scripts():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from bench.store import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_HEAD


def test_new_database_gets_the_migrated_schema_in_wal_mode(tmp_path):
    path = tmp_path / "new.db"
    store = Store.open(f"sqlite:///{path}")
    assert schema_state(store.engine) == "current"
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() == 30000


def test_save_is_an_upsert_by_run_key(store):
    store.save(_record(status="failed"), runner="local")
    assert store.done_keys([_record().cell.run_key]) == set()
    store.save(_record(value=0.25), runner="local")
    rows = store.runs()
    assert len(rows) == 1 and rows[0].status == "done" and rows[0].error is None
    assert (rows[0].wall_s, rows[0].cpu_s) == (0.5, 0.75)
    assert store.metrics([rows[0].run_key]) == {rows[0].run_key: {"final_gap": 0.25, "other": 2.0}}
    assert store.curve(rows[0].run_key, "gap") == [(1, 3.0), (10, 2.0)]
    assert store.done_keys([rows[0].run_key, "x" * 64]) == {rows[0].run_key}


def test_a_run_of_another_task_version_is_not_done(store):
    store.save(_record(), runner="local")  # task version 1
    key = _record().cell.run_key
    assert store.done_keys([key]) == {key}  # no versions asked: any done run
    assert store.done_keys([key], {key: 1}) == {key}
    assert store.done_keys([key], {key: 2}) == set()  # the task's version was raised since: stale


def test_environment_is_recorded_once(store):
    store.save(_record(seed=0), runner="local")
    store.save(_record(seed=1), runner="local")
    with store.engine.connect() as connection:
        envs = connection.execute(text("SELECT python, packages, host FROM environments")).all()
        run_envs = connection.execute(text("SELECT DISTINCT environment_id, code_version FROM runs")).all()
    assert len(envs) == 1 and envs[0].python.startswith("3.")
    assert len(run_envs) == 1 and run_envs[0].code_version.startswith("0.1.0")


def test_non_sqlite_file_is_refused_untouched(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 10)
    before = path.read_bytes()
    with pytest.raises(BenchError, match="is not a SQLite database"):
        Store.open(f"sqlite:///{path}")
    assert path.read_bytes() == before


def test_corrupt_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with pytest.raises(BenchError, match="not a readable database|cannot open database"):
        Store.open(f"sqlite:///{path}")


def test_foreign_sqlite_database_is_refused_and_kept(tmp_path):
    path = tmp_path / "foreign.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        connection.execute("INSERT INTO customers VALUES (1, 'ada')")
    with pytest.raises(BenchError, match="not a bench database"):
        Store.open(f"sqlite:///{path}")
    with pytest.raises(BenchError, match="not a bench store"):
        upgrade(create_engine(f"sqlite:///{path}"))
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == [("customers",)]
        assert connection.execute("SELECT * FROM customers").fetchall() == [(1, "ada")]


def test_old_schema_asks_for_upgrade_and_upgrade_keeps_runs(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store.open(url)
    store.save(_record(), runner="local")
    with store.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0001_initial'"))  # a revision this code
                                                                                             # knows
    with pytest.raises(BenchError, match="bench db upgrade"):
        Store.open(url)
    with store.engine.begin() as connection:  # what `bench db upgrade` finds at head is left alone
        connection.execute(text(f"UPDATE alembic_version SET version_num = '{SCHEMA_HEAD}'"))
    assert upgrade(store.engine) == SCHEMA_HEAD
    assert Store.open(url).count() == 1


def test_bad_urls_are_one_line_errors(tmp_path):
    with pytest.raises(BenchError, match="bad database URL"):
        Store.open("not a url")
    with pytest.raises(BenchError, match="does not exist"):
        Store.open(f"sqlite:///{tmp_path}/missing/dir/bench.db")


def test_a_run_names_the_machine_that_computed_it(tmp_path):
    """A Ray worker's run carries its own machine (execute() records bench.provenance.machine()); the driver adds
    only its git state. Without one, the driver's machine is recorded; each distinct machine is one row."""
    from bench import provenance
    from bench.models import Environment
    from bench.writes import Writer

    store = Store.open(f"sqlite:///{tmp_path / 'm.db'}")
    worker = {**provenance.machine(), "host": "worker-7", "gpu": "NVIDIA H200"}
    here, there, again = _record(seed=0), _record(seed=1), _record(seed=2)
    there.machine = again.machine = worker
    with Writer(store, "ray") as writer:
        for record in (here, there, again):
            writer.add(record)
    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT r.seed, e.host, e.gpu, e.git_sha FROM runs r JOIN environments e "
                                       "ON r.environment_id = e.id ORDER BY r.seed")).all()
        environments = connection.execute(text(f"SELECT COUNT(*) FROM {Environment.__tablename__}")).scalar()
    assert [(seed, host, gpu) for seed, host, gpu, _ in rows] == [
        (0, provenance.machine()["host"], provenance.machine()["gpu"]), (1, "worker-7", "NVIDIA H200"),
        (2, "worker-7", "NVIDIA H200")]
    assert rows[0][3] == rows[1][3] and environments == 2          # the driver's git state on both rows


def test_execute_records_the_machine_it_ran_on(toy_registry):
    from bench import provenance
    from bench.cells import Entry, make_cell
    from bench.execute import execute

    record = execute(make_cell(toy_registry, Entry("toy_noisy"), Entry("toy_target"), 0), toy_registry)
    assert record.machine == provenance.machine() and record.machine["host"]


def test_is_empty_until_a_run_is_stored(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path}/e.db")
    assert store.is_empty() and store.count() == 0
    store.save(_record(), runner="local")
    assert not store.is_empty() and store.count() == 1
