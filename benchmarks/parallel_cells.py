"""Wall time of a two-worker grid of small-model cells, each cell on its share of the cores or on all of them.

    .venv/bin/python benchmarks/parallel_cells.py            # 4 cells of m3_jepa at 10 epochs
    .venv/bin/python benchmarks/parallel_cells.py --epochs 30

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
    from bench.registry import Registry
    from bench.store import Store
    from bench.cells import Entry, expand

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--cells", type=int, default=4)
    args = parser.parse_args()
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
