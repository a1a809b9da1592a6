"""`bench reproduce`: run every cell a paper's claims need (resuming), print the verdicts, and with --lock write each
paper's verdict lock; `--numerics default` re-runs the command under ATen's scalar kernels."""

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from app import prepare
from app.console import err, out
from app.options import ASCII_INT, AllowCpuOption, DbOption, TimeoutOption, WorkersOption
from app.progress import exit_on_failures, report_summary, run_with_progress
from app.terminal import render_dry_run
from app.verdicts import emit, print_paper_counts, print_verdicts
from bench.errors import BenchError


class Numerics(StrEnum):
    pinned = "pinned"
    default = "default"


class Scale(StrEnum):
    cpu = "cpu"
    paper = "paper"
    all = "all"


def reproduce(
    paper: Annotated[str | None, typer.Argument(help="Paper slug (bench list papers); or --all.")] = None,
    all_: Annotated[bool,
                    typer.Option("--all", help="Every paper's claims in one grid (default --scale cpu).")] = False,
    scale: Annotated[Scale, typer.Option(help="Claims to run: cpu (cpu-full, cpu-reduced), paper or all. Paper-scale "
                                              "cells run only when asked: they need a GPU and hub "
                                              "models.")] = Scale.cpu,
    allow_cpu: AllowCpuOption = False,
    seeds: Annotated[int | None, typer.Option(help="Seeds per cell (default: each claim's own).",
                                              click_type=ASCII_INT)] = None,
    controls: Annotated[bool, typer.Option("--controls", help="Also run each claim's negative control (the cells "
                                                               "where it must not hold).")] = False,
    lock: Annotated[bool, typer.Option("--lock", help="Write each paper's verdict lock, leaderboard/verdicts/<slug>"
                                                      ".yaml (implies --controls; at the claims' own seeds).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the cells, run nothing.")] = False,
    runner: Annotated[str, typer.Option(help="local or ray.")] = "local",
    address: Annotated[str | None,
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

    from bench.cells import MAX_SEEDS
    from bench.store import Store
    from leaderboard.claims import evaluate_paper, load_paper
    from leaderboard.lock import read_lock
    from leaderboard.reproduction import cache_build_seconds, cache_first, claim_cells, expected_costs

    chosen = prepare.runner(runner, workers, address, threads=1 if lock else None)  # a lock: one thread a cell
    prepare.check_limits(workers, timeout)
    if all_ == (paper is not None):
        raise BenchError("give one paper slug or --all (bench list papers)")
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise BenchError(f"--seeds {seeds}: give 1 to {MAX_SEEDS} seeds per cell")
    if lock and seeds is not None:
        raise BenchError("--lock records the verdicts at each claim's own seeds: leave --seeds out")
    if lock and not chosen.here:
        raise BenchError("--lock runs every cell here on one thread (its numerics fingerprint): use --runner local")
    controls = controls or lock
    if numerics is Numerics.default:
        db = _under_default_numerics(db)
    registry = prepare.registry()
    papers = [load_paper(registry, slug) for slug in (registry.papers() if all_ else [paper])]
    cells = _buildable(cache_first(claim_cells(papers, registry, scale.value, seeds=seeds, controls=controls)),
                       registry, lock)
    if dry_run:
        emit(render_dry_run(cells, registry, out.width))
        return
    chosen.place(cells)
    if not allow_cpu:  # paper-scale cells run on hardware cpu (no claim names a GPU yet)
        _refuse_hub_models(papers, registry, scale.value, controls)
    store = Store.open(db)
    started, clock = time.time(), time.perf_counter()
    summary = run_with_progress(cells, store, registry, chosen, timeout, force=False,
                                costs=expected_costs(store, cells))
    report_summary(summary)
    if lock:
        _write_locks(papers, store, registry, scale.value, summary, all_, numerics)
    if not all_:
        print_verdicts(papers[0], evaluate_paper(papers[0], store, registry, seeds=seeds),
                       lock=read_lock(papers[0].slug))
    else:
        print_paper_counts(papers, store, registry, seeds)
        builds, build_s = cache_build_seconds(started)
        wall = time.perf_counter() - clock
        err.print(f"wall {wall:.0f} s for {len(cells)} cells with {workers} worker(s); {builds} cached model(s) built "
                  f"in {build_s:.0f} s ({100 * build_s / max(wall * max(workers, 1), 1e-9):.0f} % "
                  "of the workers' time)",
                  highlight=False)
    exit_on_failures(summary)


def _buildable(cells, registry, lock: bool):
    """The cells this machine can build. Those whose task cannot be (data the project does not ship, absent here) are
    left out and said so: their claims read "not run"; a lock, which records every claim, refuses."""
    from bench.cells import unavailable

    reasons = {}
    for cell in cells:
        reason = unavailable(registry, cell.task, cell.task_config)
        if reason:
            reasons.setdefault(reason, []).append(cell)
    if reasons and lock:
        raise BenchError(f"--lock records every claim, but {sum(map(len, reasons.values()))} cells cannot be built on "
                         f"this machine: {next(iter(reasons))}")
    for reason, left in reasons.items():
        err.print(f"{len(left)} cells left out ({', '.join(sorted({c.task for c in left}))}): {reason}",
                  highlight=False)
    return [cell for cell in cells if not any(cell in left for left in reasons.values())]


def _refuse_hub_models(papers, registry, scale: str, controls: bool) -> None:
    """No claim group at this scale (with its controls) may name a hub model: its cells run on hardware cpu."""
    from leaderboard.claims import claim_groups
    from leaderboard.reproduction import SCALE_CHOICES

    groups = [g for p in papers for c in p.claims if c.scale in SCALE_CHOICES[scale]
              for g in claim_groups(c, controls, p, registry)]
    prepare.refuse_hub_models_on_cpu([g.method_config for g in groups] + [g.task_config for g in groups], ["cpu"],
                                     "paper-scale cells need a GPU machine")


NUMERICS_DEFAULT_ENV = {"ATEN_CPU_CAPABILITY": "default"}


def _under_default_numerics(db: str | None) -> str:
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
    --numerics default, or on another machine with the inputs unchanged, each paper's verdicts are added to its
    existing lock (leaderboard.lock.lock_to_write)."""
    from leaderboard.claims import evaluate_paper
    from leaderboard.lock import LOCK_COMMAND, lock_to_write, make_lock, read_lock, write_lock
    from leaderboard.reproduction import SCALE_CHOICES

    if set(summary.counts) - {"done", "skipped"}:
        err.print("no verdict lock written: some cells did not finish (see the counts above); re-run to resume")
        return
    for paper in papers:
        command = LOCK_COMMAND if all_ else f"bench reproduce {paper.slug} --lock"
        lock = make_lock(paper, evaluate_paper(paper, store, registry), store, registry, SCALE_CHOICES[scale], command)
        lock = lock_to_write(read_lock(paper.slug), lock, numerics is Numerics.default)
        path = write_lock(lock)
        err.print(f"locked {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}",
                  highlight=False)
