"""The `bench` command: the typer app, assembled from one module per command (app/commands/), and its entry point.

Every user error is a BenchError: one line on stderr and exit code 2. Heavy modules (the store, the runners, numpy)
are imported inside the commands that use them, so `bench list` is fast.
"""

import os
import sys

import typer

from app.commands import alpacaeval, check, claims, db, grid, jobs, listing, reproduce, results, serve
from app.console import err
from bench.errors import BenchError

# transformers draws a "Loading weights" bar (and the hub a download bar) for every model a cell loads: dozens per
# grid, written over the grid's own progress line. Off unless asked for (HF_HUB_DISABLE_PROGRESS_BARS=0 shows them);
# read when huggingface_hub is first imported, which the commands do later, inside the cells.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce ICML 2025 papers: run methods on tasks, store every run, judge the papers' claims.")
app.add_typer(db.db_app, name="db")
app.command("list")(listing.list_)
app.command()(grid.run)
app.command()(grid.grid)
app.command()(results.status)
app.command()(results.show)
app.command("show-run")(results.show_run)
app.command()(results.export)
app.command()(claims.claims)
app.command()(check.check)
app.command()(reproduce.reproduce)
app.command()(serve.leaderboard)
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(jobs.submit)
app.command()(jobs.jobs)
app.command()(alpacaeval.alpacaeval)


def main() -> None:
    """Entry point: BenchErrors and usage errors are one line on stderr with exit code 2."""
    from bench.errors import ENVIRONMENT_FAULT_EXIT, EnvironmentFault

    if os.environ.get("BENCH_DB_PASSWORD_FILE"):  # a submitted Ray job: its password file leaves the head at once
        from bench.store import take_password_file

        take_password_file()
    try:
        code = app(standalone_mode=False)
    except EnvironmentFault as exc:  # disk full, store unreachable, out of memory: exit 3, what is stored, rerun
        _fail(str(exc), ENVIRONMENT_FAULT_EXIT)
    except BenchError as exc:
        _fail(str(exc))
    except MemoryError:
        _fail("out of memory in the driver: every cell finished before it is stored; rerun the same command to resume "
              "(cells done are skipped)", ENVIRONMENT_FAULT_EXIT)
    except Exception as exc:
        _environment_error(exc)
        _database_error(exc)
        # click's usage errors (unknown option, missing flag, bad choice): duck-typed, because
        # typer vendors click under a private module path
        if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):
            raise
        command = getattr(getattr(exc, "ctx", None), "command_path", "bench")
        if not exc.format_message():  # a bare `bench` or `bench db`: the help was the answer
            sys.exit(exc.exit_code)
        _fail(f"{exc.format_message()} (see `{command} --help`)")
    sys.exit(code if isinstance(code, int) else 0)


def _environment_error(exc: Exception) -> None:
    """A disk that fills up or memory that runs out outside a runner's writes: exit 3, one line."""
    from bench.errors import ENVIRONMENT_FAULT_EXIT

    if "sqlalchemy" not in sys.modules and not isinstance(exc, OSError):
        return
    from bench.writes import _first_line, environment_fault

    what = environment_fault(exc)
    if what is not None:
        _fail(f"{what} ({_first_line(exc)}): every cell finished before it is stored; free "
              f"{'memory' if what == 'out of memory' else 'disk space'} and rerun the same command to resume "
              "(cells done are skipped)", ENVIRONMENT_FAULT_EXIT)


def _database_error(exc: Exception) -> None:
    """A database that fails mid-command (corrupt page, server gone) is one line, password masked."""
    if "sqlalchemy" not in sys.modules:
        return
    from sqlalchemy.exc import DBAPIError

    from bench.store import mask_url

    if isinstance(exc, DBAPIError):
        lines = str(exc.orig).strip().splitlines() or [type(exc.orig).__name__]
        _fail(f"database error: {mask_url(lines[0])}")


def _fail(message: str, code: int = 2) -> None:
    from bench.errors import mask_secrets

    err.print(f"error: {' '.join(mask_secrets(message).split())}", highlight=False, markup=False, soft_wrap=True)
    sys.exit(code)
