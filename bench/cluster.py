"""`bench submit` and `bench jobs`: a thin layer over Ray's job submission API.

A submitted job runs `python -m bench <args>` on the cluster's head, with this working
directory uploaded (without .venv, .git, local databases) and the store's URL passed as
`BENCH_DB_URL`, so every node and the driver write to one database (PostgreSQL on a cluster).
A submitted `grid` runs on Ray (`--runner ray` is added unless given): inside a job, Ray
connects to the job's own cluster.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from sqlalchemy.engine import make_url

from bench.errors import BenchError

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
EXCLUDES = [".venv", "venv", ".git", "*.db", "*.db-wal", "*.db-shm", "__pycache__", "*.egg-info", ".pytest_cache",
            "node_modules", "shared"]
FINAL = {"SUCCEEDED", "FAILED", "STOPPED"}


def resolve_address(address: str | None) -> str:
    return address or os.environ.get("RAY_API_SERVER_ADDRESS") or DEFAULT_ADDRESS


def client(address: str | None):
    """A JobSubmissionClient for the head's dashboard address; BenchError if unreachable."""
    from ray.job_submission import JobSubmissionClient

    address = resolve_address(address)
    if not address.startswith(("http://", "https://")):
        raise BenchError(f"job address {address!r}: use the head's dashboard URL, e.g. http://HEAD:8265")
    from ray.exceptions import AuthenticationError

    try:
        return JobSubmissionClient(address)
    except AuthenticationError:
        raise BenchError(f"the Ray job API at {address} wants its authentication token: copy the head's "
                         "~/.ray/auth_token here or set RAY_AUTH_TOKEN (see Ray's token-auth docs)") from None
    except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"cannot reach the Ray job API at {address}: {first}") from None


def job_entrypoint(args: list[str], python: str = "python") -> str:
    if not args:
        raise BenchError("nothing to submit: give the bench command after --, e.g. bench submit -- grid -m sgd -t performative")
    args = list(args)
    if args[0] == "grid" and not any(a == "--runner" or a.startswith("--runner=") for a in args):
        args += ["--runner", "ray"]
    return " ".join([shlex.quote(python), "-m", "bench", *map(shlex.quote, args)])


def check_db_for_cluster(db_url: str) -> None:
    """A job's store must be one database reachable from the head: not a relative SQLite file."""
    try:
        url = make_url(db_url)
    except Exception:  # noqa: BLE001 - sqlalchemy raises ArgumentError; any parse failure is bad input
        raise BenchError(f"bad database URL {db_url!r}; e.g. postgresql+psycopg://user:pw@dbhost/bench") from None
    if url.get_backend_name() == "sqlite" and not (url.database and Path(url.database).is_absolute()):
        raise BenchError(f"a job on a cluster needs a shared database, not {db_url!r} (a file inside the job's "
                         "temporary working directory); pass --db postgresql+psycopg://user:pw@dbhost/bench")


def submit(address: str | None, args: list[str], db_url: str, working_dir: Path | None = None,
           python: str = "python", env: dict[str, str] | None = None) -> str:
    """Submit `bench <args>` as a Ray job; returns the submission id."""
    check_db_for_cluster(db_url)
    entrypoint = job_entrypoint(args, python)
    jobs = client(address)
    runtime_env = {
        "working_dir": str((working_dir or Path.cwd()).resolve()),
        "excludes": EXCLUDES,
        "env_vars": {"BENCH_DB_URL": db_url, **(env or {})},
    }
    try:
        return jobs.submit_job(entrypoint=entrypoint, runtime_env=runtime_env)
    except (RuntimeError, ValueError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"job submission to {resolve_address(address)} failed: {first}") from None


def list_jobs(address: str | None) -> list:
    """All jobs the head knows, newest first."""
    jobs = client(address).list_jobs()
    return sorted(jobs, key=lambda j: j.start_time or 0, reverse=True)


def job_info(address: str | None, submission_id: str):
    jobs = client(address)
    try:
        return jobs, jobs.get_job_info(submission_id)
    except RuntimeError:
        raise BenchError(f"no job {submission_id!r} on {resolve_address(address)}; `bench jobs` lists them") from None


def follow(address: str | None, submission_id: str, write) -> str:
    """Stream the job's logs to `write` until it ends; returns its final status."""
    import asyncio

    jobs, _ = job_info(address, submission_id)

    async def tail() -> None:
        async for lines in jobs.tail_job_logs(submission_id):
            write(lines)

    asyncio.run(tail())
    return str(jobs.get_job_status(submission_id).value)
