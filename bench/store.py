"""The SQL store: open (and check) a database, save run records, read them back.

SQLite at ./bench.db by default (WAL, busy timeout), any SQLAlchemy URL otherwise. A new empty
database gets the schema through the Alembic migrations; a database of an older schema is left
alone with a pointer to `bench db upgrade`; anything else is refused as foreign, untouched.
Only the driver process writes.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, event, inspect, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError, OperationalError

import bench
from bench import provenance
from bench.errors import BenchError, mask_secrets
from bench.models import CurvePoint, Environment, MetricValue, Run
from bench.spec import RunRecord
from bench.sql import current_done, dialect_insert, save_batch

DEFAULT_URL = "sqlite:///bench.db"
SCHEMA_HEAD = "0008_board_indexes"  # newest Alembic revision; tests check it matches the scripts
OUR_TABLES = {"runs", "metrics", "curves", "environments"}
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"


PASSWORD_FILE_ENV = "BENCH_DB_PASSWORD_FILE"  # a Ray job reads its store's password from this file (app.cluster)


def mask_url(url: object) -> str:
    """The URL (or any text quoting URLs) with every secret as ***: the user-info's password, a `password=` query
    parameter and any parameter whose name looks like a secret; also for a URL that does not parse. The only form
    ever shown (bench.errors.mask_secrets, which every message, log line, page and stored error goes through)."""
    return mask_secrets(url)


def shown_url(engine: Engine) -> str:
    """The engine's URL as it may be shown: masked (render_as_string hides only the user-info's password)."""
    return mask_secrets(engine.url.render_as_string(hide_password=True))


def resolve_url(url: str | None) -> str:
    """--db, else BENCH_DB_URL, else ./bench.db; an empty --db is refused (it is a typo, not "the default").

    With BENCH_DB_PASSWORD_FILE set (a submitted Ray job), the password is read from that file
    and put into a URL that carries none, so it never sits on a command line or in a job's env.
    """
    if url is not None and not url.strip():
        raise BenchError("--db is empty; give a database URL such as sqlite:///bench.db (or leave --db out)")
    if url is None:
        url = os.environ.get("BENCH_DB_URL")
        if url is not None and not url.strip():
            raise BenchError("BENCH_DB_URL is empty; set it to a database URL such as sqlite:///bench.db, or unset it")
    url = url or DEFAULT_URL
    secret_file = os.environ.get(PASSWORD_FILE_ENV)
    if secret_file:
        url = _with_password_from(url, Path(secret_file))
    return url


_TAKEN_PASSWORDS: dict[str, str] = {}  # password file (absolute) -> its text, read once


def take_password_file() -> None:
    """Read BENCH_DB_PASSWORD_FILE (a submitted Ray job's) into memory and remove the file at once.

    `bench` does this first thing, whatever the command and whatever its outcome, so the job's copy of the password
    on the Ray head (its unpacked working directory) is gone as soon as the job starts; `resolve_url` then takes the
    password from memory. A file that is missing here is reported by `resolve_url`, when a store is opened."""
    secret_file = os.environ.get(PASSWORD_FILE_ENV)
    if secret_file:
        try:
            _password_from(Path(secret_file))
        except BenchError:
            return
        # a process this one starts (a re-exec, a subprocess) finds the complete URL in its environment, which only
        # its owner can read, as the job's runtime environment was: the file is gone
        if os.environ.get("BENCH_DB_URL"):
            os.environ["BENCH_DB_URL"] = _with_password_from(os.environ["BENCH_DB_URL"], Path(secret_file))


def _password_from(path: Path) -> str:
    key = str(path.absolute())
    if key not in _TAKEN_PASSWORDS:
        try:
            _TAKEN_PASSWORDS[key] = path.read_text().rstrip("\n")
        except OSError as exc:
            raise BenchError(f"cannot read the store's password file {path} ({PASSWORD_FILE_ENV}): "
                             f"{exc.strerror}") from None
        try:
            path.unlink()  # read once: no copy of the password stays on disk
        except OSError:
            pass
    return _TAKEN_PASSWORDS[key]


def _with_password_from(url: str, path: Path) -> str:
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return url  # make_engine reports the bad URL
    if parsed.password is not None:
        return url
    return parsed.set(password=_password_from(path)).render_as_string(hide_password=False)


def _check_sqlite_file(url: str) -> None:
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if path.is_dir():
        raise BenchError(f"{path} is a directory, not a database file; "
                         f"pass --db sqlite:///{path}/bench.db or another file")
    if path.exists() and path.stat().st_size > 0:
        try:
            with path.open("rb") as fh:
                magic = fh.read(16)
        except OSError as exc:
            raise BenchError(f"cannot read {path}: {exc.strerror}") from None
        if magic != SQLITE_MAGIC:
            raise BenchError(f"{path} is not a SQLite database; pass --db with a bench database URL")
    elif not path.exists() and not path.parent.is_dir():
        raise BenchError(f"cannot create {path}: folder {path.parent} does not exist")


def sqlite_path(engine: Engine) -> Path | None:
    """The file of a SQLite store (None for another backend or an in-memory database)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or database in (None, "", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def _read_only(path: Path) -> bool:
    """A file nobody may write (mode without w bits), or one this process may not write.

    The mode is checked too because root passes every access check: a store made read-only on
    purpose is refused to writers even then, before a cell is computed and then lost.
    """
    if not path.exists():
        return not os.access(path.parent, os.W_OK)
    return not (path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(path, os.W_OK) \
        or not os.access(path.parent, os.W_OK)  # SQLite writes its -wal and -shm files beside the store


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # per-connection settings only: WAL is written into the file, so it waits until the file
    # is known to be ours (_enable_wal), and a foreign database is left byte for byte as it was
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # bulk loads (a batch writes 200 runs and their metrics and curves at once): a 64 MiB page cache, temporary
    # b-trees (the IN lists' sorts) in memory, and the WAL checkpointed into the file every 16,384 pages (64 MiB)
    # rather than every 1,000: 10,000 runs stored in 2.3 s instead of 3.2-4.5 (benchmarks/store_writes.py)
    cursor.execute("PRAGMA cache_size=-65536")
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.execute("PRAGMA wal_autocheckpoint=16384")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for a checked URL; every malformed URL is a one-line error that masks the password."""
    example = "e.g. sqlite:///bench.db or postgresql+psycopg://user@host/db"
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise BenchError(f"bad database URL {mask_url(url)!r}; {example}") from None
    except ValueError as exc:  # a port that is not a number
        raise BenchError(f"bad database URL {mask_url(url)!r} ({exc}); {example}") from None
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise BenchError(f"bad database URL {mask_url(url)!r}: port {parsed.port} is not in 1-65535")
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise BenchError(f"database {parsed.drivername!r} in {mask_url(url)!r} is not supported; "
                         f"use SQLite or PostgreSQL, {example}")
    if backend == "sqlite":
        _check_sqlite_file(url)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        connect_args = {"connect_timeout": 10} if "connect_timeout" not in parsed.query else {}
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    except NoSuchModuleError:
        raise BenchError(f"unknown database driver {parsed.drivername!r} in {mask_url(url)!r}; {example}") from None
    except (ModuleNotFoundError, ImportError) as exc:
        raise BenchError(f"no driver for {parsed.drivername}: {exc}; install it (e.g. pip install psycopg)") from None


def _enable_wal(engine: Engine, wait_s: float = 30.0) -> None:
    """Switch a SQLite store to WAL (persistent in the file). Changing the journal mode needs the file to
    itself, and SQLite answers "database is locked" at once, without its busy handler, while another driver
    that opened the new store at the same moment holds it: so retry with backoff, and skip once it is WAL."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return
    deadline, pause = time.monotonic() + wait_s, 0.01
    while True:
        try:
            with engine.connect() as connection:
                if connection.exec_driver_sql("PRAGMA journal_mode").scalar() != "wal":
                    connection.exec_driver_sql("PRAGMA journal_mode=WAL")
            return
        except OperationalError as exc:
            if "locked" not in str(exc.orig) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.5)


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
        raise BenchError(f"{shown_url(engine)} holds tables that are not a bench store; "
                         "refusing to migrate it")
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


def known_revisions() -> list[str]:
    """The revision ids of this code's migration scripts, read from the files (no Alembic import)."""
    pattern = re.compile(r"^revision(?:\s*:\s*str)?\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)
    return [m.group(1) for script in sorted((MIGRATIONS / "versions").glob("*.py"))
            for m in pattern.finditer(script.read_text())]


def _check_pages(connection, engine: Engine) -> None:
    """SQLite: every page of the file is readable and consistent (a corrupt file is refused before
    a cell runs, and `db upgrade` never reports success on one). Read-only; milliseconds per MB."""
    if sqlite_path(engine) is None:
        return
    try:
        problems = [row[0] for row in connection.exec_driver_sql("PRAGMA quick_check(3)")]
    except DatabaseError as exc:  # a page so broken that the check itself stops
        problems = [_first_line(exc.orig)]
    if problems != ["ok"]:
        raise BenchError(f"{sqlite_path(engine)} is a corrupt SQLite database ({'; '.join(problems)}); "
                         "restore it from a backup or pass --db with another store")


def schema_state(engine: Engine) -> str:
    """'empty', 'current', 'old:<rev>' or 'foreign'; a corrupt file or a newer schema is a BenchError."""
    shown = shown_url(engine)
    try:
        with engine.connect() as connection:
            _check_pages(connection, engine)
            tables = set(inspect(connection).get_table_names())
            if not tables:
                return "empty"
            if "alembic_version" not in tables or not OUR_TABLES <= tables:
                return "foreign"
            revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except OperationalError as exc:
        raise BenchError(f"cannot open database {shown}: {_first_line(exc.orig)}") from None
    except DatabaseError as exc:
        raise BenchError(f"{shown} is not a readable database: {_first_line(exc.orig)}") from None
    if revision == SCHEMA_HEAD:
        return "current"
    if revision not in known_revisions():
        raise BenchError(f"database schema is at revision {revision!r}, newer than (or unknown to) this code's "
                         f"{SCHEMA_HEAD}: update bench to the version that wrote it; nothing was changed")
    return f"old:{revision}"


def _first_line(exc: object) -> str:
    lines = str(exc).strip().splitlines()
    return mask_url(lines[0]) if lines else type(exc).__name__


class Store:
    """Read and write runs. `Store.open(url)` checks the database before anything is written."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._environment_ids: dict[str, int] = {}  # by the machine's JSON
        self._code_version: str = bench.__version__
        self.retry_s: float | None = None  # seconds saves retry through an outage (None: BENCH_STORE_RETRY_S or 60)

    @classmethod
    def open(cls, url: str | None = None, create: bool = True, readonly: bool = False) -> Store:
        """Open and check a store; `readonly` (the web app) writes nothing, not even the WAL switch."""
        create = create and not readonly
        engine = make_engine(resolve_url(url))
        database = engine.url.database
        if not create and engine.dialect.name == "sqlite" and database not in (None, "", ":memory:") \
                and not Path(database).exists():
            raise BenchError(f"no bench store at {database}: run `bench run` or `bench grid` first, or pass --db")
        path = sqlite_path(engine)
        if create and path is not None and _read_only(path):
            raise BenchError(f"the store {path} is read-only: a run could not be stored; make it writable "
                             "(and its folder) or pass --db with another store")
        state = schema_state(engine)
        if state == "empty" and create:
            upgrade(engine)
        elif state == "foreign":
            raise BenchError(
                f"{shown_url(engine)} is not a bench database (foreign tables); "
                "pass --db with another URL"
            )
        elif state.startswith("old:"):
            raise BenchError(f"database schema is at revision {state[4:]}, this code needs {SCHEMA_HEAD}: "
                             "run `bench db upgrade`")
        elif state == "empty":
            raise BenchError(f"{shown_url(engine)} holds no bench store yet: "
                             "run a grid or `bench db upgrade` first")
        if not readonly and not (path is not None and _read_only(path)):  # reading a read-only store is fine
            _enable_wal(engine)
        return cls(engine)

    @property
    def url(self) -> str:
        """The store's URL as it may be shown (masked)."""
        return shown_url(self.engine)

    def environment_id(self, where: dict | None = None) -> int:
        """The provenance row of a run computed on `where` (bench.provenance.machine() of the process that ran it;
        None: this driver's), with this driver's git state; inserted once per distinct environment."""
        where = where if where is not None else provenance.machine()
        key = json.dumps(where, sort_keys=True, default=str)
        if key not in self._environment_ids:
            env = provenance.collect(where)          # the driver's git state: read once per distinct machine
            if env["git_sha"]:
                dirty = "+dirty" if env["git_dirty"] else ""
                self._code_version = f"{bench.__version__}+g{env['git_sha'][:12]}{dirty}"
            with self.engine.begin() as connection:
                # insert-if-absent by the unique fingerprint, then read: several drivers starting at
                # once on one database race here, and the database's uniqueness settles it
                insert = dialect_insert(connection)(Environment.__table__).values(**env, created_at=_now())
                connection.execute(insert.on_conflict_do_nothing(index_elements=["fingerprint"]))
                found = connection.execute(select(Environment.id)
                                           .where(Environment.fingerprint == env["fingerprint"])).scalar()
            self._environment_ids[key] = found
        return self._environment_ids[key]

    def done_keys(self, keys: Iterable[str], versions: Mapping[str, int] | None = None) -> set[str]:
        """The keys with a done run; with `versions` ({run_key: task version now}), only runs of that version
        (bench.sql.is_current: a run of an older task version is stale)."""
        with self.engine.connect() as connection:
            return current_done(connection, list(keys), versions)

    def save(self, record: RunRecord, runner: str, force: bool = False) -> bool:
        """Insert or replace this cell's run with its metrics and curves, in one transaction.

        A stored `done` run is kept (the record dropped, False returned) unless `force`. Drivers
        save through bench.writes.Writer, which batches these and retries through outages.
        """
        kept = save_batch(self.engine, [(record, runner)], [self.environment_id(record.machine)], self._code_version,
                          force=force)
        return not kept

    def runs(self, **filters) -> list[Run]:
        """Run rows matching equality filters (method=..., task=..., status=...), oldest first."""
        query = select(Run).order_by(Run.id)
        for name, value in filters.items():
            if value is not None:
                query = query.where(getattr(Run, name) == value)
        with self.engine.connect() as connection:
            return list(connection.execute(query).all())

    def unfinished(self, run_keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """{run_key: (status, error)} of the stored runs among `run_keys` that did not finish (failed, timeout,
        skipped, infeasible)."""
        keys, out = list(run_keys), {}
        with self.engine.connect() as connection:
            for start in range(0, len(keys), 500):
                rows = connection.execute(select(Run.run_key, Run.status, Run.error)
                                          .where(Run.run_key.in_(keys[start:start + 500])))
                out.update({k: (s, e) for k, s, e in rows if s != "done"})
        return out

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

    def is_empty(self) -> bool:
        """No run stored at all (one row looked up, not a count of every run)."""
        with self.engine.connect() as connection:
            return connection.execute(text("SELECT 1 FROM runs LIMIT 1")).first() is None


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
