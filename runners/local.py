"""The local runner: cells in forked worker processes, reused from cell to cell, with an optional hard timeout.

With `isolate` (what the CLI always asks for), every cell runs in a forked worker, whatever the
number of workers: a cell whose process dies (a crash in native code, `os._exit`, the
out-of-memory killer) is stored as `failed` with its exit code or signal and the grid goes on,
where the in-process path took the driver down with it and stored nothing. A cell past `timeout`
is killed with its worker and stored as `timeout`. A worker runs cell after cell (`isolation="worker"`,
the default; `--isolation worker`): a dead or killed worker is replaced by a new one for the next cell,
and each cell reports its own peak memory (VmHWM reset before it). `isolation="cell"` (`--isolation
cell`) forks a fresh process for every cell, as the language-model and GPU cells always get
(`needs_fresh_process`). Forking costs about 20 ms per cell (benchmarks/core_overhead.py
prints it), and a forked worker starts with the modules the cells before it imported: the driver imports
them after the first one reports (runners/inherited_imports.py), where every child used to import torch
and transformers again. A forked cell keeps the memory it frees for its next allocation (`keep_freed_memory`).

Forking is only safe from a driver that has not itself run PyTorch's OpenMP thread pool: GNU
libgomp is not fork-safe, and a child's first parallel torch op then waits forever on a lock of
the parent's thread team. The CLI's driver never runs a torch op, so it always isolates. A
library caller (a test, a notebook) that has trained a model in its own process gets the
in-process path by default with one worker and no timeout (`isolate=None`), as before; forking
with the same thread count keeps every number bit for bit, so no verdict depends on the mode.

With more than one worker, each forked cell computes on its share of the cores (at least one thread:
torch's pool, the BLAS's pool, and OMP_NUM_THREADS for what it starts). Every child otherwise starts its
pools at the machine's core count, and GNU OpenMP's spinning barriers on oversubscribed cores slowed the
small models' many tiny ops about five-fold (benchmarks/parallel_cells.py prints the ratio). One worker
keeps every core, so its numbers stay those of the in-process path.

Workers die with their driver: each child asks Linux for SIGKILL when its parent dies
(PR_SET_PDEATHSIG), so even kill -9 of the driver leaves none running, and SIGTERM or Ctrl-C
makes the driver kill them itself. Before a cell starts its driver leases it (bench.writes), so
drivers sharing a store never run a cell twice. Only the driver writes to the store, in batches,
and every finished cell is stored on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

from bench import provenance
from bench.errors import BenchError
from bench.execute import device_for, execute
from bench.numerics import size_pools, torch_threads
from bench.registry import Registry
from bench.spec import Cell, RunRecord, Status
from bench.store import Store
from bench.writes import Writer, cell_keys
from runners.base import OnRecord, OnStatus, Settings, Summary, execute_keeping_output, pending_cells, recorder
from runners.inherited_imports import import_here, imported_since

ISOLATIONS = ("worker", "cell")


def run_cells(cells: list[Cell], store: Store, registry: Registry, workers: int = 1,
              timeout: float | None = None, force: bool = False, on_record: OnRecord | None = None,
              lease_ttl: float | None = None, isolate: bool | None = None, threads: int | None = None,
              inherit_imports: bool = True, isolation: str = "worker") -> Summary:
    """Run the cells not yet done; `isolate`: run them in forked worker processes (None: only with workers > 1 or a
    timeout).

    `isolation` (forked cells): "worker" reuses each worker process for cell after cell (a worker that dies or times
    out is replaced; cells that need it still get a fresh process each, `needs_fresh_process`); "cell" forks a fresh
    process for every cell.

    `inherit_imports`: forked cells start with the modules earlier cells imported (runners/inherited_imports.py;
    False only to measure what that saves).

    `threads`: each cell computes on that many threads (the verdict locks use one: a reduction split over more
    threads adds in another order, bench/numerics.py); None: forked cells split the cores evenly, cells run here
    keep the driver's pools."""
    if isolate is None:
        isolate = workers > 1 or timeout is not None
    if isolation not in ISOLATIONS:
        raise BenchError(f"unknown isolation {isolation!r}; allowed: {', '.join(ISOLATIONS)}")
    todo, already = pending_cells(cells, store, force, registry)
    summary = Summary(already_done=already)
    if not todo:
        return summary
    writer = Writer(store, "local", force=force, ttl_s=lease_ttl, versions=registry.task_versions(todo))

    finish = recorder(writer, summary, registry, on_record)

    try:
        if isolate:
            provenance.machine()  # read once here: every forked cell inherits it (293 ms a cell otherwise)
            with _interrupt_pipe() as interrupted:
                _drive(todo, registry, max(workers, 1), timeout, finish, interrupted, writer, summary, threads,
                       inherit_imports, isolation)
        else:
            with _sigterm_interrupts(), torch_threads(threads):
                _run_here(todo, registry, finish, writer, summary)
    except (MemoryError, OSError) as exc:  # the driver's disk is full or its memory ran out: exit 3
        fault = writer.fault(exc)
        if fault is None:
            raise
        raise fault from None
    finally:
        writer.close()  # flush the last batch, release the leases left: Ctrl-C loses nothing
        summary.kept = writer.kept
    return summary


@dataclass(frozen=True)
class LocalRunner:
    """`--runner local`: every cell in a forked process on this machine (`isolate`: a crashed cell never takes the
    command down), `workers` at a time."""

    workers: int = 1
    threads: int | None = None
    isolation: str = "worker"
    here = True

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalRunner:
        if settings.address is not None:
            raise BenchError("--address is for --runner ray")
        return cls(settings.workers, settings.threads, settings.isolation)

    def place(self, cells: list[Cell]) -> None:
        """Every cell's hardware must be on this machine (BenchError naming what is allowed here)."""
        for hardware in sorted({cell.hardware for cell in cells}):
            device_for(hardware)

    def reach(self) -> None:
        """This machine: nothing to reach."""

    def __call__(self, cells: list[Cell], store: Store, registry: Registry, *, timeout: float | None = None,
                 force: bool = False, on_record: OnRecord | None = None,
                 on_status: OnStatus | None = None) -> Summary:
        """`on_status` is Ray's (cells running and pending): here the cells in flight are the workers'."""
        return run_cells(cells, store, registry, workers=self.workers, timeout=timeout, force=force,
                         on_record=on_record, isolate=True, threads=self.threads, isolation=self.isolation)


def _claimed(batch: list[Cell], writer: Writer, summary: Summary) -> list[Cell]:
    """The cells of `batch` this driver now leases; the others are counted as done or leased elsewhere."""
    keys = [cell_keys(c)[0] for c in batch]
    claimed, done = writer.claim(keys)
    mine = []
    for cell, key in zip(batch, keys, strict=True):
        if key in done:  # finished by another driver since the grid was planned
            summary.already_done += 1
        elif key not in claimed:  # another live driver runs it
            summary.leased += 1
        else:
            mine.append(cell)
    return mine


AHEAD_MAX = 64  # cells leased at once when cells are quick: one lease transaction per cell limited tiny cells
QUICK_S = 0.25  # a cell is quick below this wall time (the mean of those finished so far)


def _lease_ahead(workers: int, finished: int, wall: float) -> int:
    """How many cells to lease in one transaction: one per free worker until cells prove quick, then up to
    AHEAD_MAX (slow cells stay free for other drivers sharing the store)."""
    if finished >= workers and wall / finished < QUICK_S:
        return max(workers, AHEAD_MAX)
    return workers


def _run_here(todo: list[Cell], registry: Registry, finish: Callable[[RunRecord], None], writer: Writer,
              summary: Summary) -> None:
    """Each cell in this process, one after another, leased like the forked path's."""
    for cell in todo:
        for mine in _claimed([cell], writer, summary):
            finish(execute(mine, registry))
        writer.tick()


@contextmanager
def _sigterm_interrupts():
    """SIGTERM raises KeyboardInterrupt in the in-process path, so the last batch is flushed as on Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Have the kernel SIGKILL this child when its driver dies, however it dies (Linux)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the driver died before the request was in place
        os._exit(1)


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Have glibc's malloc keep what this process frees for its next allocation, never giving it back to the kernel.

    For a forked worker, which exits with its grid (a reused worker keeps its largest cell's memory until then; the
    language-model cells, the large ones, each get a fresh process). By default glibc returns every block over its
    mmap threshold (at most 32 MiB) to the kernel when it is freed, and trims the heap's top, so a training loop that
    allocates the same activations step after step takes them back as fresh pages the kernel must fault in and
    zero: 865k minor faults and 1.6 s of system time in a 40 s label-smoothing pre-training, 62k and 0.25 s when
    kept (the cell 5 % faster). Where a block lives changes no number: torch aligns its buffers to 64 bytes and
    numpy's to 16 either way (the full reproduction's metrics compared run by run: README). False where the C
    library is not glibc.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, 1 << 30)) and bool(mallopt(M_MMAP_MAX, 0))


def core_share(workers: int) -> int:
    """Threads per cell when `workers` cells run at once: the cores this process may use, split evenly."""
    return max(1, len(os.sched_getaffinity(0)) // workers)


def _worker(conn: Connection, registry: Registry, timeout: float | None, parent: int, threads: int | None) -> None:
    """A worker process: runs the cells the driver sends, one at a time, until it is sent None (or its driver goes)."""
    # Ctrl-C reaches the whole process group; the driver decides, and kills this worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler, inherited through fork
    _die_with(parent)
    keep_freed_memory()
    if threads is not None:
        size_pools(threads)  # never restored: the worker exits with its driver's grid
    try:
        while True:
            try:
                cell = conn.recv()
            except (EOFError, OSError):
                break
            if cell is None:
                break
            measured = _reset_peak_memory()
            before = set(sys.modules)
            record = execute_keeping_output(cell, registry, timeout)
            if measured:
                record.peak_mem_mb = _peak_memory_mb() or record.peak_mem_mb  # this cell's peak, not the worker's
            conn.send((record, imported_since(before)))
    finally:
        os._exit(0)  # skip the parent's inherited cleanup (database connections, atexit hooks)


def _reset_peak_memory() -> bool:
    """Reset this process's peak resident memory (Linux: VmHWM), so that a reused worker reports each cell's own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_memory_mb() -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


FRESH_FAMILIES = frozenset({"preference", "decoding", "length_generalization", "calibration", "safety", "erasure",
                            "multimodal"})  # language models (and the text-to-image and multimodal ones)


def needs_fresh_process(cell: Cell, registry: Registry) -> bool:
    """A cell that runs alone in a fresh process even where workers are reused: a GPU cell (its CUDA context and cached
    memory stay with the process), a method that declares GPUs, and the language-model families (models of hundreds
    of MB, tokenizers and caches that a worker would carry into every later cell)."""
    if cell.hardware != "cpu" or registry.method(cell.method).spec.resources.gpus:
        return True
    return registry.task(cell.task).family in FRESH_FAMILIES


@dataclass(eq=False)
class _Worker:
    process: mp.process.BaseProcess
    conn: Connection
    reusable: bool  # False: a fresh process for one cell (isolation "cell", or a cell that needs one)
    cell: Cell | None = None
    started: float = 0.0
    deadline: float | None = None


@contextmanager
def _interrupt_pipe():
    """Turn Ctrl-C and SIGTERM into a readable file descriptor that the driver loop waits on.

    A KeyboardInterrupt raised wherever SIGINT happens to land can fall inside fork's at-fork
    hooks (logging releases its lock there), where Python prints it as "ignored" and swallows
    it: the grid would run to the end and exit 0. So the handler only writes a byte, and the
    loop raises KeyboardInterrupt itself, at a point where every finished cell is stored.
    Yields None off the main thread, where signal handlers cannot be set.
    """
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = {sig: signal.signal(sig, lambda signum, frame: os.write(write_fd, b"\0"))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield read_fd
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(read_fd)
        os.close(write_fd)


@dataclass(eq=False)
class _Pool:
    """The forked workers of one grid: those running a cell (`busy`, by their pipe) and the reusable ones waiting."""

    registry: Registry
    workers: int
    timeout: float | None
    threads: int | None
    isolation: str
    busy: dict[Connection, _Worker] = field(default_factory=dict)
    idle: list[_Worker] = field(default_factory=list)

    def start(self, reusable: bool) -> _Worker:
        ctx = mp.get_context("fork")
        mine, theirs = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_worker, daemon=True,
                              args=(theirs, self.registry, self.timeout, os.getpid(), self.threads))
        process.start()
        theirs.close()
        return _Worker(process, mine, reusable)

    def give(self, cell: Cell) -> None:
        """Send the cell to an idle reusable worker, or to a new process (a fresh one where the cell needs it)."""
        fresh = self.isolation == "cell" or needs_fresh_process(cell, self.registry)
        for dead in [w for w in self.idle if not w.process.is_alive()]:  # died while idle (the OOM killer, say)
            self.idle.remove(dead)
            _stop(dead)
        while fresh and self.idle and len(self.idle) + len(self.busy) >= self.workers:
            _stop(self.idle.pop(0))  # a slot for the fresh process
        worker = self.idle.pop() if self.idle and not fresh else self.start(reusable=not fresh)
        try:
            worker.conn.send(cell)
        except OSError:  # it died while idle: a new one takes the cell
            _stop(worker)
            worker = self.start(reusable=not fresh)
            worker.conn.send(cell)
        now = time.monotonic()
        worker.cell, worker.started, worker.deadline = cell, now, now + self.timeout if self.timeout else None
        self.busy[worker.conn] = worker

    def wait_s(self, writer: Writer) -> float | None:
        """How long to wait for a cell: until the first deadline or the writer's next flush (None: no limit)."""
        waits = [w.deadline - time.monotonic() for w in self.busy.values() if w.deadline is not None]
        if writer.due_in() is not None:
            waits.append(writer.due_in())
        return max(0.0, min(waits)) if waits else None

    def retire(self, worker: _Worker, alive: bool) -> None:
        """After its cell: a reusable worker waits for the next one; a one-cell process, or one that died, ends (a
        new one starts when a cell needs it)."""
        if alive and worker.reusable:
            self.idle.append(worker)
        else:
            _stop(worker)

    def overdue(self) -> Iterator[RunRecord]:
        """The cells past their deadline, each killed with its worker as it is asked for."""
        now = time.monotonic()
        for conn in [c for c, w in self.busy.items() if w.deadline is not None and now >= w.deadline]:
            yield _kill(self.busy.pop(conn), self.timeout)

    def close(self) -> None:
        """End every worker: told to stop when the grid ran out; otherwise (Ctrl-C, SIGTERM or an error in the
        driver) killed at once, so none is left running."""
        done = not self.busy
        for worker in [*self.busy.values(), *self.idle]:
            if done:
                _stop(worker)
            else:
                worker.process.kill()
                worker.process.join()
                worker.conn.close()


@dataclass
class _Pace:
    """Cells finished so far and their wall seconds: how far ahead to lease."""

    finished: int = 0
    wall: float = 0.0

    def add(self, wall_s: float) -> None:
        self.finished, self.wall = self.finished + 1, self.wall + wall_s


def _drive(todo: list[Cell], registry: Registry, workers: int, timeout: float | None,
           finish: Callable[[RunRecord], None], interrupted: int | None, writer: Writer, summary: Summary,
           threads: int | None = None, inherit_imports: bool = True, isolation: str = "worker") -> None:
    """Give the cells to forked workers, at most `workers` at once, until every one has finished or was killed."""
    if threads is None and workers > 1:
        threads = core_share(workers)
    pool = _Pool(registry, workers, timeout, threads, isolation)
    queue: deque[Cell] = deque(todo)
    leased: deque[Cell] = deque()  # claimed, not yet given to a worker
    pace = _Pace()
    watched = [interrupted] if interrupted is not None else []
    try:
        while queue or leased or pool.busy:
            _hand_out(pool, queue, leased, writer, summary, pace)
            if not pool.busy:
                continue
            ready = wait(list(pool.busy) + watched, timeout=pool.wait_s(writer))
            if interrupted is not None and interrupted in ready:
                raise KeyboardInterrupt
            for conn in ready:
                worker = pool.busy.pop(conn)
                record, imported, alive = _collect(worker)
                pace.add(record.wall_s or 0.0)
                finish(record)
                pool.retire(worker, alive)
                if inherit_imports and queue:
                    import_here(imported)  # the workers started from now on start with them
            for record in pool.overdue():
                pace.add(timeout)
                finish(record)
            writer.tick()
    finally:
        pool.close()


def _hand_out(pool: _Pool, queue: deque[Cell], leased: deque[Cell], writer: Writer, summary: Summary,
              pace: _Pace) -> None:
    """Give cells to free workers, leasing the next ones from the queue as they are needed."""
    while (queue or leased) and len(pool.busy) < pool.workers:
        if not leased:
            ahead = _lease_ahead(pool.workers, pace.finished, pace.wall)
            leased.extend(_claimed([queue.popleft() for _ in range(min(ahead, len(queue)))], writer, summary))
            continue
        pool.give(leased.popleft())


def _stop(worker: _Worker) -> None:
    """End a worker that is not running a cell: it exits when told (None), killed if it does not at once."""
    try:
        worker.conn.send(None)
    except OSError:
        pass
    worker.conn.close()
    worker.process.join(timeout=5)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "unknown"
        hint = "; the out-of-memory killer sends SIGKILL" if -exitcode == signal.SIGKILL else ""
        return f"killed by signal {-exitcode} ({name}{hint})"
    return f"exit code {exitcode}"


def _collect(job: _Worker) -> tuple[RunRecord, list[str], bool]:
    """The worker's record, the modules its cell imported (none when it died before reporting), and whether the
    worker lives on."""
    try:
        record, imported = job.conn.recv()
        return record, imported, True
    except (EOFError, OSError):
        job.process.join()
        record = RunRecord(job.cell, Status.FAILED,
                           error=f"worker process died ({_death(job.process.exitcode)}) before reporting",
                           started_at=time.time() - (time.monotonic() - job.started),
                           wall_s=time.monotonic() - job.started)
        return record, [], False


def _kill(job: _Worker, timeout: float) -> RunRecord:
    job.process.kill()
    job.process.join()
    job.conn.close()
    elapsed = time.monotonic() - job.started
    return RunRecord(job.cell, Status.TIMEOUT, error=f"killed after {elapsed:.1f} s: exceeded --timeout {timeout:g} s",
                     started_at=time.time() - elapsed, wall_s=elapsed)
