"""Speed of the Ray runner and of the store (prints; asserts nothing — these machines are noisy).

    .venv/bin/python benchmarks/ray_grid.py [--skip-postgres]

Prints: Ray start-up time; a 40-cell CPU-bound grid (cells of about 1 s) on Ray vs the
sequential local runner (target >= 1.8x on 2 cores, the limit is 2x); Ray's scheduling overhead
per cell on trivial cells; insert throughput of 10,000 runs into SQLite and into PostgreSQL
(the loopback server of tests/pg.py).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(FIXTURES), str(HERE)]

from bench.cells import Entry, expand  # noqa: E402
from bench.registry import Listing, Registry  # noqa: E402
from bench.spec import Cell, RunRecord  # noqa: E402
from bench.store import Store  # noqa: E402
from runners import local  # noqa: E402

REGISTRY = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "bench"),
                     Listing("method", "toy_noisy", "toy", "bench_toy.toy_noisy", "", "bench"),
                     Listing("method", "toy_busy", "toy", "busy.toy_busy", "", "bench")])
RUNTIME_ENV = {"env_vars": {"PYTHONPATH": os.pathsep.join([str(FIXTURES), str(HERE)])}}


def cells(method: str, config: dict, n: int) -> list[Cell]:
    return expand(REGISTRY, [Entry(method, config)], [Entry("toy_target")], list(range(n)), ["cpu"]).cells


def calibrate(seconds: float = 1.0) -> int:
    """Loop iterations that take about `seconds` here (one process, this machine's load): the method's loop."""
    n = 1_000_000
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i & 7
    return int(n * seconds / (time.perf_counter() - start))


def timed_grid(run, grid, url) -> float:
    store = Store.open(url)
    start = time.perf_counter()
    summary = run(grid, store)
    wall = time.perf_counter() - start
    assert summary.counts.get("done") == len(grid), summary.counts
    return wall


def insert_rate(url: str, n: int = 10_000) -> float:
    store = Store.open(url)
    records = [RunRecord(Cell("m", "t", seed, {"c": 1.0}, {"beta": 0.01}), "done", task_version=1,
                         metrics={"final_gap": 0.1, "other": 2.0}, started_at=1.7e9, wall_s=0.5) for seed in range(n)]
    store.save(records[0], runner="bench")  # the environment row, once
    start = time.perf_counter()
    for record in records:
        store.save(record, runner="bench")
    return n / (time.perf_counter() - start)


def main() -> None:
    import ray

    from runners import ray as ray_runner

    tmp = Path(tempfile.mkdtemp(prefix="raygrid"))
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f} "
          "(another process busy on a core caps the speed-up below 2x)")
    start = time.perf_counter()
    ray_runner.connect(None, RUNTIME_ENV, num_cpus=2)
    print(f"Ray start-up (ray.init, local, 2 CPUs): {time.perf_counter() - start:.1f} s")

    # warm the worker pool (2 workers import numpy and bench once), as a long grid would
    ray_runner.run_cells(cells("toy_noisy", {}, 4), Store.open(f"sqlite:///{tmp}/warm.db"), REGISTRY)

    iterations = calibrate(1.0)
    grid = cells("toy_busy", {"iterations": iterations}, 40)
    seq = timed_grid(lambda g, s: local.run_cells(g, s, REGISTRY), grid, f"sqlite:///{tmp}/seq.db")
    on_ray = timed_grid(lambda g, s: ray_runner.run_cells(g, s, REGISTRY), grid, f"sqlite:///{tmp}/ray.db")
    print(f"40-cell CPU-bound grid (~{seq / 40:.2f} s a cell): sequential local {seq:.1f} s, Ray {on_ray:.1f} s "
          f"-> speed-up {seq / on_ray:.2f}x (target >= 1.8x, limit 2x on 2 cores)")
    pool = timed_grid(lambda g, s: local.run_cells(g, s, REGISTRY, workers=2), grid, f"sqlite:///{tmp}/pool.db")
    print(f"  reference, what this machine gives 2 processes now: local runner --workers 2 {pool:.1f} s "
          f"-> {seq / pool:.2f}x; Ray reaches {pool / on_ray:.0%} of it")

    trivial = cells("toy_noisy", {"noise": 0.2}, 200)
    local_wall = timed_grid(lambda g, s: local.run_cells(g, s, REGISTRY), trivial, f"sqlite:///{tmp}/tl.db")
    ray_wall = timed_grid(lambda g, s: ray_runner.run_cells(g, s, REGISTRY), trivial, f"sqlite:///{tmp}/tr.db")
    print(f"trivial cells (200): local in-process {1000 * local_wall / 200:.1f} ms/cell, "
          f"Ray {1000 * ray_wall / 200:.1f} ms/cell "
          f"-> Ray scheduling overhead ~{1000 * (ray_wall - local_wall / 2) / 200:.1f} ms/cell "
          "(2 workers, store writes included)")
    ray.shutdown()
    print(f"load average after the grids: {os.getloadavg()[0]:.2f}")

    print("insert 10,000 runs, SQLite (WAL, one transaction per run): "
          f"{insert_rate(f'sqlite:///{tmp}/ins.db'):.0f} runs/s")
    if "--skip-postgres" not in sys.argv:
        sys.path.insert(0, str(ROOT))
        from tests.pg import Unavailable, create_database, postgres_server

        try:
            url, drop = create_database(postgres_server())
        except Unavailable as exc:
            print(f"insert 10,000 runs, PostgreSQL: skipped ({exc})")
        else:
            try:
                print("insert 10,000 runs, PostgreSQL (loopback, one transaction per run): "
                      f"{insert_rate(url):.0f} runs/s")
            finally:
                drop()


if __name__ == "__main__":
    main()
