"""Measure the core's speed targets (prints; asserts nothing — these machines are noisy).

    .venv/bin/python benchmarks/core_overhead.py

Targets (issue "Core platform"): `bench list` start-up < 0.5 s; the main job
(`bench run --method dicesgd --task performative`, fresh SQLite) < 3 s; local runner overhead
< 20 ms per cell on trivial cells. Every cell runs in a forked child (a crash cannot take the
driver down); "isolation" is what that costs over executing the same cells in this process.
`--imports` (issue 20) times real cells forked with and without the modules earlier cells imported
(runners/inherited_imports.py): numpy only, cvxpy, and transformers (a language-model family).
`--memory` times real cells forked with and without keeping the memory they free (runners/local.py
`keep_freed_memory`), and counts their minor page faults.
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
    from bench.cells import Entry, expand
    from bench.execute import execute
    from bench.registry import Listing, Registry
    from bench.store import Store
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


IMPORT_CELLS = (("dicesgd", "performative"), ("wdro", "multi_source_linear"), ("autoregressive", "hetero_vocab_pairs"))


def inherited_imports_saving(method: str, task: str, cells: int = 6) -> None:
    """Seconds per real cell, each forked (one worker, one thread), with and without inherited imports; a first
    run builds the task's cached models so that neither side pays for them. Run in a fresh process per pair (the
    driver keeps what the inheriting run imported)."""
    sys.path.insert(0, str(ROOT))
    from bench.cells import Entry, expand
    from bench.registry import Registry
    from bench.store import Store
    from runners.local import run_cells

    registry = Registry.discover()
    grid = expand(registry, [Entry(method)], [Entry(task)], list(range(cells + 1)), ["cpu"]).cells
    seconds = {}
    with tempfile.TemporaryDirectory() as tmp:
        run_cells(grid[:1], Store.open(f"sqlite:///{tmp}/warm.db"), registry, isolate=True, threads=1,
                  inherit_imports=False)
        for inherit in (False, True):
            store = Store.open(f"sqlite:///{tmp}/{inherit}.db")
            store.environment_id()
            start = time.perf_counter()
            run_cells(grid[1:], store, registry, isolate=True, threads=1, inherit_imports=inherit)
            seconds[inherit] = (time.perf_counter() - start) / cells
    print(f"{method} on {task}: {seconds[False]:.2f} s/cell importing in every child, {seconds[True]:.2f} s/cell "
          f"inheriting the first cell's imports (saves {seconds[False] - seconds[True]:.2f} s a cell, "
          f"ratio {seconds[True] / seconds[False]:.2f})", flush=True)


MEMORY_CELLS = (("sft_ce", "sft_calibration"), ("dpo", "preference_bandit"))


def freed_memory_saving(method: str, task: str, repeats: int = 3) -> None:
    """Seconds and minor page faults of one real cell, forked (one worker, one thread), with and without the child
    keeping the memory it frees (runners.local.keep_freed_memory): the same cell each time, in a fresh store, after
    a first run has built its cached models; the two sides alternate. Medians."""
    import resource

    sys.path.insert(0, str(ROOT))
    import runners.local as local
    from bench.cells import Entry, expand
    from bench.registry import Registry
    from bench.store import Store

    registry = Registry.discover()
    cell = expand(registry, [Entry(method)], [Entry(task)], [0], ["cpu"]).cells
    keep = local.keep_freed_memory
    seconds: dict[bool, list[float]] = {False: [], True: []}
    faults: dict[bool, list[int]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        local.run_cells(cell, Store.open(f"sqlite:///{tmp}/warm.db"), registry, isolate=True, threads=1)
        try:
            for repeat in range(repeats):
                for kept in (False, True):
                    local.keep_freed_memory = keep if kept else (lambda: False)  # looked up by each forked child
                    store = Store.open(f"sqlite:///{tmp}/{kept}-{repeat}.db")
                    store.environment_id()
                    before, start = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt, time.perf_counter()
                    local.run_cells(cell, store, registry, isolate=True, threads=1)
                    seconds[kept].append(time.perf_counter() - start)
                    faults[kept].append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before)
        finally:
            local.keep_freed_memory = keep
    s, f = {k: statistics.median(v) for k, v in seconds.items()}, {k: statistics.median(v) for k, v in faults.items()}
    print(f"{method} on {task}: {s[False]:.2f} s and {f[False]:,.0f} minor faults a cell giving freed memory back, "
          f"{s[True]:.2f} s and {f[True]:,.0f} keeping it (ratio {s[True] / s[False]:.2f})", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--memory"]:
        for method, task in [tuple(sys.argv[2:4])] if len(sys.argv) == 4 else MEMORY_CELLS:
            freed_memory_saving(method, task)
        return
    if sys.argv[1:2] == ["--imports"]:
        if len(sys.argv) == 4:
            return inherited_imports_saving(*sys.argv[2:4])
        for method, task in IMPORT_CELLS:
            subprocess.run([sys.executable, __file__, "--imports", method, task], check=True)
        return
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
