"""The store's write statements, in one place: dialect inserts, the "done now" test, a batch of runs saved.

Both the Store (one run at a time, bench/store.py) and the drivers' Writer (batches, leases, outages, bench/writes.py)
write through these; neither imports the other.

Upserts use the dialect's own INSERT ... ON CONFLICT (SQLite and PostgreSQL); a batch transaction holds the store's
write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-level advisory lock), so its read-then-write is atomic
against every other driver. Without `force` a save never overwrites a stored `done` of the same task version: the late
record is dropped and its key returned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy import delete, select

from bench.errors import BenchError, mask_secrets
from bench.models import CurvePoint, Lease, MetricValue, Run
from bench.spec import RunRecord

CHUNK = 500  # keys per IN (...) list
SAVE_LOCK = 7242026  # PostgreSQL advisory lock key of the batch transactions (7242025: migrations)


def dialect_insert(connection):
    """The INSERT construct of the connection's dialect (it has on_conflict_do_nothing / _do_update)."""
    name = connection.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        raise BenchError(f"database dialect {name!r} is not supported; use SQLite or PostgreSQL")
    return insert


def keys_in(column, keys: list[str]):
    """`column IN (...)` clauses over `keys`, CHUNK keys each."""
    for start in range(0, len(keys), CHUNK):
        yield column.in_(keys[start:start + CHUNK])


def write_lock(connection) -> None:
    """Take the store's write lock for this transaction (released at commit or rollback)."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SAVE_LOCK})")


def is_current(status: str, stored_version: int, wanted_version: int | None) -> bool:
    """A stored run counts as done only when it finished under the task version the code declares now: a task
    whose version was raised (its world or its scoring changed) makes its older runs stale, to be run again."""
    return status == "done" and (wanted_version is None or stored_version == wanted_version)


def current_done(connection, keys: list[str], versions: Mapping[str, int] | None = None) -> set[str]:
    """The keys with a current done run (`versions`: {run_key: task version now}; None accepts any)."""
    versions = versions or {}
    done: set[str] = set()
    for clause in keys_in(Run.run_key, keys):
        # status is filtered here, not in SQL: with it in the WHERE clause SQLite may pick the status index (every
        # run is 'done') over the unique run_key index: 30 ms a query
        rows = connection.execute(select(Run.run_key, Run.status, Run.task_version).where(clause))
        done.update(k for k, s, v in rows if is_current(s, v, versions.get(k)))
    return done


def cell_keys(cell) -> tuple[str, str]:
    """(run_key, setting_key) of a cell, equal to Cell.run_key and Cell.setting_key: a cell of plain JSON values is
    serialised once, straight (bench.spec's canonical form walks every value first, twice a cell: a third of a
    batch's time); anything else (numpy scalars, other mappings) goes through bench.spec."""
    try:  # json.dumps(..., sort_keys=True, separators=(",", ":")) of both dicts, each part serialised once
        hardware, method, method_config, task, task_config = (
            _dumps(v) for v in (cell.hardware, cell.method, cell.method_config, cell.task, cell.task_config))
        seed = int(cell.seed)
    except (TypeError, ValueError):
        return cell.run_key, cell.setting_key
    head = f'{{"hardware":{hardware},"method":{method},"method_config":{method_config},'
    tail = f'"task":{task},"task_config":{task_config}}}'
    return (hashlib.sha256(f'{head}"seed":{seed},{tail}'.encode()).hexdigest(),
            hashlib.sha256(f"{head}{tail}".encode()).hexdigest())


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def run_row(record: RunRecord, runner: str, environment_id: int, code_version: str, key: str | None = None,
            setting: str | None = None) -> dict:
    """The `runs` row of a record (its keys computed here unless given)."""
    cell = record.cell
    started = datetime.fromtimestamp(record.started_at, UTC).replace(tzinfo=None) if record.started_at else None
    return dict(
        run_key=key or cell_keys(cell)[0], setting_key=setting or cell_keys(cell)[1], method=cell.method,
        method_config=dict(cell.method_config),
        task=cell.task, task_version=record.task_version, task_config=dict(cell.task_config), seed=int(cell.seed),
        hardware=cell.hardware, status=record.status, error=_masked(record.error), started_at=started,
        finished_at=datetime.now(UTC).replace(tzinfo=None), wall_s=record.wall_s,
        cpu_s=record.cpu_s, peak_mem_mb=record.peak_mem_mb, runner=runner, environment_id=environment_id,
        code_version=code_version, log=_masked(record.log),
    )


def _masked(text: str | None) -> str | None:
    """A stored error or log with every URL's secrets masked (a traceback may quote a store's URL)."""
    return text if text is None else mask_secrets(text)


def save_batch(engine, records: list[tuple[RunRecord, str]], environment_ids: list[int], code_version: str,
               force: bool = False, owner: str | None = None, keys: list[str] | None = None,
               setting_keys: list[str] | None = None) -> set[str]:
    """Save (record, runner) pairs in one transaction; releases `owner`'s leases on them.

    `environment_ids`: each record's provenance row (where it ran).

    `keys`, if given, are the records' run_keys (a sha256 of the canonical cell: computed once).
    Returns the run_keys not written because a `done` run was already stored (never without force).
    """
    if keys is None or setting_keys is None:
        keys, setting_keys = map(list, zip(*(cell_keys(record.cell) for record, _ in records), strict=True))
    settings = dict(zip(keys, setting_keys, strict=True))
    environments = dict(zip(keys, environment_ids, strict=True))
    latest = dict(zip(keys, records, strict=True))  # one row per run_key: the last
    keys = list(latest)
    with engine.begin() as connection:
        write_lock(connection)
        if owner:
            for clause in keys_in(Lease.run_key, keys):
                connection.execute(delete(Lease).where(clause, Lease.owner == owner))
        # a stored done run is kept, unless it ran under another task version than this record (stale)
        versions = {k: latest[k][0].task_version for k in keys if latest[k][0].task_version}
        kept = set() if force else current_done(connection, keys, versions)
        write = [k for k in keys if k not in kept]
        if not write:
            return kept
        for clause in keys_in(MetricValue.run_key, write):
            connection.execute(delete(MetricValue).where(clause))
        for clause in keys_in(CurvePoint.run_key, write):
            connection.execute(delete(CurvePoint).where(clause))
        rows = [run_row(*latest[k], environments[k], code_version, k, settings[k]) for k in write]
        insert = dialect_insert(connection)(Run.__table__)
        columns = [c for c in rows[0] if c != "run_key"]
        connection.execute(insert.on_conflict_do_update(index_elements=["run_key"],
                                                        set_={c: insert.excluded[c] for c in columns}), rows)
        _bulk_insert(connection, "metrics", ("run_key", "name", "value"),
                     [(k, name, float(value)) for k in write for name, value in latest[k][0].metrics.items()])
        _bulk_insert(connection, "curves", ("run_key", "name", "step", "value"),
                     [(k, name, int(step), float(value))
                      for k in write for name, curve in latest[k][0].curves.items() for step, value in curve])
    return kept


def _bulk_insert(connection, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Plain rows into `table`, inside the batch's transaction, through the driver itself: SQLite's executemany,
    PostgreSQL's COPY (psycopg); SQLAlchemy's per-row parameter processing took most of a batch's time."""
    if not rows:
        return
    dialect, driver = connection.dialect.name, connection.dialect.driver
    raw = connection.connection.driver_connection
    names = ", ".join(columns)
    if dialect == "sqlite":
        raw.executemany(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})", rows)
    elif dialect == "postgresql" and driver == "psycopg":
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    else:
        model = {"metrics": MetricValue, "curves": CurvePoint}[table]
        connection.execute(model.__table__.insert(), [dict(zip(columns, row, strict=True)) for row in rows])
