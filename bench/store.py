"""The SQL store: open (and check) a database, save run records, read them back.

SQLite at ./bench.db by default (WAL, busy timeout), any SQLAlchemy URL otherwise. A new empty
database gets the schema through the Alembic migrations; a database of an older schema is left
alone with a pointer to `bench db upgrade`; anything else is refused as foreign, untouched.
Only the driver process writes.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from sqlalchemy import create_engine, event, inspect, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError

import bench
from bench import provenance
from bench.errors import BenchError
from bench.models import CurvePoint, Environment, MetricValue, Run
from bench.spec import RunRecord

DEFAULT_URL = "sqlite:///bench.db"
SCHEMA_HEAD = "0003_leases"  # newest Alembic revision; tests check it matches the scripts
OUR_TABLES = {"runs", "metrics", "curves", "environments"}
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"


def resolve_url(url: str | None) -> str:
    return url or os.environ.get("BENCH_DB_URL") or DEFAULT_URL


def _check_sqlite_file(url: str) -> None:
    database = make_url(url).database
    if not database or database == ":memory:":
        return
    path = Path(database)
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb") as fh:
            if fh.read(16) != SQLITE_MAGIC:
                raise BenchError(f"{path} is not a SQLite database; pass --db with a bench database URL")
    elif not path.parent.exists():
        raise BenchError(f"cannot create {path}: folder {path.parent} does not exist")


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # per-connection settings only: WAL is written into the file, so it waits until the file
    # is known to be ours (_enable_wal), and a foreign database is left byte for byte as it was
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise BenchError(f"bad database URL {url!r}; e.g. sqlite:///bench.db or postgresql+psycopg://user@host/db") from None
    if parsed.get_backend_name() == "sqlite":
        _check_sqlite_file(url)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        connect_args = {"connect_timeout": 10} if parsed.get_backend_name() == "postgresql" \
            and "connect_timeout" not in parsed.query else {}
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    except (ModuleNotFoundError, ImportError) as exc:
        raise BenchError(f"no driver for {parsed.drivername}: {exc}; install it (e.g. pip install psycopg)") from None


def _enable_wal(engine: Engine) -> None:
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        with engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA journal_mode=WAL")


def _alembic_config(connection):
    from alembic.config import Config  # imported only when migrating

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine) -> str:
    """Apply every migration (alembic upgrade head); returns the revision now in force."""
    from alembic import command

    state = schema_state(engine)
    if state == "foreign":
        raise BenchError(f"{engine.url.render_as_string(hide_password=True)} holds tables that are not a bench store; refusing to migrate it")
    with engine.begin() as connection:
        # drivers opening one new database at once: one migrates, inside one transaction, and the
        # others then find the schema at head (SQLite's DDL is transactional once a write lock is held)
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(7242025)"))
        elif connection.dialect.name == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        command.upgrade(_alembic_config(connection), "head")
    _enable_wal(engine)
    return SCHEMA_HEAD


def schema_state(engine: Engine) -> str:
    """'empty', 'current', 'old:<rev>' or 'foreign'."""
    try:
        with engine.connect() as connection:
            tables = set(inspect(connection).get_table_names())
            if not tables:
                return "empty"
            if "alembic_version" not in tables or not OUR_TABLES <= tables:
                return "foreign"
            revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except OperationalError as exc:
        raise BenchError(f"cannot open database {engine.url.render_as_string(hide_password=True)}: {exc.orig}") from None
    except DatabaseError as exc:
        raise BenchError(f"{engine.url.render_as_string(hide_password=True)} is not a readable database: {exc.orig}") from None
    if revision == SCHEMA_HEAD:
        return "current"
    return f"old:{revision}"


class Store:
    """Read and write runs. `Store.open(url)` checks the database before anything is written."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._environment_id: int | None = None
        self._code_version: str = bench.__version__
        self.retry_s: float | None = None  # seconds saves retry through an outage (None: BENCH_STORE_RETRY_S or 60)

    @classmethod
    def open(cls, url: str | None = None, create: bool = True, readonly: bool = False) -> "Store":
        """Open and check a store; `readonly` (the web app) writes nothing, not even the WAL switch."""
        create = create and not readonly
        engine = make_engine(resolve_url(url))
        database = engine.url.database
        if not create and engine.dialect.name == "sqlite" and database not in (None, "", ":memory:") \
                and not Path(database).exists():
            raise BenchError(f"no bench store at {database}: run `bench run` or `bench grid` first, or pass --db")
        state = schema_state(engine)
        if state == "empty" and create:
            upgrade(engine)
        elif state == "foreign":
            raise BenchError(
                f"{engine.url.render_as_string(hide_password=True)} is not a bench database (foreign tables); "
                "pass --db with another URL"
            )
        elif state.startswith("old:"):
            raise BenchError(f"database schema is at revision {state[4:]}, this code needs {SCHEMA_HEAD}: run `bench db upgrade`")
        elif state == "empty":
            raise BenchError(f"{engine.url.render_as_string(hide_password=True)} holds no bench store yet: run a grid or `bench db upgrade` first")
        if not readonly:
            _enable_wal(engine)
        return cls(engine)

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def environment_id(self) -> int:
        """The provenance row of this process, inserted once."""
        if self._environment_id is None:
            env = provenance.collect()
            if env["git_sha"]:
                dirty = "+dirty" if env["git_dirty"] else ""
                self._code_version = f"{bench.__version__}+g{env['git_sha'][:12]}{dirty}"
            with self.engine.begin() as connection:
                # insert-if-absent by the unique fingerprint, then read: several drivers starting at
                # once on one database race here, and the database's uniqueness settles it
                insert = _dialect_insert(connection)(Environment.__table__).values(**env, created_at=_now())
                connection.execute(insert.on_conflict_do_nothing(index_elements=["fingerprint"]))
                found = connection.execute(select(Environment.id).where(Environment.fingerprint == env["fingerprint"])).scalar()
            self._environment_id = found
        return self._environment_id

    def done_keys(self, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        done: set[str] = set()
        with self.engine.connect() as connection:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                # status is filtered here, not in SQL: with it in the WHERE clause SQLite may pick the
                # status index (every run is 'done') over the unique run_key index: 30 ms a query
                rows = connection.execute(select(Run.run_key, Run.status).where(Run.run_key.in_(chunk)))
                done.update(key for key, status in rows if status == "done")
        return done

    def save(self, record: RunRecord, runner: str, force: bool = False) -> bool:
        """Insert or replace this cell's run with its metrics and curves, in one transaction.

        A stored `done` run is kept (the record dropped, False returned) unless `force`. Drivers
        save through bench.writes.Writer, which batches these and retries through outages.
        """
        from bench.writes import save_batch

        kept = save_batch(self.engine, [(record, runner)], self.environment_id(), self._code_version, force=force)
        return not kept

    def runs(self, **filters) -> list[Run]:
        """Run rows matching equality filters (method=..., task=..., status=...), oldest first."""
        query = select(Run).order_by(Run.id)
        for name, value in filters.items():
            if value is not None:
                query = query.where(getattr(Run, name) == value)
        with self.engine.connect() as connection:
            return list(connection.execute(query).all())

    def metrics(self, run_keys: Iterable[str]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        keys = list(run_keys)
        with self.engine.connect() as connection:
            for start in range(0, len(keys), 500):
                rows = connection.execute(select(MetricValue).where(MetricValue.run_key.in_(keys[start:start + 500])))
                for row in rows:
                    out.setdefault(row.run_key, {})[row.name] = row.value
        return out

    def curve(self, run_key: str, name: str) -> list[tuple[int, float]]:
        query = select(CurvePoint.step, CurvePoint.value).where(
            CurvePoint.run_key == run_key, CurvePoint.name == name).order_by(CurvePoint.step)
        with self.engine.connect() as connection:
            return [(int(s), float(v)) for s, v in connection.execute(query)]

    def count(self) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(text("SELECT COUNT(*) FROM runs")).scalar())


def _dialect_insert(connection):
    name = connection.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        raise BenchError(f"database dialect {name!r} is not supported; use SQLite or PostgreSQL")
    return insert


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)
