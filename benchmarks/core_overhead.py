"""Measure the core's speed targets (prints; asserts nothing — these machines are noisy).

    .venv/bin/python benchmarks/core_overhead.py

Targets (issue "Core platform"): `bench list` start-up < 0.5 s; the main job
(`bench run --method dicesgd --task performative`, fresh SQLite) < 3 s; local runner overhead
< 20 ms per cell on trivial cells. Every cell runs in a forked child (a crash cannot take the
driver down); "isolation" is what that costs over executing the same cells in this process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = [sys.executable, "-m", "bench"]


def timed(cmd: list[str], cwd: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main_job_time(repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:  # a fresh ./bench.db each time: the first-run path
            times.append(timed([*BENCH, "run", "--method", "dicesgd", "--task", "performative"], Path(tmp), 1))
    return statistics.median(times)


def runner_overhead(cells: int = 300) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    sys.path.insert(0, str(ROOT))
    from bench.registry import Listing, Registry
    from bench.store import Store
    from bench.cells import Entry, expand
    from bench.execute import execute
    from bench.writes import Writer
    from runners.local import run_cells

    registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "bench"),
                         Listing("method", "toy_noisy", "toy", "bench_toy.toy_noisy", "", "bench")])
    grid = expand(registry, [Entry("toy_noisy")], [Entry("toy_target")], list(range(cells)), ["cpu"]).cells
    out = {}
    with tempfile.TemporaryDirectory() as tmp:  # the same cells and saves, unisolated: the baseline
        store = Store.open(f"sqlite:///{tmp}/b.db")
        store.environment_id()
        start = time.perf_counter()
        with Writer(store, "local") as writer:
            for cell in grid:
                writer.add(execute(cell, registry))
        out["in this process (no isolation)"] = (time.perf_counter() - start) / cells * 1000
    for label, kwargs in (("1 worker, each cell forked", {}),
                          ("2 workers, --timeout", {"workers": 2, "timeout": 60.0})):
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(f"sqlite:///{tmp}/b.db")
            store.environment_id()  # provenance is once per driver, not per cell
            start = time.perf_counter()
            run_cells(grid, store, registry, **kwargs)
            out[label] = (time.perf_counter() - start) / cells * 1000
    return out


def main() -> None:
    startup = timed([*BENCH, "list", "methods"], ROOT, 5)
    print(f"bench list start-up:        {startup:.3f} s   (target < 0.5 s: ratio {startup / 0.5:.2f})")
    job = main_job_time()
    print(f"main job wall time:          {job:.3f} s   (target < 3 s: ratio {job / 3:.2f})")
    overhead = runner_overhead()
    for label, ms in overhead.items():
        print(f"runner overhead, {label:31s} {ms:.2f} ms/cell (target < 20 ms: ratio {ms / 20:.2f})")
    isolation = overhead["1 worker, each cell forked"] - overhead["in this process (no isolation)"]
    print(f"isolation (a forked child per cell) costs {isolation:.2f} ms/cell")


if __name__ == "__main__":
    main()
