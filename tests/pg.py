"""A real PostgreSQL server on loopback for the store and cluster tests.

`postgres_server()` returns a server URL (no database) or raises `Unavailable` with the reason:
- `BENCH_TEST_PG_URL` (e.g. postgresql+psycopg://user:pw@127.0.0.1:5432/postgres) if set;
- otherwise the machine's cluster: `pg_ctlcluster 15 main start` (a no-op when it runs), then,
  through the `postgres` OS user, a login role `bench_test` that may create databases (peer
  authentication lets only the `postgres` OS user in as `postgres`; over TCP that role has no
  password, so the tests log in as their own role, password-authenticated on 127.0.0.1).
Each test session gets a fresh database, dropped at the end. Without a server the tests skip,
saying why, except under CI (CI=true), where a missing server is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest

ROLE, PASSWORD = "bench_test", "bench_test"
HOST, PORT = "127.0.0.1", 5432


class Unavailable(Exception):
    pass


def _as_postgres(sql: str) -> subprocess.CompletedProcess:
    runner = (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 and shutil.which("runuser")
              else ["sudo", "-n", "-u", "postgres"])
    return subprocess.run([*runner, "psql", "-v", "ON_ERROR_STOP=1", "-qAt", "-p", str(PORT), "-c", sql],
                          capture_output=True, text=True, timeout=60)


def _start_cluster() -> None:
    if not shutil.which("pg_ctlcluster"):
        raise Unavailable("no BENCH_TEST_PG_URL and no pg_ctlcluster on this machine")
    status = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True)
    if " online " not in f" {status.stdout} ":
        clusters = [line.split()[:2] for line in status.stdout.splitlines() if line.strip()]
        if not clusters:
            raise Unavailable("no PostgreSQL cluster on this machine (pg_lsclusters lists none)")
        version, name = clusters[0]
        started = subprocess.run(["pg_ctlcluster", version, name, "start"], capture_output=True, text=True, timeout=120)
        if started.returncode != 0:
            raise Unavailable(f"pg_ctlcluster {version} {name} start failed: "
                              f"{started.stderr.strip() or started.stdout.strip()}")
    role = (f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN "
            f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{PASSWORD}'; END IF; END $$;")
    done = _as_postgres(role)
    if done.returncode != 0 and "already exists" not in done.stderr:  # two sessions creating it at once
        raise Unavailable(f"cannot create the test role as the postgres user: {done.stderr.strip()}")


def postgres_server() -> str:
    """A server URL whose database is the maintenance db `postgres` (used to create others)."""
    if os.environ.get("BENCH_TEST_PG_URL"):
        return os.environ["BENCH_TEST_PG_URL"]
    _start_cluster()
    return f"postgresql+psycopg://{ROLE}:{PASSWORD}@{HOST}:{PORT}/postgres"


def create_database(server_url: str) -> tuple[str, callable]:
    """A fresh, empty database on that server: its URL and a function that drops it."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"bench_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 10})
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure means: no usable server
        admin.dispose()
        raise Unavailable(f"cannot create a database on {make_url(server_url).render_as_string(hide_password=True)}: "
                          f"{str(exc).splitlines()[0]}") from None

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(server_url).set(database=name).render_as_string(hide_password=False), drop


def unavailable(reason: str) -> None:
    """Skip with the reason locally; fail under CI, which must run the PostgreSQL tests."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"PostgreSQL is required under CI but unavailable: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    try:
        return postgres_server()
    except (Unavailable, OSError, subprocess.SubprocessError) as exc:
        unavailable(str(exc))


@pytest.fixture(scope="session")
def pg_session_url(pg_server_url):
    """One fresh database for the whole test session (URL with password)."""
    try:
        url, drop = create_database(pg_server_url)
    except Unavailable as exc:
        unavailable(str(exc))
    yield url
    drop()


@pytest.fixture
def pg_url(pg_server_url):
    """A fresh database for one test (tests that need an empty or private database)."""
    try:
        url, drop = create_database(pg_server_url)
    except Unavailable as exc:
        unavailable(str(exc))
    yield url
    drop()


@pytest.fixture(params=["sqlite", "postgresql"], name="url")
def sqlite_or_pg_url(request, tmp_path):
    """`url`: a new store's URL, once on SQLite (a file in tmp_path) and once on PostgreSQL (a fresh database)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bench.db'}"
    return request.getfixturevalue("pg_url")


class PrivatePostgres:
    """A PostgreSQL server of one test alone (initdb in a temporary folder, trust auth on 127.0.0.1),
    so a test may stop and restart it without touching the machine's cluster or other tests."""

    def __init__(self):
        import glob
        import socket
        import tempfile

        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins and not shutil.which("initdb"):
            raise Unavailable("no initdb on this machine (PostgreSQL server binaries)")
        self.bin = os.path.dirname(bins[-1]) if bins else os.path.dirname(shutil.which("initdb"))
        self.prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.data = tempfile.mkdtemp(prefix="bench-pg-")
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            self.port = probe.getsockname()[1]
        user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
        self.url = f"postgresql+psycopg://{user}@{HOST}:{self.port}/postgres"
        self._run("initdb", "-D", self.data, "--auth=trust", "-U", user, "-E", "UTF8")
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self.prefix, os.path.join(self.bin, tool), *args], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise Unavailable(f"{tool} failed: {(done.stderr or done.stdout).strip()[:300]}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-w", "-l", os.path.join(self.data, "log"), "-o",
                  f"-p {self.port} -k {self.data} -c listen_addresses={HOST} -c fsync=off", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop")

    def remove(self) -> None:
        try:
            self.stop()
        except Unavailable:
            pass
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture
def private_pg():
    """A PostgreSQL server this test may stop and start (its URL: .url; .stop(), .start())."""
    try:
        server = PrivatePostgres()
    except (Unavailable, OSError, subprocess.SubprocessError) as exc:
        unavailable(str(exc))
    yield server
    server.remove()
