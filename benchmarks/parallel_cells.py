"""Two-worker grids: the rate of tiny cells through `bench grid --workers 2` (workers reused, and a fresh process per
cell), and the wall time of small-model cells each on its share of the cores or on all of them.

    .venv/bin/python benchmarks/parallel_cells.py            # tiny cells, then 4 cells of m3_jepa at 10 epochs
    .venv/bin/python benchmarks/parallel_cells.py --epochs 30
    .venv/bin/python benchmarks/parallel_cells.py --tiny-only --seeds 1000

Tiny cells: sgd, pcsgd and dicesgd on performative at T = 1, `--seeds` seeds each, through the real command line
(`python -m bench grid ... --workers 2`), timed from the command's start to its end (the start-up, about a second of
imports, included) and once more without it (the rate between the first and the last stored run). Target (issue
"Reliability and throughput"): at least 200 tiny cells per second on a quiet machine.

Prints the measured ratio; asserts nothing (these machines are noisy). The local runner gives each of N
concurrent cells len(cores) // N threads (runners/local.py `core_share`); "all cores" is the behaviour
before that, every child starting torch's and the BLAS's pools at the machine's core count. Run it on an
otherwise idle machine: both settings run the same cells with the same seeds.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def grid_wall(share: bool, epochs: int, cells: int) -> float:
    import runners.local as local
    from bench.cells import Entry, expand
    from bench.registry import Registry
    from bench.store import Store

    registry = Registry.discover()
    grid = expand(registry, [Entry("m3_jepa", {"epochs": epochs})], [Entry("paired_retrieval")],
                  list(range(cells)), ["cpu"]).cells
    original = local.core_share
    if not share:
        local.core_share = lambda workers: len(os.sched_getaffinity(0))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(f"sqlite:///{tmp}/bench.db")
            start = time.perf_counter()
            summary = local.run_cells(grid, store, registry, workers=2, isolate=True)
            wall = time.perf_counter() - start
    finally:
        local.core_share = original
    assert summary.counts == {"done": cells}, summary.counts
    return wall


TINY_TARGET = 200.0  # cells per second


def tiny_grid(isolation: str, seeds: int) -> tuple[int, float, float]:
    """(cells, wall seconds of the command, seconds from its first stored run to its last) of the tiny grid."""
    import sqlite3
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/tiny.db"
        command = [sys.executable, "-m", "bench", "grid", "-m", "sgd", "-m", "pcsgd", "-m", "dicesgd", "-t",
                   "performative", "--set", "T=1", "--seeds", f"0-{seeds - 1}", "--workers", "2", "--isolation",
                   isolation, "--db", f"sqlite:///{db}"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"the tiny grid failed: {done.stderr[-2000:]}")
        with sqlite3.connect(db) as connection:
            n, first, last = connection.execute(
                "SELECT COUNT(*), MIN(julianday(started_at)), MAX(julianday(finished_at)) FROM runs "
                "WHERE status = 'done'").fetchone()
        connection.close()
    return n, wall, (last - first) * 86400.0


def report_tiny(seeds: int) -> None:
    load = os.getloadavg()[0]
    for isolation in ("worker", "cell"):  # a fresh process per cell is slow: a tenth of the seeds
        n, wall, running = tiny_grid(isolation, seeds if isolation == "worker" else max(10, seeds // 10))
        verdict = "met" if n / wall >= TINY_TARGET else "missed"
        print(f"tiny cells, bench grid --workers 2 --isolation {isolation}: {n} cells in {wall:.2f} s = "
              f"{n / wall:.0f} cells/s with start-up ({n / running:.0f} cells/s from first run to last); "
              f"target >= {TINY_TARGET:.0f}/s: {verdict}; load average {load:.1f} on {os.cpu_count()} cores "
              "at the start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--cells", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=400, help="seeds per method of the tiny grid (3 methods)")
    parser.add_argument("--tiny-only", action="store_true", help="only the tiny cells' rate")
    args = parser.parse_args()
    report_tiny(args.seeds)
    if args.tiny_only:
        return
    from bench.numerics import THREAD_VARIABLES

    for name in THREAD_VARIABLES:
        if name in os.environ:
            sys.exit(f"unset {name}: the benchmark compares the runner's own thread sizing")
    cores = len(os.sched_getaffinity(0))
    shared = grid_wall(True, args.epochs, args.cells)
    everything = grid_wall(False, args.epochs, args.cells)
    print(f"{args.cells} cells of m3_jepa ({args.epochs} epochs), 2 workers, {cores} cores")
    print(f"  each cell on its share ({max(1, cores // 2)} thread(s)): {shared:7.1f} s")
    print(f"  each cell on all {cores} cores:                {everything:7.1f} s")
    print(f"  ratio all / share: {everything / shared:.2f}x")


if __name__ == "__main__":
    main()
