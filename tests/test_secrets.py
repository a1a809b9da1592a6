"""A store's password appears on no output surface.

A real PostgreSQL role with a known password (tests/pg.py's server), then every place a URL
could leak is read and searched for that password: stdout and stderr of run, grid (with failed
cells), status, show, export, claims, db upgrade and errors; the leaderboard's start-up line
and the streamlit process's command line (/proc/PID/cmdline, what `ps` shows every user); the
app's rendered page (Streamlit AppTest); and the Ray job as submitted (entrypoint and runtime
env, what Ray's dashboard shows), whose password must arrive in a file of mode 0600 instead.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bench.store import PASSWORD_FILE_ENV, mask_url, resolve_url
from tests.helpers import run_bench
from tests.pg import Unavailable, _as_postgres, create_database, pg_server_url, unavailable  # noqa: F401 - fixture

pytestmark = pytest.mark.integration  # PostgreSQL roles, Ray and subprocesses

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--set", "T=2000"]


@pytest.fixture(scope="module")
def secret_url(pg_server_url):
    """A fresh database owned by a new role whose password is random: (URL with it, the password)."""
    if os.environ.get("BENCH_TEST_PG_URL"):
        pytest.skip("needs the local cluster's postgres user to create a role with a password")
    try:
        url, drop = create_database(pg_server_url)
    except Unavailable as exc:
        unavailable(str(exc))
    token = secrets.token_hex(6)
    role, password = f"bench_secret_{token}", f"Pw{token}Zx9"
    database = make_url(url).database
    for sql in (f"CREATE ROLE {role} LOGIN PASSWORD '{password}'", f'ALTER DATABASE "{database}" OWNER TO {role}'):
        done = _as_postgres(sql)
        if done.returncode != 0:
            drop()
            unavailable(f"cannot create a role as the postgres user: {done.stderr.strip()}")
    yield make_url(url).set(username=role, password=password).render_as_string(hide_password=False), password
    _as_postgres(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')  # the role owns it now, not the test's admin
    drop()
    _as_postgres(f"DROP ROLE IF EXISTS {role}")


def _bench(*args, url, env=None, timeout=300):
    return run_bench(*args, url=url, cwd=ROOT, env=env, unset=(PASSWORD_FILE_ENV,), timeout=timeout)


def test_mask_url_hides_the_password_of_any_url():
    assert mask_url("postgresql+psycopg://bench:s3cr3t@db:5432/bench") == "postgresql+psycopg://bench:***@db:5432/bench"
    assert mask_url("postgresql://u:a/b?c#d@h/db") == "postgresql://u:***@h/db"  # as SQLAlchemy splits it
    assert make_url("postgresql://u:a/b?c#d@h/db").password == "a/b?c#d"
    assert mask_url("postgresql://u:s3cr3t@h:port/db") == "postgresql://u:***@h:port/db"  # does not parse; still masked
    assert mask_url("error at postgresql://u:s3cr3t@h/db here") == "error at postgresql://u:***@h/db here"
    for unchanged in ("sqlite:///bench.db", "postgresql://u@h/db", "sqlite:////tmp/a:b@c.db", "http://127.0.0.1:8265"):
        assert mask_url(unchanged) == unchanged


URL_SHAPES = [  # (a URL as given, the secret in it, what is shown)
    ("postgresql+psycopg://u@127.0.0.1:5432/x?password=SECRET", "SECRET",
     "postgresql+psycopg://u@127.0.0.1:5432/x?password=***"),
    ("postgresql+psycopg://u:SECRET@127.0.0.1:5432/x", "SECRET", "postgresql+psycopg://u:***@127.0.0.1:5432/x"),
    ("postgresql://u@h/x?sslmode=require&sslpassword=SECRET&application_name=a", "SECRET",
     "postgresql://u@h/x?sslmode=require&sslpassword=***&application_name=a"),
    ("http://user:SECRET@127.0.0.1:1", "SECRET", "http://user:***@127.0.0.1:1"),
    ("https://head:8265/?token=SECRET", "SECRET", "https://head:8265/?token=***"),
    ("http://head:8265/?Api_Key=SECRET&x=1", "SECRET", "http://head:8265/?Api_Key=***&x=1"),
    ("https://h/p?access_token=SECRET#frag", "SECRET", "https://h/p?access_token=***#frag"),
    ("user:SECRET@head:8265", "SECRET", "user:***@head:8265"),
    ("'ray://u:SECRET@h:10001'", "SECRET", "'ray://u:***@h:10001'"),
]


@pytest.mark.parametrize("url,secret,shown", URL_SHAPES)
def test_every_secret_of_every_url_shape_is_masked(url, secret, shown):
    from bench.errors import mask_secrets

    assert mask_url(url) == mask_secrets(url) == shown and secret not in shown
    assert mask_secrets(f"error: cannot reach {url} (refused)") == f"error: cannot reach {shown} (refused)"


def test_the_store_shows_and_stores_urls_masked(tmp_path):
    """Store.url (the writer's messages, the app) and a stored error or log never carry a URL's secret."""
    from bench.spec import Cell, RunRecord, Status
    from bench.store import Store, make_engine, shown_url

    assert shown_url(make_engine("postgresql+psycopg://u@127.0.0.1:1/x?password=SECRET")).endswith("password=***")
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    cell = Cell("sgd", "performative", 0, {"T": 1}, {})
    store.save(RunRecord(cell, Status.FAILED, error="OperationalError: postgresql://u:SECRET@db/x?token=SECRET",
                         log="connecting to http://a:SECRET@head:8265"), runner="local")
    (run,) = store.runs()
    assert run.error == "OperationalError: postgresql://u:***@db/x?token=***"
    assert run.log == "connecting to http://a:***@head:8265"


def test_password_file_completes_a_url_without_password(tmp_path, monkeypatch):
    secret = tmp_path / "pw"
    secret.write_text("s3cr3t\n")
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(secret))
    assert make_url(resolve_url("postgresql+psycopg://u@h/db")).password == "s3cr3t"
    assert not secret.exists()  # read once and removed: a Ray job's copy on the head is gone
    assert make_url(resolve_url("postgresql+psycopg://u@h/db")).password == "s3cr3t"  # from memory since
    assert make_url(resolve_url("postgresql+psycopg://u:other@h/db")).password == "other"  # an explicit one wins
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(tmp_path / "missing"))
    from bench.errors import BenchError

    with pytest.raises(BenchError, match="cannot read the store's password file"):
        resolve_url("postgresql+psycopg://u@h/db")


def test_a_job_takes_its_password_file_first_thing_and_its_children_find_the_url(tmp_path, monkeypatch):
    """`bench` in a submitted job reads the file and removes it before the command runs, whatever the command; a
    process it starts (a re-exec) finds the complete URL in BENCH_DB_URL."""
    from bench.store import take_password_file

    secret = tmp_path / "bench_db_password_x"
    secret.write_text("s3cr3t-two\n")
    monkeypatch.setenv(PASSWORD_FILE_ENV, str(secret))
    monkeypatch.setenv("BENCH_DB_URL", "postgresql+psycopg://u@h/db")
    take_password_file()
    assert not secret.exists()
    assert make_url(os.environ["BENCH_DB_URL"]).password == "s3cr3t-two"
    assert make_url(resolve_url(None)).password == "s3cr3t-two"
    assert make_url(resolve_url("postgresql+psycopg://u@other/db")).password == "s3cr3t-two"  # from memory


def test_cli_outputs_never_show_the_password(secret_url):
    url, password = secret_url
    host = make_url(url)
    grid = ["grid", "-m", "sgd", "-m", "pcsgd", "-t", "performative", "--set", "T=2000", "--set", "task.beta=0.2",
            "--seeds", "0-1"]  # aβ > 1: every cell fails, so the failure lines are printed too
    runs = [
        (["db", "upgrade"], 0),
        (["run", "-m", "sgd", "-t", "performative", "--seeds", "0-1", *FAST], 0),
        (grid, 1),
        (["status"], 0),
        (["show"], 0),
        (["export", "--format", "md"], 0),
        (["claims", "--paper", "clipped-sgd-performative"], 0),
        (["run", "-m", "sgd", "-t", "performative", *FAST, "--db", url.replace(f":{host.port}/", ":abc/")], 2),
        (["status", "--db", host.set(port=1).render_as_string(hide_password=False)], 2),  # nothing listens on 1
        (["status", "--db", host.set(database="no_such_db").render_as_string(hide_password=False)], 2),
        (["run", "-m", "sgd", "-t", "performative", *FAST, "--seed", "-1"], 2),
    ]
    for args, code in runs:
        proc = _bench(*args, url=url)
        assert proc.returncode == code, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        assert password not in proc.stdout + proc.stderr, args
    assert "cells: 4 failed" in _bench(*grid, url=url).stderr.replace("4 already", "")  # the failures were printed
    # the password as a query parameter (psycopg takes it so): the same commands, the same silence
    in_query = make_url(url).set(password=None).update_query_dict({"password": password})
    query_url = in_query.render_as_string(hide_password=False)
    assert f"password={password}" in query_url
    for args, code in [(["db", "upgrade"], 0), (["status"], 0), (["show"], 0), *runs[-4:]]:
        proc = _bench(*[a.replace(url, query_url) for a in args], url=query_url)
        assert proc.returncode == code, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        assert password not in proc.stdout + proc.stderr, args
    upgraded = _bench("db", "upgrade", url=query_url).stdout
    assert "password=***" in upgraded and "schema at" in upgraded


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_leaderboard_passes_the_password_outside_the_command_line(secret_url):
    url, password = secret_url
    assert _bench("db", "upgrade", url=url).returncode == 0
    port = _free_port()
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("BENCH_DB_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "bench", "leaderboard", "--port", str(port), "--db", url], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.25)
        else:
            pytest.fail("bench leaderboard did not come up in 60 s")
        command_line = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode()  # the pid is streamlit's now (exec)
        assert "streamlit" in command_line and password not in command_line and "--db" not in command_line
        environment = Path(f"/proc/{proc.pid}/environ").read_bytes().decode()  # readable by its owner only
        assert f"BENCH_DB_URL={url}" in environment.split("\0")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert f"(store {mask_url(url)})" in err
    assert password not in out + err


def test_app_page_never_shows_the_password(secret_url, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    url, password = secret_url
    assert _bench("run", "-m", "sgd", "-t", "performative", *FAST, url=url).returncode == 0
    monkeypatch.setenv("BENCH_DB_URL", url)
    # AppTest leaves the app script as __main__, which later spawned processes (multiprocessing's
    # "spawn") would re-run: put the real one back after this test
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    shown = []
    for view in ("overview", "runs"):
        st.cache_data.clear()
        st.cache_resource.clear()
        app = AppTest.from_file(str(ROOT / "leaderboard" / "app.py"), default_timeout=120)
        app.query_params["view"] = view
        app.run()
        assert not app.exception, [e.value for e in app.exception]
        captions = [c.value for c in app.sidebar.caption]
        assert f"store: {mask_url(url)}" in captions
        shown.append("".join(str(getattr(node, "proto", "")) for node in _nodes(app._tree)))  # every rendered value
    page = "".join(shown)
    assert password not in page and make_url(url).username in page and "sgd" in page  # the page did render the store


def _nodes(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


class _RecordingJobs:
    """Stands in for Ray's JobSubmissionClient: records what the dashboard would show."""

    def __init__(self):
        self.submitted = []

    def submit_job(self, entrypoint, runtime_env):
        folder = Path(runtime_env["working_dir"])
        secret = folder / runtime_env["env_vars"][PASSWORD_FILE_ENV]
        self.submitted.append({"entrypoint": entrypoint, "runtime_env": json.loads(json.dumps(runtime_env)),
                               "secret_mode": stat.S_IMODE(secret.stat().st_mode), "secret": secret.read_text(),
                               "secret_path": secret})
        return "raysubmit_recorded"


def test_submitted_job_carries_the_password_in_a_private_file(secret_url, monkeypatch, capsys, tmp_path):
    from app import cli, cluster

    url, password = secret_url
    jobs = _RecordingJobs()
    monkeypatch.setattr(cluster, "client", lambda address: jobs)
    monkeypatch.setattr(sys, "argv", ["bench", "submit", "--address", "http://head:8265", "--db", url, "--",
                                      "grid", "-m", "sgd", "-t", "performative"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))  # where submit leaves its address for jobs
    with pytest.raises(SystemExit) as ended:
        cli.main()
    out, err = capsys.readouterr()
    assert ended.value.code == 0, err
    (job,) = jobs.submitted
    shown = job["entrypoint"] + json.dumps(job["runtime_env"])  # what Ray's dashboard displays
    assert password not in shown + out + err
    env_vars = job["runtime_env"]["env_vars"]
    assert make_url(env_vars["BENCH_DB_URL"]) == make_url(url)._replace(password=None)
    assert job["secret"] == password and job["secret_mode"] == 0o600
    assert job["runtime_env"]["working_dir"] == str(tmp_path) and not job["secret_path"].exists()  # gone after upload
    assert (tmp_path / "cache" / "ray_address").read_text() == "http://head:8265\n"  # for bench jobs
    # the job's side: the URL from its env and the password from the file in its working directory
    job["secret_path"].write_text(password)
    monkeypatch.setenv("BENCH_DB_URL", env_vars["BENCH_DB_URL"])
    monkeypatch.setenv(PASSWORD_FILE_ENV, env_vars[PASSWORD_FILE_ENV])
    assert resolve_url(None) == url
    # a malformed URL is echoed masked, and a password among the job's own arguments is refused
    for argv, message in (
        (["submit", "--db", url.replace(f":{make_url(url).port}/", ":abc/"), "--", "list", "methods"],
         "bad database URL"),
        (["submit", "--db", "postgresql+psycopg://u@h/b", "--", "status", "--db", url],
         "a password in the job's arguments"),
    ):
        monkeypatch.setattr(sys, "argv", ["bench", *argv])
        with pytest.raises(SystemExit) as ended:
            cli.main()
        out, err = capsys.readouterr()
        assert ended.value.code == 2 and message in err and password not in out + err


def test_a_database_failing_mid_command_is_one_masked_line(monkeypatch, capsys, tmp_path):
    """A server gone between opening and reading: no traceback, and no password in the line."""
    from sqlalchemy.exc import OperationalError

    from app import cli
    from bench.store import Store
    from leaderboard import queries

    url = f"sqlite:///{tmp_path / 'b.db'}"
    Store.open(url)

    def gone(_store):
        raise OperationalError("SELECT ...", {}, Exception("server closed the connection (postgresql://u:s3cr3t@db/b)\nmore"))

    monkeypatch.setattr(queries, "status_counts", gone)
    monkeypatch.setattr(sys, "argv", ["bench", "status", "--db", url])
    with pytest.raises(SystemExit) as ended:
        cli.main()
    _, err = capsys.readouterr()
    assert ended.value.code == 2
    assert err == "error: database error: server closed the connection (postgresql://u:***@db/b)\n"


DB_SHAPES = ["postgresql+psycopg://u@127.0.0.1:1/x?password={s}", "postgresql+psycopg://u:{s}@127.0.0.1:1/x",
             "postgresql+psycopg://u@127.0.0.1:1/x?sslmode=disable&sslpassword={s}&token={s}",
             "postgresql+psycopg://u:{s}@127.0.0.1:abc/x", "mysql://u:{s}@127.0.0.1/x?api_key={s}"]
RAY_SHAPES = ["http://user:{s}@127.0.0.1:1", "http://127.0.0.1:1/?token={s}", "user:{s}@127.0.0.1:1",
              "ftp://u:{s}@head/?password={s}"]
COMMANDS = [["status"], ["show"], ["export"], ["claims", "--paper", "clipped-sgd-performative"], ["db", "upgrade"],
            ["run", "-m", "sgd", "-t", "performative", "--set", "T=5"],
            ["grid", "-m", "sgd", "-t", "performative", "--set", "T=5"],
            ["reproduce", "clipped-sgd-performative", "--seeds", "1"], ["leaderboard", "--port", "PORT"],
            ["submit", "--address", "http://127.0.0.1:1", "--", "list", "methods"]]


def test_no_command_prints_a_secret_of_any_url_shape(monkeypatch, capsys, tmp_path):
    """Every store-opening command with each shape of database URL, and the job commands with each shape of Ray
    address: refused in one masked line (exit 2), the secret nowhere in what is printed."""
    from app import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(PASSWORD_FILE_ENV, raising=False)
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("reached exec"))
    port = str(_free_port())  # the leaderboard's own checks pass: its store is what is refused
    runs = [[*(port if a == "PORT" else a for a in command), "--db", shape.format(s="S3cr3tX")]
            for command in COMMANDS for shape in DB_SHAPES]
    runs += [[command, "--address", shape.format(s="S3cr3tX"), *rest] for shape in RAY_SHAPES
             for command, rest in (("jobs", []), ("jobs", ["raysubmit_x"]))]
    runs += [["submit", "--address", shape.format(s="S3cr3tX"), "--db", "postgresql+psycopg://u@db/b", "--", "list",
              "methods"] for shape in RAY_SHAPES]
    for argv in runs:
        monkeypatch.setattr(sys, "argv", ["bench", *argv])
        with pytest.raises(SystemExit) as ended:
            cli.main()
        out, err = capsys.readouterr()
        assert ended.value.code == 2 and len(err.splitlines()) == 1 and err.startswith("error: "), (argv, out, err)
        assert "S3cr3tX" not in out + err and "***" in err, (argv, err)
