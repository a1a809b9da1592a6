"""`bench submit` (a bench command as a job on a Ray cluster) and `bench jobs` (list, show or follow them); the
cluster's side lives in app/cluster.py."""

import sys
from typing import Annotated

import typer

from app.console import err, out
from app.options import DbOption, VerboseOption, set_verbose

AddressOption = Annotated[str | None, typer.Option("--address", envvar="RAY_API_SERVER_ADDRESS",
                          help="The Ray head's job API, http://HEAD:8265 (default http://127.0.0.1:8265).")]


def submit(
    ctx: typer.Context,
    address: AddressOption = None,
    python: Annotated[str, typer.Option(help="Python on the cluster that has bench's dependencies.")] = "python",
    db: DbOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Submit a bench command to a Ray cluster as a job: bench submit --address URL -- grid ... The submission id
    is printed once, on stdout; `bench jobs` then uses the same address unless given another."""
    from app.cluster import submit as submit_job
    from bench.store import resolve_url

    set_verbose(verbose)
    job = submit_job(address, list(ctx.args), resolve_url(db), python=python)  # masks the password (app.cluster)
    out.print(job, highlight=False)
    err.print("submitted; follow it with: bench jobs <id> --follow (the address is remembered)", highlight=False,
              markup=False)


def jobs(
    submission_id: Annotated[str | None, typer.Argument(help="A job's submission id (default: list all).")] = None,
    follow: Annotated[bool, typer.Option("--follow", help="Stream the job's logs until it ends.")] = False,
    address: AddressOption = None,
) -> None:
    """List the cluster's jobs, or show (and --follow) one of them."""
    from app import cluster

    if submission_id is None:
        _list_jobs(address)
        return
    if follow:
        final = cluster.follow(address, submission_id, sys.stdout.write)
    else:
        client, info = cluster.job_info(address, submission_id)
        sys.stdout.write(client.get_job_logs(submission_id))
        final = str(info.status.value)
    err.print(f"job {submission_id}: {final}", highlight=False)
    if final in ("FAILED", "STOPPED"):
        raise typer.Exit(1)


def _list_jobs(address: str | None) -> None:
    from datetime import datetime

    from rich.table import Table

    from app import cluster

    table = Table(box=None, pad_edge=False)
    for col in ("submission id", "status", "started"):
        table.add_column(col, no_wrap=True)  # an id is copied from here: never folded
    table.add_column("entrypoint", overflow="fold")
    for job in cluster.list_jobs(address):
        started = (datetime.fromtimestamp(job.start_time / 1000).strftime("%Y-%m-%d %H:%M:%S")
                   if job.start_time else "")
        table.add_row(job.submission_id or job.job_id or "", str(job.status.value), started, job.entrypoint)
    out.print(table)
