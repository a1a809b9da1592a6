"""The store on both backends: SQLite and a real PostgreSQL server on loopback (tests/pg.py).

Run by hand, the PostgreSQL half starts the machine's cluster or skips saying why; under CI
(CI=true) a missing server fails these tests instead.
"""

import multiprocessing as mp
import os
import subprocess
import sys

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bench.errors import BenchError
from bench.spec import Cell, RunRecord
from bench.store import SCHEMA_HEAD, Store, schema_state, upgrade
from tests.pg import pg_server_url, pg_session_url, pg_url  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration  # a real PostgreSQL

TABLES = ("curves", "metrics", "runs", "environments")


def _record(seed=0, status="done", value=1.0, method="m"):
    cell = Cell(method, "t", seed, {"c": 1.0, "nested": {"a": [1, 2]}}, {"beta": 0.01})
    return RunRecord(cell, status, task_version=1, metrics={"final_gap": value, "other": 2.0},
                     curves={"gap": [(1, 3.0), (10, 2.0)]}, error=None if status == "done" else "boom",
                     started_at=1.7e9, wall_s=0.5, peak_mem_mb=100.0)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request, tmp_path):
    """A URL of an empty store on each backend (PostgreSQL: the session database, emptied)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bench.db'}"
    url = request.getfixturevalue("pg_session_url")
    Store.open(url)  # the schema, once
    with Store.open(url).engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
    return url


def test_upsert_metrics_curves_and_json_round_trip(backend_url):
    store = Store.open(backend_url)
    store.save(_record(status="failed"), runner="local")
    assert store.done_keys([_record().cell.run_key]) == set()
    store.save(_record(value=0.25), runner="ray")
    rows = store.runs()
    assert len(rows) == 1 and rows[0].status == "done" and rows[0].error is None and rows[0].runner == "ray"
    assert rows[0].method_config == {"c": 1.0, "nested": {"a": [1, 2]}} and rows[0].task_config == {"beta": 0.01}
    assert store.metrics([rows[0].run_key]) == {rows[0].run_key: {"final_gap": 0.25, "other": 2.0}}
    assert store.curve(rows[0].run_key, "gap") == [(1, 3.0), (10, 2.0)]
    assert store.done_keys([rows[0].run_key, "x" * 64]) == {rows[0].run_key}
    assert [r.seed for r in store.runs(status="done")] == [0] and store.runs(status="failed") == []


def test_environment_is_recorded_once(backend_url):
    store = Store.open(backend_url)
    store.save(_record(seed=0), runner="local")
    Store.open(backend_url).save(_record(seed=1), runner="local")  # a second driver, same machine
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM environments")).scalar() == 1
        assert connection.execute(text("SELECT COUNT(DISTINCT environment_id) FROM runs")).scalar() == 1


def _writer(url: str, worker: int, barrier, errors) -> None:
    try:
        store = Store.open(url)
        barrier.wait(timeout=60)
        for seed in range(40):  # every writer saves the same 40 cells (and 10 of its own)
            store.save(_record(seed=seed, value=float(worker)), runner=f"w{worker}")
        for seed in range(10):
            store.save(_record(seed=seed, method=f"own{worker}"), runner=f"w{worker}")
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"writer {worker}: {type(exc).__name__}: {exc}")
        raise


def _run_writers(url: str, n: int) -> list[str]:
    ctx = mp.get_context("spawn")  # fresh interpreters: no shared connections, like separate drivers
    barrier, errors = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, i, barrier, errors)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
    found = []
    while not errors.empty():
        found.append(errors.get())
    found += [f"writer exit code {p.exitcode}" for p in procs if p.exitcode != 0]
    return found


def test_concurrent_writers_never_duplicate_a_run_key(backend_url):
    n = 4
    Store.open(backend_url)
    assert _run_writers(backend_url, n) == []
    store = Store.open(backend_url)
    with store.engine.connect() as connection:
        q = lambda sql: connection.execute(text(sql)).scalar()  # noqa: E731
        assert q("SELECT COUNT(*) FROM runs") == 40 + 10 * n
        assert q("SELECT COUNT(DISTINCT run_key) FROM runs") == 40 + 10 * n
        assert q("SELECT COUNT(*) FROM metrics") == 2 * (40 + 10 * n)  # no metric row twice
        assert q("SELECT COUNT(*) FROM curves") == 2 * (40 + 10 * n)
        assert q("SELECT COUNT(*) FROM environments") == 1
    # each shared run's metrics come from one writer: the same writer as its row says
    for row in store.runs(method="m"):
        assert store.metrics([row.run_key])[row.run_key]["final_gap"] == float(row.runner[1:])


def test_postgres_enforces_run_key_uniqueness_itself(pg_session_url):
    store = Store.open(pg_session_url)
    store.save(_record(seed=99), runner="local")
    with pytest.raises(IntegrityError):
        with store.engine.begin() as connection:  # a plain insert, no upsert: the database refuses it
            connection.execute(text(
                "INSERT INTO runs (run_key, method, method_config, task, task_version, task_config, seed, hardware,"
                " status, runner) SELECT run_key, method, method_config, task, task_version, task_config, seed,"
                " hardware, status, runner FROM runs WHERE seed = 99"))
    assert len(store.runs(seed=99)) == 1


def test_drivers_opening_one_new_postgres_database_at_once(pg_url):
    assert _run_writers(pg_url, 3) == []  # each Store.open finds the database empty and migrates
    store = Store.open(pg_url)
    assert schema_state(store.engine) == "current" and store.count() == 40 + 30


def test_unreachable_database_is_a_one_line_error():
    url = "postgresql+psycopg://someone:secret@127.0.0.1:1/bench"
    with pytest.raises(BenchError) as caught:
        Store.open(url)
    message = str(caught.value)
    assert message.startswith("cannot open database postgresql+psycopg://someone:***@127.0.0.1:1/bench")
    assert "secret" not in message
    cli = subprocess.run([sys.executable, "-m", "bench", "status", "--db", url], capture_output=True, text=True,
                         timeout=60)
    assert (cli.returncode == 2 and cli.stderr.startswith("error: cannot open database")
            and len(cli.stderr.splitlines()) == 1)
    assert "secret" not in cli.stderr and "Traceback" not in cli.stderr


def test_db_upgrade_migrates_an_existing_postgres_database(pg_url):
    env = {**os.environ, "BENCH_DB_URL": pg_url}
    created = subprocess.run([sys.executable, "-m", "bench", "db", "upgrade"], capture_output=True, text=True, env=env,
                             timeout=120)
    assert created.returncode == 0, created.stderr
    assert f"schema at {SCHEMA_HEAD}" in created.stdout and "bench_test" in created.stdout
    store = Store.open(pg_url)
    store.save(_record(), runner="local")
    with store.engine.begin() as connection:  # an older revision than this code's
        connection.execute(text("UPDATE alembic_version SET version_num = '0001_initial'"))  # a revision this code
                                                                                             # knows
    with pytest.raises(BenchError, match="bench db upgrade"):
        Store.open(pg_url)
    with store.engine.begin() as connection:
        connection.execute(text(f"UPDATE alembic_version SET version_num = '{SCHEMA_HEAD}'"))
    again = subprocess.run([sys.executable, "-m", "bench", "db", "upgrade"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert upgrade(store.engine) == SCHEMA_HEAD
    assert Store.open(pg_url).count() == 1 and Store.open(pg_url).runs()[0].status == "done"


def test_foreign_postgres_database_is_refused_and_kept(pg_url):
    from sqlalchemy import create_engine

    engine = create_engine(pg_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE customers (id INTEGER, name TEXT)"))
        connection.execute(text("INSERT INTO customers VALUES (1, 'ada')"))
    with pytest.raises(BenchError, match="not a bench database"):
        Store.open(pg_url)
    with pytest.raises(BenchError, match="not a bench store"):
        upgrade(engine)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT * FROM customers")).all() == [(1, "ada")]
    engine.dispose()
