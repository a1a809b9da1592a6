"""Cluster submission end to end: a local Ray head on loopback, `bench submit` of a small grid
through the job API, and its results found in a real PostgreSQL (tests/pg.py)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.errors import BenchError
from bench.store import Store
from tests.helpers import run_bench
from tests.pg import pg_server_url, pg_url  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration  # Ray job submission and PostgreSQL

pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HEAD_DIRS: dict[str, Path] = {}  # a head's job API address -> its --temp-dir (where Ray unpacks each job's files)


def _free_ports(n: int) -> list[int]:
    """n distinct free ports: every socket stays bound until all are chosen (one at a time, the
    OS may hand out the same port twice, and Ray refuses two components on one port)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@pytest.fixture(scope="module")
def ray_head():
    """`ray start --head --block` on 127.0.0.1 with ports of its own; stopped by its own pid."""
    temp = tempfile.mkdtemp(prefix="rayh", dir="/tmp")  # short: Ray's socket paths have a length limit
    gcs, dashboard, *others = _free_ports(9)
    names = ("--ray-client-server-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
             "--metrics-export-port", "--runtime-env-agent-port", "--node-manager-port", "--object-manager-port")
    ports = dict(zip(names, others, strict=True))
    command = [str(BIN / "ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={gcs}",
               "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}",
               "--num-cpus=2", "--num-gpus=0", f"--temp-dir={temp}", "--disable-usage-stats",
               *(f"{k}={v}" for k, v in ports.items())]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("RAY_ADDRESS", None)
    env["RAY_AUTH_MODE"] = "disabled"  # loopback only; a real cluster keeps Ray's token authentication
    log = open(Path(temp) / "head.log", "w")
    head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    address = f"http://127.0.0.1:{dashboard}"
    deadline = time.monotonic() + 180
    from ray.job_submission import JobSubmissionClient

    while True:
        if head.poll() is not None:
            pytest.fail(f"ray start --head exited with {head.returncode}: "
                        f"{(Path(temp) / 'head.log').read_text()[-2000:]}")
        try:
            JobSubmissionClient(address).list_jobs()
            break
        except Exception as exc:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                head.kill()
                pytest.fail(f"the Ray head's job API did not come up in 180 s ({exc}): "
                            f"{(Path(temp) / 'head.log').read_text()[-1000:]}")
            time.sleep(1)
    HEAD_DIRS[address] = Path(temp)
    yield address
    head.send_signal(signal.SIGTERM)  # --block: ray start stops the processes it started
    try:
        head.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
    log.close()
    shutil.rmtree(temp, ignore_errors=True)


def _bench(*args, env=None, timeout=300):
    return run_bench(*args, cwd=ROOT, env=env, timeout=timeout)


def test_submitted_grid_runs_on_the_cluster_and_lands_in_postgres(ray_head, pg_url, tmp_path):
    cache = {"BENCH_CACHE_DIR": str(tmp_path)}  # where submit leaves its address for jobs
    sent = _bench("submit", "--address", ray_head, "--python", sys.executable, "--db", pg_url, "--",
                  "grid", "-m", "sgd", "-m", "pcsgd", "-t", "performative", "--set", "T=2000", "--seeds", "0-2",
                  env=cache)
    assert sent.returncode == 0, sent.stderr
    job = sent.stdout.strip()
    assert job.startswith("raysubmit_") and (sent.stdout + sent.stderr).count(job) == 1  # the id, once
    assert "submitted" in sent.stderr and not [line for line in sent.stderr.splitlines()
                                               if " INFO " in line or " WARNING " in line]  # Ray's: --verbose only
    followed = _bench("jobs", job, "--follow", timeout=600, env=cache)  # no --address: the one submit used
    assert followed.returncode == 0, followed.stdout[-3000:] + followed.stderr
    assert f"job {job}: SUCCEEDED" in followed.stderr and "6 done" in followed.stdout  # the grid's own summary
    listed = _bench("jobs", "--address", ray_head)
    assert listed.returncode == 0 and job in listed.stdout and "SUCCEEDED" in listed.stdout
    runs = Store.open(pg_url).runs()
    assert len(runs) == 6 and {r.status for r in runs} == {"done"} and {r.runner for r in runs} == {"ray"}
    # the job reached PostgreSQL with a password that the dashboard never showed: it came in a 0600 file
    import json

    from ray.job_submission import JobSubmissionClient
    from sqlalchemy.engine import make_url

    info = JobSubmissionClient(ray_head).get_job_info(job)
    shown = info.entrypoint + json.dumps(info.runtime_env) + sent.stdout + sent.stderr + listed.stdout
    password = make_url(pg_url).password
    assert f":{password}@" not in shown and password not in info.entrypoint
    env_vars = info.runtime_env["env_vars"]
    assert (make_url(env_vars["BENCH_DB_URL"]).password is None
            and env_vars["BENCH_DB_PASSWORD_FILE"].startswith("bench_db_password_"))
    assert not list(ROOT.glob("bench_db_password_*"))  # removed from the checkout once uploaded
    unpacked = list(HEAD_DIRS[ray_head].rglob("_ray_pkg_*"))
    assert unpacked and not list(HEAD_DIRS[ray_head].rglob("bench_db_password_*"))  # and from the head, once read
    assert sorted((r.method, r.seed) for r in runs) == [(m, s) for m in ("pcsgd", "sgd") for s in range(3)]


def test_the_password_file_leaves_the_head_whatever_the_jobs_outcome(ray_head, pg_url):
    """A job that fails (a bad argument, before any store is opened) also removes its password file from the head."""
    sent = _bench("submit", "--address", ray_head, "--python", sys.executable, "--db", pg_url, "--",
                  "grid", "-m", "no_such_method", "-t", "performative")
    assert sent.returncode == 0, sent.stderr
    job = sent.stdout.strip()
    followed = _bench("jobs", "--address", ray_head, job, "--follow", timeout=600)
    assert followed.returncode == 1 and f"job {job}: FAILED" in followed.stderr, followed.stdout + followed.stderr
    assert "unknown method 'no_such_method'" in followed.stdout
    from ray.job_submission import JobSubmissionClient

    name = JobSubmissionClient(ray_head).get_job_info(job).runtime_env["env_vars"]["BENCH_DB_PASSWORD_FILE"]
    assert name.startswith("bench_db_password_") and not list(HEAD_DIRS[ray_head].rglob(name))


def test_submission_errors_are_one_line(ray_head):
    relative = _bench("submit", "--address", ray_head, "--db", "sqlite:///bench.db", "--", "grid", "-m", "sgd", "-t",
                      "performative")
    assert relative.returncode == 2 and "needs a shared database" in relative.stderr
    assert "PostgreSQL" in relative.stderr and "absolute SQLite path" in relative.stderr  # every store that works
    nowhere = _bench("submit", "--address", "http://127.0.0.1:1", "--db", "postgresql+psycopg://u@127.0.0.1/b", "--",
                     "list", "methods")
    assert nowhere.returncode == 2 and nowhere.stderr.startswith("error: cannot reach the Ray job API at http://127.0.0.1:1")
    assert len(nowhere.stderr.splitlines()) == 1
    unknown = _bench("jobs", "--address", ray_head, "raysubmit_nosuchjob")
    assert unknown.returncode == 2 and "no job 'raysubmit_nosuchjob'" in unknown.stderr
    from app.cluster import job_entrypoint

    assert job_entrypoint(["grid", "-m", "a b"]) == "python -m bench grid -m 'a b' --runner ray"
    assert job_entrypoint(["grid", "--runner", "local"]) == "python -m bench grid --runner local"
    with pytest.raises(BenchError, match="nothing to submit"):
        job_entrypoint([])


def test_a_token_present_turns_on_rays_token_mode_and_errors_name_what_is_missing(tmp_path, monkeypatch):
    from app.cluster import auth_refused, token_source, use_token_auth

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    assert token_source() is None and use_token_auth() is None and "RAY_AUTH_MODE" not in os.environ
    assert "none is here: copy the head's ~/.ray/auth_token" in auth_refused("http://h:8265", None)

    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("abc\n")
    assert use_token_auth() == str(tmp_path / ".ray" / "auth_token") and os.environ["RAY_AUTH_MODE"] == "token"
    monkeypatch.setenv("RAY_AUTH_TOKEN", "xyz")
    assert token_source() == "RAY_AUTH_TOKEN"
    assert "refused the token from RAY_AUTH_TOKEN: it is not this head's token" in auth_refused("http://h:8265",
                                                                                                "RAY_AUTH_TOKEN")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # an explicit mode is kept
    use_token_auth()
    assert os.environ["RAY_AUTH_MODE"] == "disabled"
