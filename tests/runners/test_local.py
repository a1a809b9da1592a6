import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from bench.cells import Entry, expand
from runners.local import run_cells


def _cells(registry, methods, seeds=(0,)):
    return expand(registry, [Entry(m, c) for m, c in methods], [Entry("toy_target")], list(seeds), ["cpu"]).cells


def _statuses(store):
    return sorted((r.method, r.seed, r.status) for r in store.runs())


def test_failures_and_timeouts_are_stored_and_the_grid_goes_on(toy_registry, store):
    cells = _cells(toy_registry, [("toy_noisy", {}), ("toy_raise", {}), ("toy_sleep", {"seconds": 60.0}),
                                  ("toy_crash", {})], seeds=(0, 1))
    started = time.monotonic()
    summary = run_cells(cells, store, toy_registry, workers=2, timeout=1.0)
    assert time.monotonic() - started < 30  # the 60 s sleepers were killed
    assert summary.counts == {"done": 2, "failed": 4, "timeout": 2}
    runs = {(r.method, r.seed): r for r in store.runs()}
    assert "RuntimeError: deliberate failure" in runs[("toy_raise", 0)].error
    assert "exceeded --timeout 1 s" in runs[("toy_sleep", 1)].error
    assert "exit code 3" in runs[("toy_crash", 0)].error
    assert all(r.task_version == 2 for r in runs.values())
    assert store.metrics([runs[("toy_noisy", 0)].run_key])[runs[("toy_noisy", 0)].run_key]["error"] > 0


def test_a_run_of_an_older_task_version_runs_again_and_is_replaced(toy_registry, store):
    """toy_target declares version 2; a done run stored under version 1 is stale: rerun, without --force."""
    (cell,) = _cells(toy_registry, [("toy_noisy", {})])
    first = run_cells([cell], store, toy_registry)
    assert first.counts == {"done": 1} and run_cells([cell], store, toy_registry).already_done == 1
    with store.engine.begin() as connection:  # as if stored before the task's version was raised
        connection.execute(text("UPDATE runs SET task_version = 1, error = 'v1'"))
    again = run_cells([cell], store, toy_registry)
    assert (again.counts, again.already_done, again.kept) == ({"done": 1}, 0, 0)
    (row,) = store.runs()
    assert (row.task_version, row.error, row.status) == (2, None, "done")


def test_rerun_skips_done_and_retries_failures_without_duplicates(toy_registry, store):
    cells = _cells(toy_registry, [("toy_noisy", {}), ("toy_raise", {})], seeds=(0, 1, 2))
    first = run_cells(cells, store, toy_registry)
    assert first.counts == {"done": 3, "failed": 3}
    second = run_cells(cells, store, toy_registry)
    assert second.already_done == 3 and second.counts == {"failed": 3}
    forced = run_cells(cells, store, toy_registry, force=True)
    assert forced.already_done == 0 and sum(forced.counts.values()) == 6
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM runs")).scalar() == 6
        assert connection.execute(text("SELECT COUNT(*) FROM metrics")).scalar() == 3 * 3  # error, norm, spread
        assert connection.execute(text("SELECT COUNT(DISTINCT run_key) FROM curves")).scalar() == 3


def test_in_process_and_forked_runs_give_the_same_numbers(toy_registry, tmp_path):
    from bench.store import Store

    cells = _cells(toy_registry, [("toy_noisy", {})], seeds=(0, 1, 2, 3))
    a, b = Store.open(f"sqlite:///{tmp_path}/a.db"), Store.open(f"sqlite:///{tmp_path}/b.db")
    run_cells(cells, a, toy_registry)
    run_cells(cells, b, toy_registry, workers=2)
    keys = [c.run_key for c in cells]
    assert a.metrics(keys) == b.metrics(keys)


INTERRUPTED_GRID = """
import sys
sys.path.insert(0, {fixtures!r})
from bench.registry import Listing, Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.local import run_cells
registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                     Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
cells = expand(registry, [Entry("toy_sleep", {{"seconds": 0.3}})], [Entry("toy_target")], list(range(40)), ["cpu"]).cells
store = Store.open({url!r})
try:
    run_cells(cells, store, registry, workers={workers}, isolate=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""  # noqa: E501


def _interrupt_then_resume(tmp_path, workers):
    from bench.store import Store
    from tests.helpers import FIXTURES, default_sigint

    url = f"sqlite:///{tmp_path}/grid.db"
    script = INTERRUPTED_GRID.format(fixtures=str(FIXTURES), url=url, workers=workers)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    store = Store.open(url)
    deadline = time.monotonic() + 30
    while store.count() < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130 and "interrupted" in proc.stdout.read()
    kept = store.count()
    assert 3 <= kept < 40
    done_before = {r.run_key for r in store.runs(status="done")}
    # resume in this process: the rest runs, nothing twice
    sys.path.insert(0, str(FIXTURES))
    from bench.registry import Listing, Registry

    registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                         Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
    cells = expand(registry, [Entry("toy_sleep", {"seconds": 0.3})], [Entry("toy_target")], list(range(40)),
                   ["cpu"]).cells
    summary = run_cells(cells, store, registry, workers=2)
    assert summary.already_done == len(done_before)
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs")).one() == (40, 40)
        assert connection.execute(text("SELECT COUNT(*) FROM runs WHERE status = 'done'")).scalar() == 40


THREADS_GRID = """
import json, sys
sys.path.insert(0, {fixtures!r})
from bench.registry import Listing, Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.local import run_cells
registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                     Listing("method", "toy_threads", "toy", "bench_toy.toy_threads", "", "t")])
store = Store.open({url!r})
seen = {{}}
# (name, seeds: distinct cells per case, workers, isolate, threads per cell asked for)
for name, seeds, workers, isolate, threads in [("1", 1, 1, True, None), ("2", 2, 2, True, None),
                                               ("2 on one thread", 3, 2, True, 1), ("here on one thread", 4, 1, False, 1)]:
    cells = expand(registry, [Entry("toy_threads")], [Entry("toy_target")], [seeds], ["cpu"]).cells
    run_cells(cells, store, registry, workers=workers, isolate=isolate, threads=threads)
    key = cells[0].run_key
    seen[name] = [store.curve(key, name)[0][1] for name in ("torch_threads", "blas_threads", "omp_env")]
import os
import torch
from threadpoolctl import threadpool_info
seen["driver"] = [torch.get_num_threads(), min(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"),
                  float(os.environ.get("OMP_NUM_THREADS", "0"))]
print(json.dumps(seen))
"""  # noqa: E501


@pytest.mark.integration
def test_parallel_cells_share_the_cores_and_one_worker_keeps_them(tmp_path):
    """Two workers: each cell computes on half the cores (torch, BLAS and OMP_NUM_THREADS for its own processes);
    one worker keeps the driver's thread count, so its numbers stay those of the in-process path. Asked for one
    thread (the verdict locks), a cell gets one, forked or run here, and the driver's pools are restored after."""
    import json

    from bench.numerics import THREAD_VARIABLES
    from runners.local import core_share
    from tests.helpers import FIXTURES

    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}  # a driver started without them
    script = THREADS_GRID.format(fixtures=str(FIXTURES), url=f"sqlite:///{tmp_path}/threads.db")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.splitlines()[-1])
    cores = len(os.sched_getaffinity(0))
    assert seen["driver"][2] == 0 and seen["driver"][0] == cores  # restored after the in-process one-thread cell
    assert seen["1"] == seen["driver"]  # untouched: the driver's pools (the cores), no OMP_NUM_THREADS set
    assert seen["2"] == [core_share(2)] * 3 == [max(1, cores // 2)] * 3
    assert seen["2 on one thread"] == seen["here on one thread"] == [1, 1, 1]


@pytest.mark.integration
def test_interrupted_sequential_grid_resumes_without_duplicates(tmp_path):
    _interrupt_then_resume(tmp_path, workers=1)


@pytest.mark.integration
def test_interrupted_parallel_grid_resumes_without_duplicates(tmp_path):
    _interrupt_then_resume(tmp_path, workers=2)


def test_a_dying_cell_in_the_default_mode_is_stored_and_the_grid_goes_on(toy_registry, store):
    # one worker, no timeout: the default. Run in this process, any of these would end the test run.
    cells = _cells(toy_registry, [("toy_noisy", {}), ("toy_crash", {"exit_code": 3}), ("toy_crash", {"signal": 11}),
                                  ("toy_crash", {"signal": 9})], seeds=(0, 1))
    summary = run_cells(cells, store, toy_registry, isolate=True)
    assert summary.counts == {"done": 2, "failed": 6}
    errors = sorted({r.error for r in store.runs(status="failed")})
    assert errors == ["worker process died (exit code 3) before reporting",
                      "worker process died (killed by signal 11 (SIGSEGV)) before reporting",
                      "worker process died (killed by signal 9 (SIGKILL; the out-of-memory killer sends SIGKILL)) "
                      "before reporting"]
    assert len(store.runs(status="done")) == 2 and all(r.task_version == 2 for r in store.runs())


LONG_GRID = """
import sys
sys.path.insert(0, {fixtures!r})
from bench.registry import Listing, Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.local import run_cells
registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                     Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
cells = expand(registry, [Entry("toy_sleep", {{"seconds": 120.0}})], [Entry("toy_target")], list(range(4)), ["cpu"]).cells
try:
    run_cells(cells, Store.open({url!r}), registry, workers={workers}, isolate=True)
except KeyboardInterrupt:
    sys.exit(130)
"""  # noqa: E501


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"  # a zombie runs nothing
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat") as fh:
                if name.isdigit() and int(fh.read().rpartition(")")[2].split()[1]) == pid:
                    found.append(int(name))
        except (OSError, ValueError):
            pass
    return found


@pytest.mark.integration
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal and /proc are Linux")
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_driver_leaves_no_worker_running(tmp_path, sig, workers):
    from tests.helpers import FIXTURES

    script = LONG_GRID.format(fixtures=str(FIXTURES), url=f"sqlite:///{tmp_path}/grid.db", workers=workers)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(_children(proc.pid)) < workers and time.monotonic() < deadline:
            time.sleep(0.05)
        workers_seen = _children(proc.pid)
        assert len(workers_seen) == workers
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == (130 if sig == signal.SIGTERM else -signal.SIGKILL)
        gone_by = time.monotonic() + 5
        while any(map(_alive, workers_seen)) and time.monotonic() < gone_by:
            time.sleep(0.05)
        assert not any(map(_alive, workers_seen)), f"workers alive 5 s after the driver got signal {sig}"
    finally:
        for pid in [proc.pid, *_children(proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_what_a_forked_cell_prints_is_stored_with_its_run(toy_registry, store, capfd):
    """The CLI's path: a forked cell's raw stderr (a progress bar's redraws: the last one) joins the run's log."""
    cells = expand(toy_registry, [Entry("toy_warns")], [Entry("toy_target")], [0], ["cpu"]).cells
    summary = run_cells(cells, store, toy_registry, isolate=True)
    assert summary.counts == {"done": 1}
    log = store.runs()[0].log
    assert "progress 100%" in log and "progress 50%" not in log and "FutureWarning" in log
    assert "progress" not in capfd.readouterr().err


def _faults_of_allocating_again(keep: bool, conn) -> None:
    import ctypes
    import resource

    from runners.local import keep_freed_memory
    took = keep_freed_memory() if keep else True
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):  # what torch's CPU allocator does with an activation, step after step
        block = libc.malloc(64 << 20)  # past glibc's largest mmap threshold (32 MiB): mmapped afresh unless kept
        ctypes.memset(block, 1, 64 << 20)
        libc.free(block)
    conn.send((took, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before))
    conn.close()


def test_a_forked_cell_reuses_the_memory_it_freed_instead_of_faulting_fresh_pages_in():
    import multiprocessing as mp
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallopt")
    ctx = mp.get_context("fork")
    faults = {}
    for keep in (False, True):
        reader, writer = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_faults_of_allocating_again, args=(keep, writer))
        child.start()
        took, faults[keep] = reader.recv()
        child.join()
        if not took:
            pytest.skip("the C library is not glibc")
    pages = (64 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert faults[False] >= 9 * pages  # every allocation faults its 16,384 pages in again
    assert faults[True] <= 2 * pages   # the first one does; the others reuse them


def test_language_model_and_gpu_cells_get_a_fresh_process_and_the_rest_reuse_workers():
    from bench.registry import Registry
    from bench.spec import Cell
    from runners.local import needs_fresh_process

    registry = Registry.discover()
    method_of = {t: next(m for m in registry.names("method") if not registry.incompatibility(m, t, "cpu"))
                 for t in ("performative", "preference_world", "hetero_vocab_pairs", "sft_calibration", "sachs")}
    fresh = {t: needs_fresh_process(Cell(m, t, 0, {}, {}), registry) for t, m in method_of.items()}
    assert fresh == {"performative": False, "preference_world": True, "hetero_vocab_pairs": True,
                     "sft_calibration": True, "sachs": False}
    assert needs_fresh_process(Cell(method_of["performative"], "performative", 0, {}, {}, "cuda"), registry)


@pytest.mark.parametrize("isolation", ["worker", "cell"])
def test_both_isolations_store_the_same_numbers_and_the_same_failures(toy_registry, tmp_path, isolation):
    """A crash, an os._exit and a timeout amid done cells: stored exactly alike whether workers are reused or not,
    and the numbers of the done cells equal the in-process path's."""
    from bench.store import Store

    cells = _cells(toy_registry, [("toy_noisy", {}), ("toy_crash", {"exit_code": 3}), ("toy_noisy", {}),
                                  ("toy_crash", {"signal": 9})], seeds=(0, 1, 2))
    forked = Store.open(f"sqlite:///{tmp_path}/forked.db")
    summary = run_cells(cells, forked, toy_registry, workers=2, isolate=True, isolation=isolation)
    assert summary.counts == {"done": 3, "failed": 6}
    here = Store.open(f"sqlite:///{tmp_path}/here.db")
    run_cells([c for c in cells if c.method == "toy_noisy"], here, toy_registry, isolate=False)
    keys = [c.run_key for c in cells]
    assert forked.metrics(keys) == here.metrics(keys) and len(here.metrics(keys)) == 3
    assert all(r.peak_mem_mb and r.peak_mem_mb > 1 for r in forked.runs(status="done"))


def test_an_unknown_isolation_is_refused(toy_registry, store):
    from bench.errors import BenchError

    with pytest.raises(BenchError, match="unknown isolation 'thread'; allowed: worker, cell"):
        run_cells(_cells(toy_registry, [("toy_noisy", {})]), store, toy_registry, isolate=True, isolation="thread")
