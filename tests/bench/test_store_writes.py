"""How drivers write (bench.writes): leases, no result replaced, batches, outages, safe creation.

Each behaviour on SQLite and on a real PostgreSQL (tests/pg.py); the outage tests stop and
restart a PostgreSQL server of their own.
"""

import multiprocessing as mp
import os
import threading
import time

import pytest
from sqlalchemy import text

from bench.errors import BenchError
from bench.models import Lease
from bench.spec import Cell, RunRecord
from bench.sql import save_batch
from bench.store import SCHEMA_HEAD, Store, schema_state
from bench.writes import Writer, claim, retry_budget
from tests.pg import pg_server_url, pg_url, private_pg, sqlite_or_pg_url  # noqa: F401 - fixtures (url)


def _record(seed=0, status="done", value=1.0):
    cell = Cell("m", "t", seed, {"c": 1.0}, {"beta": 0.01})
    return RunRecord(cell, status, task_version=1, metrics={"final_gap": value} if status == "done" else {},
                     curves={"gap": [(1, 3.0), (10, value)]} if status == "done" else {},
                     error=None if status == "done" else "boom", started_at=1.7e9, wall_s=0.5)


def _counts(store):
    with store.engine.connect() as connection:
        return tuple(connection.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar()
                     for t in ("runs", "metrics", "curves"))


def test_a_done_run_is_never_replaced_by_a_worse_one_unless_forced(url):
    store = Store.open(url)
    key = _record().cell.run_key
    assert store.save(_record(value=0.25), runner="local")
    assert not store.save(_record(status="timeout"), runner="local")  # the late timeout of a second driver
    assert not store.save(_record(value=9.0), runner="local")  # nor a second done: the first result stands
    assert [r.status for r in store.runs()] == ["done"] and store.metrics([key]) == {key: {"final_gap": 0.25}}
    assert store.curve(key, "gap") == [(1, 3.0), (10, 0.25)]
    assert store.save(_record(status="timeout"), runner="local", force=True)  # --force reruns, and replaces
    assert ([r.status for r in store.runs()] == ["timeout"] and store.metrics([key]) == {}
            and _counts(store) == (1, 0, 0))
    assert store.save(_record(value=0.5), runner="local")  # a failure is replaced by a done
    assert store.metrics([key]) == {key: {"final_gap": 0.5}} and _counts(store) == (1, 1, 2)


def test_leases_keep_a_cell_with_one_live_driver_and_expire(url):
    store = Store.open(url)
    keys = [_record(seed=s).cell.run_key for s in range(4)]
    assert claim(store.engine, keys[:3], "hostA:1:a", ttl_s=60, force=False) == (set(keys[:3]), set())
    claimed, done = claim(store.engine, keys, "hostB:1:b", ttl_s=60, force=False)
    assert claimed == {keys[3]} and done == set()  # A's three are leased and alive
    with store.engine.begin() as connection:  # A stops beating on keys[0]: its heartbeat ages past the TTL
        connection.execute(Lease.__table__.update().where(Lease.run_key == keys[0]).values(heartbeat=time.time() - 61))
    assert claim(store.engine, keys, "hostB:1:b", ttl_s=60, force=False)[0] == {keys[0], keys[3]}
    save_batch(store.engine, [(_record(seed=1), "local")], [store.environment_id()], "v", owner="hostA:1:a")
    claimed, done = claim(store.engine, keys, "hostC:1:c", ttl_s=60, force=False)
    assert claimed == set() and done == {keys[1]}  # finished (its lease went with the save): not run again
    with store.engine.connect() as connection:
        owners = dict(connection.execute(text("SELECT run_key, owner FROM leases")).all())
    assert owners == {keys[0]: "hostB:1:b", keys[2]: "hostA:1:a", keys[3]: "hostB:1:b"}


def test_a_lease_of_a_dead_process_of_this_host_is_taken_over_at_once(store, tmp_path):
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    key, other = _record().cell.run_key, _record(seed=1).cell.run_key
    claim(store.engine, [key], f"{socket.gethostname()}:{int(dead.stdout)}:x", ttl_s=60, force=False)
    claim(store.engine, [other], f"{socket.gethostname()}:{os.getpid()}:y", ttl_s=60, force=False)  # alive: this test
    assert claim(store.engine, [key, other], "elsewhere:2:z", ttl_s=60, force=False)[0] == {key}


def test_the_writer_batches_and_flushes_everything_on_close(url):
    store = Store.open(url)
    writer = Writer(store, "local", flush_s=3600, flush_runs=3)
    for seed in range(2):
        writer.add(_record(seed=seed))
    assert store.count() == 0 and writer.due_in() > 60  # held: neither 200 runs nor the interval yet
    writer.add(_record(seed=2))
    assert store.count() == 3  # the third filled the batch
    writer.add(_record(seed=3))
    writer.close()  # what a runner does in `finally` (Ctrl-C included)
    assert store.count() == 4 and _counts(store) == (4, 4, 8) and writer.saved == 4


def test_store_writes_10000_runs_in_batches_of_200(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    writer = Writer(store, "local", flush_s=3600)
    for seed in range(1000):
        writer.add(_record(seed=seed, value=float(seed)))
    writer.close()
    assert _counts(store) == (1000, 1000, 2000)
    row = store.runs(seed=777)[0]
    assert store.metrics([row.run_key]) == {row.run_key: {"final_gap": 777.0}}


def test_retry_budget_from_flag_or_environment(monkeypatch):
    monkeypatch.delenv("BENCH_STORE_RETRY_S", raising=False)
    assert retry_budget() == 60.0 and retry_budget(5) == 5.0
    monkeypatch.setenv("BENCH_STORE_RETRY_S", "2.5")
    assert retry_budget() == 2.5
    for bad in ("-1", "inf", "nan", "soon"):
        monkeypatch.setenv("BENCH_STORE_RETRY_S", bad)
        with pytest.raises(BenchError, match="store retry time"):
            retry_budget()


@pytest.mark.integration
def test_saves_wait_through_a_postgres_restart(private_pg, capfd):
    store = Store.open(private_pg.url)
    writer = Writer(store, "local", retry_s=60, flush_s=3600)
    writer.add(_record(seed=0))
    writer.flush()
    private_pg.stop()
    restart = threading.Timer(2.0, private_pg.start)
    restart.start()
    try:
        writer.add(_record(seed=1))
        writer.add(_record(seed=2))
        started = time.monotonic()
        writer.flush()  # the server is down: retried until it is back
        waited = time.monotonic() - started
    finally:
        restart.join()
    assert waited >= 1.0 and writer.saved == 3
    assert _counts(Store.open(private_pg.url)) == (3, 3, 6)
    assert "store unreachable" in capfd.readouterr().err


@pytest.mark.integration
def test_an_outage_past_the_retry_time_stops_with_one_line(private_pg):
    store = Store.open(private_pg.url)
    writer = Writer(store, "local", retry_s=1.0, flush_s=3600)
    writer.add(_record(seed=0))
    writer.flush()
    private_pg.stop()
    writer.add(_record(seed=1))
    with pytest.raises(BenchError) as caught:
        writer.flush()
    message = str(caught.value)
    assert "unreachable for 1 s" in message and "1 finished cells of this run are stored" in message
    assert "1 finished but not saved will run again" in message and "rerun the same command" in message
    assert "\n" not in message
    writer.close()  # gave up: no second wait


def _create(url, barrier, errors):
    try:
        barrier.wait(timeout=30)
        Store.open(url).save(_record(), runner="local")
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(exc).__name__}: {exc}")
        raise


def _create_at_once(url, n):
    ctx = mp.get_context("fork")
    barrier, errors = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_create, args=(url, barrier, errors)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    found = [p.exitcode for p in procs if p.exitcode != 0]
    while not errors.empty():
        found.append(errors.get())
    return found


def test_several_drivers_creating_one_new_sqlite_store_at_once(tmp_path):
    for trial in range(4):  # unserialised, one of two creators failed in 5 of 14 trials
        url = f"sqlite:///{tmp_path / f'new{trial}.db'}"
        assert _create_at_once(url, 6) == []
        store = Store.open(url)
        assert schema_state(store.engine) == "current" and store.count() == 1


@pytest.mark.integration
def test_several_drivers_creating_one_new_postgres_store_at_once(pg_url):
    assert _create_at_once(pg_url, 6) == []
    assert Store.open(pg_url).count() == 1


def test_downgrade_below_0002_keeps_every_metric_and_curve(tmp_path):
    from alembic import command

    from bench.store import _alembic_config

    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    for seed in range(3):
        store.save(_record(seed=seed), runner="local")
    with store.engine.begin() as connection:
        command.downgrade(_alembic_config(connection), "0001_initial")
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0001_initial"
        columns = [row[1] for row in connection.execute(text("PRAGMA table_info(runs)"))]
    assert "setting_key" not in columns and _counts(store) == (3, 3, 6)  # cascading deletes took these to 0
    with store.engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "head")
    assert schema_state(store.engine) == "current" and SCHEMA_HEAD == "0008_board_indexes"
    assert _counts(store) == (3, 3, 6)
    assert {r.setting_key for r in store.runs()} == {_record().cell.setting_key}


def _disk_full(*_args, **_kwargs):
    from sqlalchemy.exc import OperationalError

    raise OperationalError("INSERT INTO runs ...", {}, Exception("database or disk is full"))


def test_a_full_disk_stops_the_writer_with_what_is_stored_and_no_lease_left(tmp_path, monkeypatch):
    """An environment fault: an EnvironmentFault (exit 3) that says what is stored and that a rerun resumes; the
    writer's leases are released."""
    import bench.writes as writes
    from bench.errors import EnvironmentFault

    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    writer = Writer(store, "local", flush_s=3600)
    records = [_record(seed=s) for s in range(3)]
    claimed, _ = writer.claim([r.cell.run_key for r in records])
    assert len(claimed) == 3
    writer.add(records[0])
    writer.flush()
    monkeypatch.setattr(writes, "save_batch", _disk_full)
    writer.add(records[1])
    with pytest.raises(EnvironmentFault) as caught:
        writer.flush()
    message = str(caught.value)
    assert message.startswith("disk full (database or disk is full): 1 finished cells of this run are stored")
    assert "1 finished but not saved will run again" in message and "rerun the same command to resume" in message
    writer.close()  # what the runner's `finally` does: no second attempt at the batch, the leases released
    assert store.count() == 1
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM leases")).scalar() == 0


def test_environment_faults_exit_3_in_one_line_and_a_rerun_resumes(tmp_path, monkeypatch, capsys):
    """Through the CLI: a grid whose store's disk fills up after its first batch exits 3 (not 2, a usage error)."""
    import sys

    import bench.writes as writes
    from app import cli

    url = f"sqlite:///{tmp_path / 'bench.db'}"
    argv = ["bench", "grid", "-m", "sgd", "-t", "performative", "--set", "T=50", "--seeds", "0-5", "--db", url]
    real, calls = writes.save_batch, []

    def fills_up(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) if len(calls) == 1 else _disk_full()

    monkeypatch.setattr(writes, "save_batch", fills_up)
    monkeypatch.setattr(writes, "FLUSH_RUNS", 2)  # batches of two runs: the disk fills up after the first
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    err = capsys.readouterr().err.strip().splitlines()
    stored = Store.open(url).count()
    assert ended.value.code == 3 and 1 <= stored < 6, err
    assert err[-1].startswith("error: disk full (database or disk is full): ")
    assert f"{stored} finished cells of this run are stored" in err[-1] and "rerun the same command" in err[-1]
    monkeypatch.setattr(writes, "save_batch", real)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 0 and f"{stored} already done" in capsys.readouterr().err
    assert Store.open(url).count() == 6


def test_the_writers_keys_are_the_cells_own():
    """cell_keys serialises a plain cell once, straight: the same run_key and setting_key as bench.spec's, and
    bench.spec's own for what only it handles (numpy scalars)."""
    import numpy as np

    from bench.sql import cell_keys

    cells = [Cell("m", "t", 3, {"c": 1.0, "l": (1, 2), "n": None, "b": True, "s": "x", "d": {"z": 1, "a": [1.5]}},
                  {"beta": 0.01}, "cuda:a100"),
             Cell("m", "t", np.int64(4), {"c": np.float64(0.5), "k": np.int32(2)}, {}),
             Cell("\u00e9", "t", 0, {"\u00fc": "\u00df", "e": 1e-300}, {"x": -0.0}),
             _record(seed=7).cell]
    for cell in cells:
        assert cell_keys(cell) == (cell.run_key, cell.setting_key), cell


def test_out_of_memory_and_a_full_disk_are_environment_faults_and_other_errors_are_not(tmp_path):
    import errno

    from bench.errors import EnvironmentFault
    from bench.writes import environment_fault

    assert environment_fault(MemoryError()) == "out of memory"
    assert environment_fault(OSError(errno.ENOSPC, "No space left on device")) == "disk full"
    assert environment_fault(OSError(errno.ENOMEM, "Cannot allocate memory")) == "out of memory"
    assert environment_fault(OSError(errno.EACCES, "Permission denied")) is None
    assert environment_fault(ValueError("disk is full")) is None
    writer = Writer(Store.open(f"sqlite:///{tmp_path / 'bench.db'}"), "local")
    fault = writer.fault(MemoryError())
    assert isinstance(fault, EnvironmentFault) and str(fault).startswith("out of memory (MemoryError): 0 finished")
    assert "free memory and rerun the same command to resume" in str(fault)
    assert writer.fault(KeyError("x")) is None


def test_a_write_session_leaves_sqlite_statistics_that_pick_the_setting_index(tmp_path):
    """Without sqlite_stat1 the planner reads runs through ix_runs_status (nearly every row); after a write session
    the statistics exist and a read by setting uses the setting's index."""
    store = Store.open(f"sqlite:///{tmp_path}/s.db")
    with Writer(store, "local", flush_s=3600) as writer:
        for seed in range(60):
            writer.add(_record(seed))
    with store.engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'runs'")).scalar() > 0
        plan = " ".join(str(r[-1]) for r in c.execute(text(
            "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE setting_key = 'x' AND status = 'done'")))
    assert "ix_runs_status" not in plan, plan
