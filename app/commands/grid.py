"""`bench grid` (methods x tasks x seeds x hardware) and `bench run`, the grid of one method on one task: both end
in `run_grid`, which builds the cells, checks them, runs them on the chosen runner and reports."""

from pathlib import Path
from typing import Annotated

import typer

from app import prepare
from app.console import err, out
from app.options import (
    ASCII_INT,
    AllowCpuOption,
    DbOption,
    ForceOption,
    Isolation,
    IsolationOption,
    MaxCellsOption,
    SetOption,
    StoreRetryOption,
    TimeoutOption,
    VerboseOption,
    WorkersOption,
    set_verbose,
)
from app.progress import exit_on_failures, report_summary, run_with_progress
from bench.errors import BenchError


def run(
    method: Annotated[str, typer.Option("--method", "-m", help="Registered method name.")],
    task: Annotated[str, typer.Option("--task", "-t", help="Registered task name.")],
    seed: Annotated[int | None, typer.Option(help="One seed (default 0).", click_type=ASCII_INT)] = None,
    seeds: Annotated[str | None, typer.Option(help="Several seeds: 0-9 or 0,3,5.")] = None,
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
    from bench.cells import entry_from_flag
    from bench.configs import split_overrides
    from bench.execute import device_for

    prepare.check_limits(workers, timeout)
    chosen_seeds = prepare.seeds(seed, seeds)
    registry = prepare.registry()
    method_raw, task_raw = split_overrides(set_ or [])
    m = entry_from_flag(registry, "method", method, method_raw, tasks=[task])
    t = entry_from_flag(registry, "task", task, task_raw)
    reason = registry.incompatibility(method, task, hardware)
    if reason:
        raise BenchError(f"incompatible pair: {reason}")
    device_for(hardware)
    runner = prepare.runner("local", workers, isolation=isolation.value)
    spec = {"methods": [m], "tasks": [t], "seeds": chosen_seeds, "hardware": [hardware]}
    store, cells, summary = run_grid(registry, spec, runner, timeout, force, allow_cpu, store_retry, db)
    _print_cells(store, registry, cells)
    exit_on_failures(summary)


def grid(
    method: Annotated[list[str] | None, typer.Option("--method", "-m", help="Method (repeatable).")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", "-t", help="Task (repeatable).")] = None,
    seeds: Annotated[str | None, typer.Option(help="Seeds: 0-9 or 0,3,5 (default 0).")] = None,
    hardware: Annotated[list[str] | None, typer.Option(help="Hardware (repeatable; default cpu).")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="YAML grid file.")] = None,
    set_: SetOption = None,
    runner: Annotated[str, typer.Option(help="local, or ray (see 'Running on a cluster' in the README).")] = "local",
    address: Annotated[str | None, typer.Option(help="Ray: none starts a local Ray, auto joins a running one, "
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
    set_verbose(verbose)
    from bench.cells import MAX_CELLS

    chosen = prepare.runner(runner, workers, address, isolation=isolation.value)
    prepare.check_limits(workers, timeout)
    if max_cells < 1:
        raise BenchError(f"--max-cells {max_cells}: give a positive number of cells (default {MAX_CELLS:,})")
    registry = prepare.registry()
    if file is not None:
        if method or task or set_:
            raise BenchError("give a grid --file or --method/--task/--set flags, not both (put overrides in the file)")
        spec = _spec_from_file(registry, file, seeds, hardware)
    else:
        spec = _spec_from_flags(registry, method, task, set_, seeds, hardware)
    _, _, summary = run_grid(registry, spec, chosen, timeout, force, allow_cpu, store_retry, db, max_cells)
    exit_on_failures(summary)


def run_grid(registry, spec: dict, runner, timeout: float | None, force: bool, allow_cpu: bool,
             store_retry: float | None, db: str | None, max_cells: int | None = None):
    """Expand the grid (incompatible pairs named, none left a one-line error), check that the runner can place its
    cells and that no hub model would train on the CPU, then run them and report; returns (store, cells, summary)."""
    from bench.cells import MAX_CELLS, expand

    built = expand(registry, spec["methods"], spec["tasks"], spec["seeds"], spec["hardware"],
                   max_cells=max_cells or MAX_CELLS)
    if not built.cells:  # one line: the reason of the first combination
        m, t, hw, reason = built.incompatible[0]
        raise BenchError(f"the grid has no compatible (method, task, hardware) cell: {m} x {t} [{hw}]: {reason}")
    for m, t, hw, reason in built.incompatible:
        err.print(f"[yellow]incompatible[/yellow] {m} x {t} [{hw}]: {reason}")
    runner.place(built.cells)
    if not allow_cpu:
        prepare.refuse_hub_models_on_cpu([e.config for e in (*spec["methods"], *spec["tasks"])], spec["hardware"],
                                         "use --hardware cuda on a GPU machine")
    store = prepare.open_store(db, store_retry)
    summary = run_with_progress(built.cells, store, registry, runner, timeout, force)
    report_summary(summary)
    return store, built.cells, summary


def _spec_from_file(registry, file: Path, seeds: str | None, hardware: list[str] | None) -> dict:
    """A YAML grid file's methods, tasks, seeds and hardware (--seeds and --hardware replace the file's)."""
    from bench.cells import check_hardware, load_grid_file, parse_seeds

    spec = load_grid_file(file)
    if seeds is not None:
        spec["seeds"] = parse_seeds(seeds)
    if hardware:
        spec["hardware"] = check_hardware(hardware)
    for kind in ("method", "task"):
        for entry in spec[kind + "s"]:
            registry.listing(kind, entry.name)
    return spec


def _spec_from_flags(registry, method: list[str] | None, task: list[str] | None, set_: list[str] | None,
                     seeds: str | None, hardware: list[str] | None) -> dict:
    """The grid of --method, --task, --set, --seeds and --hardware."""
    from bench.cells import check_hardware, entry_from_flag, parse_seeds
    from bench.configs import split_overrides

    if not method or not task:
        raise BenchError("a grid needs at least one --method and one --task (or --file grid.yaml)")
    method_raw, task_raw = split_overrides(set_ or [])
    return {
        "methods": [entry_from_flag(registry, "method", m, method_raw, tasks=task) for m in method],
        "tasks": [entry_from_flag(registry, "task", t, task_raw) for t in task],
        "seeds": parse_seeds(seeds) if seeds is not None else [0],
        "hardware": check_hardware(hardware or ["cpu"]),
    }


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
