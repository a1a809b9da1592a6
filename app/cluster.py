"""`bench submit` and `bench jobs`: a thin layer over Ray's job submission API.

A submitted job runs `python -m bench <args>` on the cluster's head, with this working
directory uploaded (without .venv, .git, local databases) and the store's URL passed as
`BENCH_DB_URL`, so every node and the driver write to one database (PostgreSQL on a cluster).
A submitted `grid` runs on Ray (`--runner ray` is added unless given): inside a job, Ray
connects to the job's own cluster.

The password is not in that URL: Ray's dashboard shows every job's entrypoint and runtime env
to anyone who can reach it. It travels as a file of mode 0600 inside the uploaded working
directory (Ray keeps Unix modes when it unpacks a package on a node), named by
`BENCH_DB_PASSWORD_FILE` relative to the job's working directory, where `resolve_url` reads it.
The file exists on this machine only while the directory is zipped and uploaded. On the head,
the job's `bench` reads it first thing, whatever the command and its outcome, and removes it
from the job's unpacked working directory (bench.store.take_password_file); until then, and in
Ray's package store until Ray drops the package, it is readable by the account that runs Ray,
which can read a job's environment anyway.
"""

from __future__ import annotations

import os
import secrets
import shlex
from pathlib import Path

from sqlalchemy.engine import make_url

from bench.errors import BenchError
from bench.store import PASSWORD_FILE_ENV, mask_url

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
EXCLUDES = [".venv", "venv", ".git", "*.db", "*.db-wal", "*.db-shm", "__pycache__", "*.egg-info", ".pytest_cache",
            "node_modules", "shared"]
FINAL = {"SUCCEEDED", "FAILED", "STOPPED"}


ADDRESS_FILE = "ray_address"  # under the cache root: the job API address the last `bench submit` used


def address_file() -> Path:
    from bench.context import default_cache_root

    return default_cache_root() / ADDRESS_FILE


def remember_address(address: str) -> None:
    """Keep the job API address a submission used, for `bench jobs` (secrets masked: a password is never written;
    an address that had one must be given again). Best effort: a cache folder that cannot be written is no error."""
    try:
        path = address_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(mask_url(address) + "\n")
    except OSError:
        pass


def remembered_address() -> str | None:
    """The address the last `bench submit` used, or None."""
    try:
        found = address_file().read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if found and mask_url(found) != found or "***" in found:
        raise BenchError(f"the last address `bench submit` used, {found}, had a secret, which is never stored: give "
                         "--address (or RAY_API_SERVER_ADDRESS)")
    return found or None


def resolve_address(address: str | None) -> str:
    """--address, else RAY_API_SERVER_ADDRESS, else the address the last `bench submit` used, else the default."""
    return address or os.environ.get("RAY_API_SERVER_ADDRESS") or remembered_address() or DEFAULT_ADDRESS


def token_source() -> str | None:
    """Where Ray's client finds an authentication token (as Ray looks: RAY_AUTH_TOKEN, the file RAY_AUTH_TOKEN_PATH
    names, ~/.ray/auth_token), or None without one."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    for path in (os.environ.get("RAY_AUTH_TOKEN_PATH"), os.path.expanduser("~/.ray/auth_token")):
        if path and os.path.isfile(path) and Path(path).read_text().strip():
            return path
    return None


def use_token_auth() -> str | None:
    """With a token present and RAY_AUTH_MODE unset, switch this process to token mode (Ray's job client sends
    the token only then, and does not switch by itself); returns the token's source."""
    source = token_source()
    if source is not None and "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"
        try:  # Ray caches its config at import: refresh it, as ray.init() does when it enables token mode
            from ray._raylet import Config

            Config.initialize("")
        except (ImportError, AttributeError):
            pass
    return source


def auth_refused(address: str, source: str | None) -> str:
    address = mask_url(address)
    if source is None:
        return (f"the Ray job API at {address} wants an authentication token and none is here: copy the head's "
                "~/.ray/auth_token to this machine's ~/.ray/auth_token, or set RAY_AUTH_TOKEN to its contents")
    return (f"the Ray job API at {address} refused the token from {source}: it is not this head's token (the head "
            "keeps it in its ~/.ray/auth_token)")


def client(address: str | None):
    """A JobSubmissionClient for the head's dashboard address; BenchError if unreachable or refused."""
    address = resolve_address(address)
    if not address.startswith(("http://", "https://")):
        raise BenchError(f"job address {mask_url(address)!r}: use the head's dashboard URL, e.g. http://HEAD:8265")
    source = use_token_auth()
    from ray.exceptions import AuthenticationError
    from ray.job_submission import JobSubmissionClient

    quiet_ray()

    try:
        return JobSubmissionClient(address)
    except AuthenticationError:
        raise BenchError(auth_refused(address, source)) from None
    except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"cannot reach the Ray job API at {mask_url(address)}: {mask_url(first)}") from None


def quiet_ray() -> None:
    """Ray's INFO and WARNING lines (the package upload, the token mode) only with --verbose."""
    import logging

    from bench.errors import verbose

    logging.getLogger("ray").setLevel(logging.INFO if verbose() else logging.ERROR)


def job_entrypoint(args: list[str], python: str = "python") -> str:
    if not args:
        raise BenchError("nothing to submit: give the bench command after --, "
                         "e.g. bench submit -- grid -m sgd -t performative")
    args = list(args)
    if any(mask_url(a) != a for a in args):
        raise BenchError("a password in the job's arguments would show on Ray's dashboard: give the store as "
                         "`bench submit --db URL -- ...` (or BENCH_DB_URL), which passes the password in a private "
                         "file")
    if args[0] == "grid" and not any(a == "--runner" or a.startswith("--runner=") for a in args):
        args += ["--runner", "ray"]
    return " ".join([shlex.quote(python), "-m", "bench", *map(shlex.quote, args)])


def check_db_for_cluster(db_url: str) -> None:
    """A job's store must be one database reachable from the head: not a relative SQLite file."""
    try:
        url = make_url(db_url)
    except Exception:  # noqa: BLE001 - sqlalchemy raises ArgumentError (ValueError for a bad port): bad input
        raise BenchError(f"bad database URL {mask_url(db_url)!r}; "
                         "e.g. postgresql+psycopg://user:pw@dbhost/bench") from None
    if url.get_backend_name() == "sqlite" and not (url.database and Path(url.database).is_absolute()):
        raise BenchError(f"a job on a cluster needs a shared database, not {mask_url(db_url)!r} "
                         "(a file inside the job's temporary working directory); pass --db (or BENCH_DB_URL) "
                         "with a store the head and every node reach: PostgreSQL "
                         "(postgresql+psycopg://user:pw@dbhost/bench, or any SQLAlchemy PostgreSQL URL the cluster "
                         "reaches), or on a one-machine cluster an absolute SQLite path (sqlite:////abs/path/bench.db)")


def submit(address: str | None, args: list[str], db_url: str, working_dir: Path | None = None,
           python: str = "python", env: dict[str, str] | None = None) -> str:
    """Submit `bench <args>` as a Ray job; returns the submission id."""
    check_db_for_cluster(db_url)
    entrypoint = job_entrypoint(args, python)
    jobs = client(address)
    folder = (working_dir or Path.cwd()).resolve()
    url = make_url(db_url)
    env_vars = {"BENCH_DB_URL": url._replace(password=None).render_as_string(hide_password=False), **(env or {})}
    secret = None
    if url.password is not None:
        secret = folder / f"bench_db_password_{secrets.token_hex(8)}"
        env_vars[PASSWORD_FILE_ENV] = secret.name  # relative: the job runs in its unpacked working directory
    runtime_env = {"working_dir": str(folder), "excludes": EXCLUDES, "env_vars": env_vars}
    try:
        if secret is not None:
            _write_private(secret, url.password)
        job = jobs.submit_job(entrypoint=entrypoint, runtime_env=runtime_env)  # zips and uploads the folder first
        remember_address(resolve_address(address))  # for `bench jobs`
        return job
    except (RuntimeError, ValueError, OSError) as exc:
        first = mask_url((str(exc).strip().splitlines() or [type(exc).__name__])[0])
        raise BenchError(f"job submission to {mask_url(resolve_address(address))} failed: {first}") from None
    finally:
        if secret is not None:
            secret.unlink(missing_ok=True)


def _write_private(path: Path, text: str) -> None:
    """A new file only its owner can read, created with that mode (never briefly world-readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def list_jobs(address: str | None) -> list:
    """All jobs the head knows, newest first."""
    jobs = client(address).list_jobs()
    return sorted(jobs, key=lambda j: j.start_time or 0, reverse=True)


def job_info(address: str | None, submission_id: str):
    jobs = client(address)
    try:
        return jobs, jobs.get_job_info(submission_id)
    except RuntimeError:
        raise BenchError(f"no job {submission_id!r} on {mask_url(resolve_address(address))}; `bench jobs` lists them") \
            from None


def follow(address: str | None, submission_id: str, write) -> str:
    """Stream the job's logs to `write` until it ends; returns its final status."""
    import asyncio

    jobs, _ = job_info(address, submission_id)

    async def tail() -> None:
        async for lines in jobs.tail_job_logs(submission_id):
            write(lines)

    asyncio.run(tail())
    return str(jobs.get_job_status(submission_id).value)
