"""What the store holds: `bench status` (counts and the latest failures), `bench show` (the ranked leaderboard),
`bench show-run` (one run) and `bench export` (the leaderboard as csv, json, md or latex)."""

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from app import prepare
from app.console import err, out
from app.options import DbOption, MetricOption
from bench.errors import BenchError


class ExportFormat(StrEnum):
    csv = "csv"
    json = "json"
    md = "md"
    latex = "latex"


def status(db: DbOption = None) -> None:
    """Counts of stored runs per task, method and status, and the latest failures."""
    from rich.markup import escape
    from rich.table import Table

    from bench.errors import mask_secrets
    from bench.store import Store
    from leaderboard.queries import status_counts

    store = Store.open(db, create=False)
    rows, failures = status_counts(store)
    table = Table(box=None, pad_edge=False)
    for col in ("task", "method", "status", "runs"):
        table.add_column(col)
    for row in rows:
        table.add_row(row.task, row.method, row.status, str(row.n))
    out.print(table if rows else "no runs stored yet")
    for run in failures:
        last = (run.error or "").strip().splitlines()
        out.print(f"[red]{run.status}[/red] {run.method} x {run.task} seed={run.seed}: "
                  f"{escape(mask_secrets(last[-1])) if last else ''}")


def show(task: Annotated[str | None, typer.Option(help="Only this task.")] = None,
         metric: MetricOption = None, db: DbOption = None) -> None:
    """Per task instance, comparison group (· T=...) and metric: methods ranked, with mean, std and 95% CI over seeds;
    =k: tied (95% CIs overlap); (low): fewer than 3 seeds or than the instance's largest setting."""
    from app.terminal import render_board
    from app.verdicts import emit
    from bench.store import Store
    from leaderboard.queries import leaderboard_rows

    registry = prepare.registry()
    if task is not None:
        registry.listing("task", task)
    store = Store.open(db, create=False)
    emit(render_board(leaderboard_rows(store, registry, task=task, metrics=metric), out.width))


def show_run(
    key: Annotated[str, typer.Argument(help="A run_key, or its first 8 or more characters (bench status, the app).")],
    db: DbOption = None,
) -> None:
    """One run: its cell, status, metrics, where it ran, its error, and what the libraries said while it ran."""
    from bench.store import Store
    from leaderboard.queries import find_run_keys, run_detail

    store = Store.open(db, create=False)
    if len(key) < 8:
        raise BenchError(f"run key {key!r} is too short: give at least 8 characters of it")
    keys = find_run_keys(store, key)
    if len(keys) != 1:
        raise BenchError(f"no run has a key starting {key!r}" if not keys
                         else f"{len(keys)} runs have a key starting {key!r}: give more characters")
    _print_run(run_detail(store, keys[0]))


def _print_run(detail: dict) -> None:
    import json

    run = detail["run"]
    say = {"markup": False, "highlight": False}
    out.print(f"{run['method']} x {run['task']} seed={run['seed']} [{run['hardware']}]: {run['status']}", **say)
    out.print(f"run_key {run['run_key']}  code {run['code_version']}  wall {run['wall_s']} s  cpu {run['cpu_s']} s",
              **say)
    out.print(f"method_config {json.dumps(run['method_config'])}", soft_wrap=True, **say)
    out.print(f"task_config {json.dumps(run['task_config'])}", soft_wrap=True, **say)
    for name, value in sorted(detail["metrics"].items()):
        out.print(f"  {name} = {value:.6g}", **say)
    if detail["environment"]:
        env = detail["environment"]
        out.print(f"ran on {env['host']} ({env['cpu']}; GPU {env['gpu'] or 'none'}; Python {env['python']})", **say)
    if run["error"]:
        out.print("error:", **say)
        out.print(run["error"], soft_wrap=True, **say)
    out.print("log (library warnings and messages while it ran):" if run.get("log") else "log: nothing was said",
              **say)
    if run.get("log"):
        out.print(run["log"], soft_wrap=True, **say)


def export(
    format: Annotated[ExportFormat, typer.Option("--format", help="csv, json, md or latex.")] = ExportFormat.csv,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File (default: stdout).")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task.")] = None,
    metric: MetricOption = None,
    db: DbOption = None,
) -> None:
    """Export the leaderboard (per task instance, method config and metric: mean, std, CI over seeds)."""
    from bench.store import Store
    from leaderboard.export import render

    registry = prepare.registry()
    if task is not None:
        registry.listing("task", task)
    if output is not None:
        _check_output(output)
    text = render(Store.open(db, create=False), registry, format.value, task=task, metrics=metric)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text)
        except OSError as exc:
            raise BenchError(f"cannot write {output}: {exc.strerror}") from None
        err.print(f"wrote {output}", highlight=False, markup=False, soft_wrap=True)


def _check_output(output: Path) -> None:
    """-o names a file we may create or replace, in a folder that exists (checked before any work)."""
    if output.is_dir():
        raise BenchError(f"cannot write {output}: it is a directory; give a file name")
    folder = output.parent
    if not folder.is_dir():
        raise BenchError(f"cannot write {output}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise BenchError(f"cannot write {output}: permission denied")
