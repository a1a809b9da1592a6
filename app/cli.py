"""The `bench` command. Thin: parses flags, calls the registry, runners, store and leaderboard.

Every user error is a BenchError: one line on stderr and exit code 2. Heavy modules (the store,
the runners, numpy) are imported inside the commands that use them, so `bench list` is fast.
"""


import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from typer import _click as click  # typer vendors click: its own ParamTypes, for click_type

from bench.errors import BenchError
from bench.registry import Registry

# transformers draws a "Loading weights" bar (and the hub a download bar) for every model a cell loads: dozens per
# grid, written over the grid's own progress line. Off unless asked for (HF_HUB_DISABLE_PROGRESS_BARS=0 shows them);
# read when huggingface_hub is first imported, which the commands do later, inside the cells.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce ICML 2025 papers: run methods on tasks, store every run, judge the papers' claims.")
db_app = typer.Typer(no_args_is_help=True, help="Database maintenance.")
app.add_typer(db_app, name="db")
PIPED_WIDTH = 320  # columns of stdout piped to a file or a program: a claims table keeps a line or two per claim


def _stdout_width() -> int | None:
    """None (the terminal's own width, or COLUMNS) on a terminal; piped, PIPED_WIDTH instead of rich's 80 columns,
    which folded a six-claim table into 400 lines."""
    return None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH


out = Console(width=_stdout_width())
err = Console(stderr=True)

DbOption = Annotated[Optional[str], typer.Option("--db", envvar="BENCH_DB_URL",
                     help="SQLAlchemy URL of the store (default sqlite:///bench.db).")]
class _AsciiInt(click.types.IntParamType):
    """An integer written in ASCII digits (click's own int() also takes "٣" and "1_000")."""

    def convert(self, value, param, ctx):
        import re

        if isinstance(value, str) and not re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
            self.fail(f"{value!r} is not a valid integer: give ASCII digits 0-9", param, ctx)
        return super().convert(value, param, ctx)


class _AsciiFloat(click.types.FloatParamType):
    """A number written in ASCII decimal (click's own float() also takes "٣.5" and "1_0"); inf and nan are read, to
    be refused by the command's own check."""

    def convert(self, value, param, ctx):
        import re

        number = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)"
        if isinstance(value, str) and not re.fullmatch(rf"\s*(?:{number})\s*", value, re.IGNORECASE):
            self.fail(f"{value!r} is not a valid float: give an ASCII decimal number such as 2.5", param, ctx)
        return super().convert(value, param, ctx)


ASCII_INT, ASCII_FLOAT = _AsciiInt(), _AsciiFloat()
StoreRetryOption = Annotated[Optional[float], typer.Option(
    "--store-retry", envvar="BENCH_STORE_RETRY_S", click_type=ASCII_FLOAT,
    help="Seconds saves retry while the store is unreachable (default 60).")]
SetOption = Annotated[Optional[list[str]],
                      typer.Option("--set", help="Override a config field: key=value (method) or task.key=value.")]

WorkersOption = Annotated[int, typer.Option(help="Worker processes.", click_type=ASCII_INT)]
TimeoutOption = Annotated[Optional[float], typer.Option(help="Hard limit per cell, seconds.", click_type=ASCII_FLOAT)]
MaxCellsOption = Annotated[int, typer.Option("--max-cells", click_type=ASCII_INT,
                                             help="Refuse a grid of more cells than this (counted before any is "
                                                  "built).")]
ForceOption = Annotated[bool, typer.Option(help="Rerun cells already done.")]
VerboseOption = Annotated[bool, typer.Option("--verbose", help="Show the libraries' own INFO and WARNING lines (Ray, "
                                                              "Streamlit, Uvicorn); quiet by default.")]


def _set_verbose(verbose: bool) -> None:
    """--verbose reaches the code that starts Ray or Streamlit (and the processes it starts) through the environment."""
    from bench.errors import VERBOSE_ENV

    if verbose:
        os.environ[VERBOSE_ENV] = "1"


class Isolation(str, Enum):
    worker = "worker"
    cell = "cell"


IsolationOption = Annotated[Isolation, typer.Option(
    help="worker: each worker process runs cell after cell (a crashed or timed-out one is replaced); cell: a fresh "
         "process for every cell (always so for language-model and GPU cells).")]


class Kind(str, Enum):
    methods = "methods"
    tasks = "tasks"
    papers = "papers"


class ExportFormat(str, Enum):
    csv = "csv"
    json = "json"
    md = "md"
    latex = "latex"


class ClaimsFormat(str, Enum):
    table = "table"
    json = "json"
    md = "md"
    csv = "csv"


def _registry() -> Registry:
    return Registry.discover()


@app.command("list")
def list_(kind: Annotated[Kind, typer.Argument(help="methods, tasks or papers")]) -> None:
    """List registered methods, tasks or papers."""
    from rich.table import Table

    registry = _registry()
    table = Table(box=None, pad_edge=False)
    if kind is Kind.papers:
        table.add_column("paper")
        for slug in registry.papers():
            table.add_row(slug)
    else:
        table.add_column(kind.value[:-1])
        table.add_column("family")
        table.add_column("summary")
        if kind is Kind.methods:
            table.add_column("switched off (bench/switches.py)")
        for name in registry.names(kind.value[:-1]):
            item = registry.listing(kind.value[:-1], name)
            origin = "" if item.origin == "builtin" else f" [{item.origin}]"
            row = [name + origin, item.family, item.summary]
            if kind is Kind.methods:
                row.append(_switches_text(registry, name))
            table.add_row(*row)
    out.print(table)


def _switches_text(registry: Registry, name: str) -> str:
    """A method's switched-off settings, or its reason there are none (a missing declaration says so)."""
    try:
        declared = registry.switched_off(name)
    except BenchError as exc:
        return f"(none declared: {exc})"
    if isinstance(declared, str):
        return f"none: {declared}"
    return "; ".join(switch.label() for switch in declared)


def _seeds(seed: Optional[int], seeds: Optional[str]) -> list[int]:
    from bench.cells import check_seed, parse_seeds

    if seed is not None and seeds is not None:
        raise BenchError("give --seed or --seeds, not both")
    if seeds is not None:
        return parse_seeds(seeds)
    return [check_seed(seed if seed is not None else 0)]


MAX_WORKERS = 1024


def _check_limits(workers: int, timeout: Optional[float]) -> None:
    """--workers and --timeout in range, before anything runs (a timeout of nan or inf enforces nothing)."""
    import math

    if not 1 <= workers <= MAX_WORKERS:
        raise BenchError(f"--workers {workers}: give 1 to {MAX_WORKERS} worker processes")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise BenchError(f"--timeout {timeout}: give a positive number of seconds (or leave it out for no limit)")


def _check_devices(cells, runner: str) -> None:
    """A local grid needs every cell's hardware here (exit 2, nothing stored); Ray places GPU cells
    on nodes that have one, or stores them as infeasible."""
    from bench.execute import device_for

    if runner == "local":
        for hardware in sorted({cell.hardware for cell in cells}):
            device_for(hardware)


AllowCpuOption = Annotated[bool, typer.Option("--allow-cpu", help="Run cells that name hub models on hardware cpu "
                                                                   "(downloads them and trains them on the CPU).")]


def _refuse_hub_models_on_cpu(overrides, hardware, advice: str) -> None:
    """A hub model asked for (a --set value, a grid file's or a claim's config) on hardware cpu is refused (exit 2,
    nothing stored) unless --allow-cpu: the cells would download an LLM and fine-tune it on the CPU, or spend minutes
    retrying downloads offline. Only what was asked for counts: some defaults name the hub models their paper-scale
    path loads (EraseAnything's CLIP judge), which the CPU worlds never touch."""
    words = {v for config in overrides for v in config.values() if isinstance(v, str) and "/" in v}
    if not words:  # a hub id is "org/name": nothing to check (and leaderboard.claims, its scipy, not imported)
        return
    from leaderboard.claims import looks_like_hub_id

    hub = sorted(v for v in words if looks_like_hub_id(v))
    if hub and "cpu" in hardware:
        raise BenchError(f"cells on hardware cpu name hub models ({', '.join(hub)}): they would be downloaded and "
                         f"trained on the CPU; {advice}, or pass --allow-cpu")


def _exit_on_failures(summary) -> None:
    if summary.counts.get("failed") or summary.counts.get("timeout"):
        raise typer.Exit(1)  # the failures are stored; the exit code tells a script


def _progress_runner(cells, store, registry, workers: int, timeout: Optional[float], force: bool,
                     runner: str = "local", address: Optional[str] = None, costs: Optional[dict] = None,
                     threads: Optional[int] = None, isolation: str = "worker"):
    """Run cells with a live progress bar (counts per status and ETA); runner local or ray.

    `costs` ({run_key: expected seconds}) weighs the bar, so that its ETA holds when slow cells come last."""
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from bench.errors import mask_secrets

    from runners.base import pending_cells
    from runners.local import run_cells

    todo, _ = pending_cells(cells, store, force, registry)
    if runner == "ray" and todo:  # an unreachable cluster is a one-line error before the bar is drawn
        from runners.ray import connect

        connect(address)
    weight = (lambda cell: costs.get(cell.run_key, 1.0)) if costs else (lambda cell: 1.0)
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[finished]}/" + str(len(todo))),
               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[counts]}"))
    with Progress(*columns, console=err, transient=False, disable=len(todo) == 0) as progress:
        bar = progress.add_task("cells", total=sum(weight(c) for c in todo), counts="", finished=0)
        counts: dict[str, int] = {}
        finished = [0]

        def on_record(record) -> None:
            counts[record.status] = counts.get(record.status, 0) + 1
            finished[0] += 1
            progress.update(bar, advance=weight(record.cell), finished=finished[0],
                            counts=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
            if record.status not in ("done", "skipped"):
                first = (record.error or "").strip().splitlines()
                err.print(f"[red]{record.status}[/red] {escape(record.cell.label())}: "
                          f"{escape(mask_secrets(first[-1])) if first else ''}",
                          highlight=False, soft_wrap=True)

        def on_status(snapshot) -> None:  # ray: cells running and pending besides the finished ones
            counts.update(snapshot)
            progress.update(bar, counts=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))

        try:
            if runner == "ray":
                from runners import ray as ray_runner

                return ray_runner.run_cells(cells, store, registry, address=address, timeout=timeout, force=force,
                                            on_record=on_record, on_status=on_status)
            return run_cells(cells, store, registry, workers=workers, timeout=timeout, force=force, on_record=on_record,
                             isolate=True, threads=threads,  # a crashed cell never takes the CLI down
                             isolation=isolation)
        except KeyboardInterrupt:
            progress.stop()
            err.print("interrupted: every finished cell is stored; rerun the same command to resume")
            raise typer.Exit(130) from None


def _check_runner(runner: str, address: Optional[str]) -> None:
    """One-line errors for a runner other than local or ray, or --address without ray."""
    if runner not in ("local", "ray"):
        raise BenchError(f"unknown runner {runner!r}; allowed: local, ray")
    if address is not None and runner != "ray":
        raise BenchError("--address is for --runner ray")


def _report_summary(summary) -> None:
    parts = [f"{n} {status}" for status, n in sorted(summary.counts.items())]
    if summary.already_done:
        parts.append(f"{summary.already_done} already done (skipped; --force reruns)")
    if summary.leased:
        parts.append(f"{summary.leased} run by another driver now (skipped)")
    if summary.kept:
        parts.append(f"{summary.kept} finished but kept the stored done run (--force replaces it)")
    err.print("cells: " + (", ".join(parts) if parts else "nothing to run"))


@app.command()
def run(
    method: Annotated[str, typer.Option("--method", "-m", help="Registered method name.")],
    task: Annotated[str, typer.Option("--task", "-t", help="Registered task name.")],
    seed: Annotated[Optional[int], typer.Option(help="One seed (default 0).", click_type=ASCII_INT)] = None,
    seeds: Annotated[Optional[str], typer.Option(help="Several seeds: 0-9 or 0,3,5.")] = None,
    set_: SetOption = None,
    hardware: Annotated[str, typer.Option(help="cpu, cuda or cuda:<class>.")] = "cpu",
    workers: WorkersOption = 1,
    timeout: TimeoutOption = None,
    force: ForceOption = False,
    isolation: IsolationOption = Isolation.worker,
    allow_cpu: AllowCpuOption = False,
    store_retry: StoreRetryOption = None,
    db: DbOption = None,
) -> None:
    """Run one method on one task (one or more seeds) and store the runs."""
    from bench.configs import split_overrides
    from bench.execute import device_for
    from bench.store import Store
    from bench.writes import retry_budget
    from bench.cells import entry_from_flag, expand

    _check_limits(workers, timeout)
    chosen_seeds = _seeds(seed, seeds)
    registry = _registry()
    method_raw, task_raw = split_overrides(set_ or [])
    m = entry_from_flag(registry, "method", method, method_raw, tasks=[task])
    t = entry_from_flag(registry, "task", task, task_raw)
    reason = registry.incompatibility(method, task, hardware)
    if reason:
        raise BenchError(f"incompatible pair: {reason}")
    device_for(hardware)
    grid = expand(registry, [m], [t], chosen_seeds, [hardware])
    if not allow_cpu:
        _refuse_hub_models_on_cpu([m.config, t.config], [hardware], "use --hardware cuda on a GPU machine")
    retry_s = retry_budget(store_retry)
    store = Store.open(db)
    store.retry_s = retry_s
    summary = _progress_runner(grid.cells, store, registry, workers, timeout, force, isolation=isolation.value)
    _report_summary(summary)
    _print_cells(store, registry, grid.cells)
    _exit_on_failures(summary)


def _print_cells(store, registry, cells) -> None:
    """The stored outcome of each cell: status and the primary metric; all metrics for one cell."""
    from rich.table import Table

    wanted = {c.run_key for c in cells}
    rows = {r.run_key: r for r in store.runs(method=cells[0].method, task=cells[0].task) if r.run_key in wanted}
    metrics = store.metrics(wanted)
    primary = registry.family(registry.task(cells[0].task).family).primary_metric
    table = Table(box=None, pad_edge=False)
    for col in ("method", "task", "seed", "status", "wall s", primary):
        table.add_column(col, justify="right" if col in ("wall s", primary) else "left")
    for cell in cells:
        row, values = rows.get(cell.run_key), metrics.get(cell.run_key, {})
        table.add_row(cell.method, cell.task, str(cell.seed), row.status if row else "missing",
                      f"{row.wall_s:.2f}" if row and row.wall_s is not None else "",
                      f"{values[primary]:.6g}" if primary in values else "")
    out.print(table)
    if len(cells) == 1 and metrics.get(cells[0].run_key):
        for name, value in sorted(metrics[cells[0].run_key].items(), key=lambda kv: (kv[0] != primary, kv[0])):
            out.print(f"{name} = {value:.6g}")


@app.command()
def grid(
    method: Annotated[Optional[list[str]], typer.Option("--method", "-m", help="Method (repeatable).")] = None,
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", help="Task (repeatable).")] = None,
    seeds: Annotated[Optional[str], typer.Option(help="Seeds: 0-9 or 0,3,5 (default 0).")] = None,
    hardware: Annotated[Optional[list[str]], typer.Option(help="Hardware (repeatable; default cpu).")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help="YAML grid file.")] = None,
    set_: SetOption = None,
    runner: Annotated[str, typer.Option(help="local, or ray (see 'Running on a cluster' in the README).")] = "local",
    address: Annotated[Optional[str], typer.Option(help="Ray: none starts a local Ray, auto joins a running one, "
                                                        "or HOST:6379.")] = None,
    workers: WorkersOption = 1,
    timeout: TimeoutOption = None,
    force: ForceOption = False,
    isolation: IsolationOption = Isolation.worker,
    allow_cpu: AllowCpuOption = False,
    store_retry: StoreRetryOption = None,
    max_cells: MaxCellsOption = 100_000,
    db: DbOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Run methods x tasks x seeds x hardware; resumes: cells already done are skipped."""
    _set_verbose(verbose)
    from bench.configs import split_overrides
    from bench.store import Store
    from bench.writes import retry_budget
    from bench.cells import MAX_CELLS, check_hardware, entry_from_flag, expand, load_grid_file, parse_seeds

    _check_runner(runner, address)
    _check_limits(workers, timeout)
    if max_cells < 1:
        raise BenchError(f"--max-cells {max_cells}: give a positive number of cells (default {MAX_CELLS:,})")
    registry = _registry()
    if file is not None:
        if method or task or set_:
            raise BenchError("give a grid --file or --method/--task/--set flags, not both (put overrides in the file)")
        spec = load_grid_file(file)
        if seeds is not None:
            spec["seeds"] = parse_seeds(seeds)
        if hardware:
            spec["hardware"] = check_hardware(hardware)
        for kind in ("method", "task"):
            for entry in spec[kind + "s"]:
                registry.listing(kind, entry.name)
    else:
        if not method or not task:
            raise BenchError("a grid needs at least one --method and one --task (or --file grid.yaml)")
        method_raw, task_raw = split_overrides(set_ or [])
        spec = {
            "methods": [entry_from_flag(registry, "method", m, method_raw, tasks=task) for m in method],
            "tasks": [entry_from_flag(registry, "task", t, task_raw) for t in task],
            "seeds": parse_seeds(seeds) if seeds is not None else [0],
            "hardware": check_hardware(hardware or ["cpu"]),
        }
    built = expand(registry, spec["methods"], spec["tasks"], spec["seeds"], spec["hardware"], max_cells=max_cells)
    if not built.cells:  # one line: the reason of the first combination
        m, t, hw, reason = built.incompatible[0]
        raise BenchError(f"the grid has no compatible (method, task, hardware) cell: {m} x {t} [{hw}]: {reason}")
    for m, t, hw, reason in built.incompatible:
        err.print(f"[yellow]incompatible[/yellow] {m} x {t} [{hw}]: {reason}")
    _check_devices(built.cells, runner)
    if not allow_cpu:
        _refuse_hub_models_on_cpu([e.config for e in (*spec["methods"], *spec["tasks"])], spec["hardware"],
                                  "use --hardware cuda on a GPU machine")
    retry_s = retry_budget(store_retry)
    store = Store.open(db)
    store.retry_s = retry_s
    summary = _progress_runner(built.cells, store, registry, workers, timeout, force, runner=runner, address=address,
                               isolation=isolation.value)
    _report_summary(summary)
    _exit_on_failures(summary)


@app.command()
def status(db: DbOption = None) -> None:
    """Counts of stored runs per task, method and status, and the latest failures."""
    from leaderboard.queries import status_counts
    from bench.errors import mask_secrets
    from bench.store import Store
    from rich.markup import escape
    from rich.table import Table

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


MetricOption = Annotated[Optional[list[str]], typer.Option(
    "--metric", help="A metric to rank by (repeatable), or all: every metric the runs stored (default: the family's "
                     "primary metric).")]


@app.command()
def show(task: Annotated[Optional[str], typer.Option(help="Only this task.")] = None,
         metric: MetricOption = None, db: DbOption = None) -> None:
    """Per task instance, comparison group (· T=...) and metric: methods ranked, with mean, std and 95% CI over seeds;
    =k: tied (95% CIs overlap); (low): fewer than 3 seeds or than the instance's largest setting."""
    from rich.markup import escape
    from rich.table import Table

    from bench.store import Store
    from leaderboard.export import direction, numbers, place, seeds
    from leaderboard.queries import leaderboard_rows

    registry = _registry()
    if task is not None:
        registry.listing("task", task)
    store = Store.open(db, create=False)
    groups = leaderboard_rows(store, registry, task=task, metrics=metric)
    if not groups:
        out.print("no finished runs to show")
    for (instance, name), rows in groups.items():
        better = "higher" if rows[0].higher_is_better else "lower"
        table = Table(title=escape(f"{instance}  ({name} {direction(rows[0])}, {better} is better)"),
                      box=None, pad_edge=False, title_justify="left")
        for col in ("rank", "method", "config", "n", "mean", "std", "95% CI", "hardware", "scale"):
            table.add_column(col)
        for row in rows:
            mean, std, low, high = numbers(row)
            method = row.method + ("" if row.registered else " (not registered)")
            table.add_row(place(row), escape(method), escape(row.config_label), seeds(row), mean, std,
                          f"[{low}, {high}]", row.hardware, row.scale)
        out.print(table)
        if any(row.low_seeds for row in rows):
            out.print(f"(low): fewer than 3 seeds or than the {rows[0].most_seeds} of this instance's largest "
                      "setting", highlight=False, markup=False)


@app.command("show-run")
def show_run(
    key: Annotated[str, typer.Argument(help="A run_key, or its first 8 or more characters (bench status, the app).")],
    db: DbOption = None,
) -> None:
    """One run: its cell, status, metrics, where it ran, its error, and what the libraries said while it ran."""
    import json

    from bench.store import Store
    from leaderboard.queries import find_run_keys, run_detail

    store = Store.open(db, create=False)
    if len(key) < 8:
        raise BenchError(f"run key {key!r} is too short: give at least 8 characters of it")
    keys = find_run_keys(store, key)
    if len(keys) != 1:
        raise BenchError(f"no run has a key starting {key!r}" if not keys
                         else f"{len(keys)} runs have a key starting {key!r}: give more characters")
    detail = run_detail(store, keys[0])
    run = detail["run"]
    out.print(f"{run['method']} x {run['task']} seed={run['seed']} [{run['hardware']}]: {run['status']}",
              markup=False, highlight=False)
    out.print(f"run_key {run['run_key']}  code {run['code_version']}  wall {run['wall_s']} s  cpu {run['cpu_s']} s",
              markup=False, highlight=False)
    out.print(f"method_config {json.dumps(run['method_config'])}", markup=False, highlight=False, soft_wrap=True)
    out.print(f"task_config {json.dumps(run['task_config'])}", markup=False, highlight=False, soft_wrap=True)
    for name, value in sorted(detail["metrics"].items()):
        out.print(f"  {name} = {value:.6g}", markup=False, highlight=False)
    if detail["environment"]:
        env = detail["environment"]
        out.print(f"ran on {env['host']} ({env['cpu']}; GPU {env['gpu'] or 'none'}; Python {env['python']})",
                  markup=False, highlight=False)
    if run["error"]:
        out.print("error:", markup=False, highlight=False)
        out.print(run["error"], markup=False, highlight=False, soft_wrap=True)
    out.print("log (library warnings and messages while it ran):" if run.get("log") else "log: nothing was said",
              markup=False, highlight=False)
    if run.get("log"):
        out.print(run["log"], markup=False, highlight=False, soft_wrap=True)


@app.command()
def export(
    format: Annotated[ExportFormat, typer.Option("--format", help="csv, json, md or latex.")] = ExportFormat.csv,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="File (default: stdout).")] = None,
    task: Annotated[Optional[str], typer.Option(help="Only this task.")] = None,
    metric: MetricOption = None,
    db: DbOption = None,
) -> None:
    """Export the leaderboard (per task instance, method config and metric: mean, std, CI over seeds)."""
    from leaderboard.export import render
    from bench.store import Store

    registry = _registry()
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


@app.command()
def claims(
    paper: Annotated[Optional[str], typer.Option(help="Only this paper.")] = None,
    check: Annotated[bool,
                     typer.Option("--check", help="Only validate every claims file against the registry.")] = False,
    format: Annotated[ClaimsFormat, typer.Option("--format", help="table (the terminal's), or json, md or csv: one "
                                                                  "unwrapped row per claim, for files and pipes.")]
    = ClaimsFormat.table,
    wide: Annotated[bool, typer.Option("--wide", help="The table with every claim's reasons (a wide terminal).")]
    = False,
    db: DbOption = None,
) -> None:
    """Each claim of a paper: the paper's value, ours, and the verdict."""
    from leaderboard.claims import check_all, evaluate_paper, load_paper
    from leaderboard.lock import read_lock, with_reference
    from leaderboard.verdict_export import render_rows, verdict_rows

    if paper is not None and not paper.strip():
        raise BenchError("--paper is empty; give a paper slug (bench list papers) or leave --paper out for all")
    registry = _registry()
    if check:
        results = check_all(registry)
        problems = [(slug, error) for slug, error in results if error]
        for slug, error in results:
            out.print(f"{slug}: {'ok' if error is None else error}", highlight=False, markup=False)
        if problems:
            raise BenchError(f"{len(problems)} claims file(s) invalid: {', '.join(s for s, _ in problems)}")
        return
    slugs = [paper] if paper else registry.papers()
    for slug in slugs:
        registry.paper_path(slug)  # an unknown paper is refused before the store is opened
    store = _store_or_empty(db)
    if format != ClaimsFormat.table:
        rows = []
        for slug in slugs:
            paper_ = load_paper(registry, slug)
            shown, _ = with_reference(evaluate_paper(paper_, store, registry), read_lock(slug))
            rows += verdict_rows(paper_, shown)
        sys.stdout.write(render_rows(rows, format.value))
        return
    for slug in slugs:
        paper_ = load_paper(registry, slug)
        _print_verdicts(paper_, evaluate_paper(paper_, store, registry), lock=read_lock(slug), wide=wide)
    if not paper:
        _print_paper_counts([load_paper(registry, slug) for slug in slugs], store, registry, None)


def _store_or_empty(db):
    """The store; where the default store does not exist yet (a fresh checkout), an empty one in memory, so that
    the verdict locks' reference runs still show."""
    from bench.store import Store, resolve_url

    if _default_store_missing(resolve_url(db)):
        return Store.open("sqlite://")
    return Store.open(db, create=False)


def _default_store_missing(url: str) -> bool:
    """The URL is the default ./bench.db and no such file exists yet (a fresh checkout)."""
    from bench.store import DEFAULT_URL

    return url == DEFAULT_URL and not Path(url[len("sqlite:///"):]).exists()


VERDICT_STYLES = {"reproduced": "green", "not reproduced": "red", "partially": "yellow", "inconclusive": "magenta",
                  "uninformative": "magenta", "underpowered": "yellow", "no-harm holds": "cyan", "no-harm fails": "red"}


def _print_verdicts(paper, verdicts, lock=None, wide: bool = False) -> None:
    """The claims, compact (three short lines a claim, readable at 80 columns) or `wide` (a table with every
    reason); with a lock, a paper with nothing stored shows the lock's reference run (labelled) and a stored
    verdict that differs from the lock says so."""
    from leaderboard.lock import with_reference

    verdicts, source = with_reference(verdicts, lock)
    title = f"{paper.slug}: {paper.title}"
    if source == "reference":
        title += (f"\n(nothing stored: the {lock.label}; re-run locally: "
                  f"bench reproduce {paper.slug} --scale cpu --controls)")
    (_print_table if wide else _print_compact)(title, verdicts)


def _print_compact(title: str, verdicts) -> None:
    from rich.text import Text

    out.print(Text(title, style="bold"))
    width = out.width
    for v in verdicts:
        head = Text(f"{v.claim.id}  ")
        head.append(v.verdict, style=VERDICT_STYLES.get(v.verdict, "dim"))
        head.append(f"  {v.claim.kind_label} · {v.claim.scale} · {v.claim.seeds} seeds", style="dim")
        out.print(head, overflow="fold")
        for line in (f"  paper {v.paper_text} | ours {v.ours_text or '—'}",
                     f"  negative control: {v.control}" if v.control != "none" else "",
                     f"  switched off: {v.switched}" if v.switched != "none" else ""):
            if line:
                text = Text(line)
                text.truncate(width, overflow="ellipsis")
                out.print(text, no_wrap=True)
        if v.evidence is not None and v.evidence.quantity:  # the numbers the verdict rests on: folded, never cut
            out.print(Text(f"  {v.evidence.text()}", style="dim"), overflow="fold")
    out.print(Text("the reasons: bench claims --wide (or --format md)", style="dim"))


def _print_table(title: str, verdicts) -> None:
    from rich.table import Table

    table = Table(title=title, box=None, pad_edge=False, title_justify="left")
    for col in ("claim", "kind", "scale", "paper", "ours", "verdict", "why"):
        table.add_column(col, overflow="fold")
    for v in verdicts:
        color = VERDICT_STYLES.get(v.verdict, "dim")
        table.add_row(v.claim.id, v.claim.kind_label, v.claim.scale, v.paper_text, v.ours_text,
                      f"[{color}]{v.verdict}[/{color}]", v.detail)
    out.print(table)


class Numerics(str, Enum):
    pinned = "pinned"
    default = "default"


class Scale(str, Enum):
    cpu = "cpu"
    paper = "paper"
    all = "all"


@app.command()
def reproduce(
    paper: Annotated[Optional[str], typer.Argument(help="Paper slug (bench list papers); or --all.")] = None,
    all_: Annotated[bool,
                    typer.Option("--all", help="Every paper's claims in one grid (default --scale cpu).")] = False,
    scale: Annotated[Scale, typer.Option(help="Claims to run: cpu (cpu-full, cpu-reduced), paper or all. Paper-scale "
                                              "cells run only when asked: they need a GPU and hub "
                                              "models.")] = Scale.cpu,
    allow_cpu: AllowCpuOption = False,
    seeds: Annotated[Optional[int], typer.Option(help="Seeds per cell (default: each claim's own).",
                                                    click_type=ASCII_INT)] = None,
    controls: Annotated[bool, typer.Option("--controls", help="Also run each claim's negative control (the cells "
                                                               "where it must not hold).")] = False,
    lock: Annotated[bool, typer.Option("--lock", help="Write each paper's verdict lock, leaderboard/verdicts/<slug>"
                                                      ".yaml (implies --controls; at the claims' own seeds).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the cells, run nothing.")] = False,
    runner: Annotated[str, typer.Option(help="local or ray.")] = "local",
    address: Annotated[Optional[str],
                       typer.Option(help="Ray: none starts a local Ray, auto joins a running one.")] = None,
    workers: WorkersOption = 1,
    timeout: TimeoutOption = None,
    numerics: Annotated[Numerics, typer.Option(help="Float numerics: pinned (AVX2 kernels, the default) or default "
                                                    "(ATEN_CPU_CAPABILITY=default: ATen's scalar kernels), the "
                                                    "second numerics of the verdict locks.")] = Numerics.pinned,
    db: DbOption = None,
) -> None:
    """Run every cell a paper's claims need (resuming), then print the verdicts."""
    import time

    from bench.store import Store
    from leaderboard.claims import claim_groups, evaluate_paper, load_paper
    from leaderboard.lock import read_lock
    from leaderboard.reproduction import SCALE_CHOICES, cache_build_seconds, cache_first, claim_cells, expected_costs
    from bench.cells import MAX_SEEDS

    _check_runner(runner, address)
    _check_limits(workers, timeout)
    if all_ == (paper is not None):
        raise BenchError("give one paper slug or --all (bench list papers)")
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise BenchError(f"--seeds {seeds}: give 1 to {MAX_SEEDS} seeds per cell")
    if lock and seeds is not None:
        raise BenchError("--lock records the verdicts at each claim's own seeds: leave --seeds out")
    if lock and runner != "local":
        raise BenchError("--lock runs every cell here on one thread (its numerics fingerprint): use --runner local")
    controls = controls or lock
    if numerics is Numerics.default:
        db = _under_default_numerics(db)
    registry = _registry()
    papers = [load_paper(registry, slug) for slug in (registry.papers() if all_ else [paper])]
    chosen = scale.value
    cells = cache_first(claim_cells(papers, registry, chosen, seeds=seeds, controls=controls))
    if dry_run:
        for cell in cells:
            out.print(f"{cell.run_key[:12]}  {cell.label()}  method_config={dict(cell.method_config)}  "
                      f"task_config={dict(cell.task_config)}", soft_wrap=True, highlight=False, markup=False)
        out.print(f"{len(cells)} cells")
        return
    _check_devices(cells, runner)
    if not allow_cpu:  # paper-scale cells run on hardware cpu (no claim names a GPU yet)
        groups = [g for p in papers for c in p.claims if c.scale in SCALE_CHOICES[chosen]
                  for g in claim_groups(c, controls, p, registry)]
        _refuse_hub_models_on_cpu([g.method_config for g in groups] + [g.task_config for g in groups], ["cpu"],
                                  "paper-scale cells need a GPU machine")
    store = Store.open(db)
    started, clock = time.time(), time.perf_counter()
    summary = _progress_runner(cells, store, registry, workers, timeout, force=False, runner=runner, address=address,
                               costs=expected_costs(store, cells), threads=1 if lock else None)
    _report_summary(summary)
    if lock:
        _write_locks(papers, store, registry, chosen, summary, all_, numerics)
    if not all_:
        _print_verdicts(papers[0], evaluate_paper(papers[0], store, registry, seeds=seeds),
                        lock=read_lock(papers[0].slug))
    else:
        _print_paper_counts(papers, store, registry, seeds)
        builds, build_s = cache_build_seconds(started)
        wall = time.perf_counter() - clock
        err.print(f"wall {wall:.0f} s for {len(cells)} cells with {workers} worker(s); {builds} cached model(s) built "
                  f"in {build_s:.0f} s ({100 * build_s / max(wall * max(workers, 1), 1e-9):.0f} % "
                  "of the workers' time)",
                  highlight=False)
    _exit_on_failures(summary)


NUMERICS_DEFAULT_ENV = {"ATEN_CPU_CAPABILITY": "default"}


def _under_default_numerics(db: Optional[str]) -> str:
    """The command re-run in a process whose ATen kernels are the scalar ones (they are chosen when torch loads, so
    the variable must be set before): returns the store to use, which must not be the pinned runs' own (a run key
    names the cell, not its numerics, so the two would resume each other's runs)."""
    from bench.store import resolve_url

    url = resolve_url(db) if db else "sqlite:///bench-numerics-default.db"
    if url == resolve_url(None) and db is None:
        url = "sqlite:///bench-numerics-default.db"
    if url == resolve_url(None):
        raise BenchError("--numerics default keeps its runs apart from the pinned ones: give another --db than the "
                         "default store (its own default is sqlite:///bench-numerics-default.db)")
    if any(os.environ.get(k) != v for k, v in NUMERICS_DEFAULT_ENV.items()):
        argv = list(sys.argv[1:])
        if db is None:
            argv += ["--db", url]
        os.execve(sys.executable, [sys.executable, "-m", "bench", *argv], {**os.environ, **NUMERICS_DEFAULT_ENV})
    return url


def _write_locks(papers, store, registry, scale: str, summary, all_: bool = True,
                 numerics: Numerics = Numerics.pinned) -> None:
    """One verdict lock per paper, only when every cell finished (a lock of a partial run would pin its gaps); under
    --numerics default, each paper's verdicts are added to its existing lock as the second numerics'."""
    from leaderboard.claims import evaluate_paper
    from leaderboard.lock import LOCK_COMMAND, make_lock, merge_numerics, read_lock, write_lock
    from leaderboard.reproduction import SCALE_CHOICES

    if set(summary.counts) - {"done", "skipped"}:
        err.print("no verdict lock written: some cells did not finish (see the counts above); re-run to resume")
        return
    for paper in papers:
        command = LOCK_COMMAND if all_ else f"bench reproduce {paper.slug} --lock"
        lock = make_lock(paper, evaluate_paper(paper, store, registry), store, registry, SCALE_CHOICES[scale], command)
        if numerics is Numerics.default:
            pinned = read_lock(paper.slug)
            if pinned is None:
                raise BenchError(f"{paper.slug} has no lock under the pinned numerics to add these verdicts to: "
                                 f"run `{command}` first")
            lock = merge_numerics(pinned, lock)
        path = write_lock(lock)
        err.print(f"locked {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}",
                  highlight=False)


def _print_paper_counts(papers, store, registry, seeds) -> None:
    """One row per paper and scale: how many of its claims got each verdict, its sanity checks (never counted) and the
    CPU seconds of its runs (details: bench claims --paper SLUG)."""
    from collections import Counter

    from rich.table import Table

    from leaderboard.claims import VERDICTS as kinds
    from leaderboard.claims import paper_overview

    table = Table(title="verdicts per paper and scale (bench claims --paper SLUG for each claim)", box=None,
                  pad_edge=False, title_justify="left")
    for col in ("paper", "scale", *kinds, "checks", "CPU s"):
        table.add_column(col, justify="left" if col in ("paper", "scale") else "right")
    totals: Counter = Counter()
    unchecked: dict[str, int] = {}
    for paper in papers:
        row = paper_overview(paper, store, registry, seeds=seeds)
        if row.unchecked:
            unchecked[paper.slug] = row.unchecked
        for i, (scale, counts) in enumerate(row.by_scale.items()):
            totals.update({(scale, k): n for k, n in counts.items()})
            cost = "" if i else ("n/a" if row.cpu_s is None else f"{row.cpu_s:.0f}")
            table.add_row(paper.slug if i == 0 else "", scale, *(str(counts[k]) for k in kinds),
                          "" if i else str(row.checks), cost)
    for scale in sorted({s for s, _ in totals}):
        table.add_row("total", scale, *(str(totals[(scale, k)]) for k in kinds), "", "")
    out.print(table)
    if unchecked:  # a claim that also holds where it must not is uninformative: these are not settled yet
        out.print(f"{sum(unchecked.values())} of the claims counted reproduced or partially have a negative control "
                  f"not run ({', '.join(f'{slug} {n}' for slug, n in unchecked.items())}): --controls runs them, and "
                  "a claim that also holds on its control turns uninformative", highlight=False)


@app.command()
def leaderboard(
    db: DbOption = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.", click_type=ASCII_INT)] = 8501,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    verbose: VerboseOption = False,
) -> None:
    """Serve the Streamlit leaderboard (read-only) over the store."""
    from bench.store import Store, mask_url, resolve_url

    if not 1 <= port <= 65535:
        raise BenchError(f"--port {port}: give a TCP port in 1-65535")
    if not address.strip():
        raise BenchError("--address is empty; give an address to listen on, e.g. 127.0.0.1")
    from leaderboard.streamlit_server import unusable_address

    problem = unusable_address(address, port)
    if problem:
        raise BenchError(problem)
    url = resolve_url(db)
    if _default_store_missing(url):
        Store.open(url)  # a fresh checkout: an empty default store, so the app shows the verdict locks' reference runs
        err.print("created an empty store ./bench.db: the leaderboard shows each paper's locked reference run")
    Store.open(url, readonly=True)  # a bad or foreign database is a one-line error here, not in the browser
    app_path = Path(__file__).resolve().parent.parent / "leaderboard" / "app.py"
    # `streamlit run`, through a launcher that warms the overview's cache while the server starts
    command = [sys.executable, "-m", "leaderboard.streamlit_server", "run", str(app_path), "--server.port", str(port),
               "--server.address", address, "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--client.toolbarMode", "minimal"]  # a read-only app: no Deploy button or developer menu
    if not verbose:  # our own line below says where it listens: no Streamlit banner, no Uvicorn start-up lines
        command += ["--logger.hideWelcomeMessage", "true", "--logger.level", "error"]
    # the URL (and its password) goes to streamlit in its own environment, never on its command
    # line: `ps` shows every user a command line, but a process's environment only to its owner
    env = {**os.environ, "BENCH_DB_URL": url}
    env.pop("BENCH_DB_PASSWORD_FILE", None)  # the URL is complete now
    err.print(f"leaderboard on http://{address}:{port} (store {mask_url(url)}); Ctrl-C stops it",
              highlight=False, markup=False, soft_wrap=True)
    sys.stdout.flush()
    os.execve(sys.executable, command, env)  # streamlit takes this process over: signals reach it directly


AddressOption = Annotated[Optional[str], typer.Option("--address", envvar="RAY_API_SERVER_ADDRESS",
                          help="The Ray head's job API, http://HEAD:8265 (default http://127.0.0.1:8265).")]


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
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

    _set_verbose(verbose)
    job = submit_job(address, list(ctx.args), resolve_url(db), python=python)  # masks the password (app.cluster)
    out.print(job, highlight=False)
    err.print("submitted; follow it with: bench jobs <id> --follow (the address is remembered)", highlight=False,
              markup=False)


@app.command()
def jobs(
    submission_id: Annotated[Optional[str], typer.Argument(help="A job's submission id (default: list all).")] = None,
    follow: Annotated[bool, typer.Option("--follow", help="Stream the job's logs until it ends.")] = False,
    address: AddressOption = None,
) -> None:
    """List the cluster's jobs, or show (and --follow) one of them."""
    from datetime import datetime

    from app import cluster

    if submission_id is None:
        from rich.table import Table

        table = Table(box=None, pad_edge=False)
        for col in ("submission id", "status", "started"):
            table.add_column(col, no_wrap=True)  # an id is copied from here: never folded
        table.add_column("entrypoint", overflow="fold")
        for job in cluster.list_jobs(address):
            started = (datetime.fromtimestamp(job.start_time / 1000).strftime("%Y-%m-%d %H:%M:%S")
                       if job.start_time else "")
            table.add_row(job.submission_id or job.job_id or "", str(job.status.value), started, job.entrypoint)
        out.print(table)
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


@app.command("alpacaeval")
def alpacaeval_(
    files: Annotated[list[Path],
                     typer.Argument(help="preferences.csv(.gz) files, or AlpacaEval annotations.json files.")],
    baseline: Annotated[str, typer.Option(help="The reference model (its LC is 50).")] = "gpt4_1106_preview",
    leaderboard: Annotated[Optional[Path], typer.Option(
        help="A leaderboard CSV (model, length_controlled_winrate, win_rate): print the published values and our "
             "differences.")] = None,
    gamed: Annotated[Optional[str], typer.Option(
        help="Folder holding gamed_baselines.csv.gz and gamed_baselines_glm.csv (the LC's regulariser); default: "
             "the first FILE's folder when it holds them; 'none': no regulariser.")] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
) -> None:
    """AlpacaEval 2.0 raw and length-controlled win rates (percent, with standard errors) of annotated models.

    The instruction difficulties of the LC GLM are fitted jointly on all the models given: pass many."""
    from tasks.preference import _alpacaeval_lc as lc

    try:
        annotations = lc.read_annotations(*files)
        board = None if leaderboard is None else lc.read_leaderboard(leaderboard)
        anchors = (lc.find_gamed_baselines(files[0].expanduser().parent) if gamed is None
                   else None if gamed == "none" else lc.read_gamed_baselines(gamed))
        table, own = lc.evaluate(annotations, baseline, anchors, board)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    table = table.sort_values("lc_win_rate", ascending=False)
    notes = ["regulariser: the gamed baselines rebuilt from their published GLM; their own LC: "
             + ", ".join(f"{r.Index} {r.lc_win_rate:.2f} (published {r.published_lc:.2f})" for r in own.itertuples())
             if own is not None else "regulariser: the gamed baselines among the annotations" if anchors is not None
             else "regulariser: none (no gamed baselines given or beside FILE; the package's length_controlled_noreg)"]
    if board is not None:
        a = lc.agreement(table)
        notes.append(f"against {leaderboard.name} ({a['n']} models): LC |ours - published| mean {a['lc_mean']:.2f}, "
                     f"max {a['lc_max']:.2f} ({a['lc_worst']}); raw mean {a['raw_mean']:.2g}, max {a['raw_max']:.2g}")
    if csv:
        sys.stdout.write(table.to_csv(float_format="%.4f"))
        for note in notes:
            err.print(note, highlight=False, markup=False)
        return
    from rich.table import Table

    def cell(value: float) -> str:
        return "–" if value != value else f"{value:.2f}".replace("-0.00", "0.00")

    published = ["published LC", "LC diff"] if board is not None else []
    view = Table("model", "LC win rate", *published, "win rate", *(["published", "diff"] if published else []), "n",
                 "avg length", title="AlpacaEval 2.0 (percent ± s.e.)")
    for model, row in table.iterrows():
        view.add_row(str(model), f"{row.lc_win_rate:.2f} ± {row.lc_standard_error:.2f}",
                     *([cell(row.published_lc), cell(row.lc_diff)] if published else []),
                     f"{row.win_rate:.2f} ± {row.standard_error:.2f}",
                     *([cell(row.published_win_rate), cell(row.win_rate_diff)] if published else []),
                     str(int(row.n_total)), f"{row.avg_length:.0f}")
    out.print(view)
    for note in notes:
        out.print(note, highlight=False, markup=False)

@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create or migrate the store's schema to the newest revision (Alembic)."""
    from bench.store import make_engine, mask_url, resolve_url, upgrade

    engine = make_engine(resolve_url(db))
    out.print(f"{mask_url(engine.url.render_as_string(hide_password=True))}: schema at {upgrade(engine)}",
              highlight=False, markup=False)


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
