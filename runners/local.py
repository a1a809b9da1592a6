"""The local runner: each cell in its own forked child process, with an optional hard timeout.

With `isolate` (what the CLI always asks for), every cell runs in a forked child, whatever the
number of workers: a cell whose process dies (a crash in native code, `os._exit`, the
out-of-memory killer) is stored as `failed` with its exit code or signal and the grid goes on,
where the in-process path took the driver down with it and stored nothing. A cell past `timeout`
is killed and stored as `timeout`. Forking costs about 20 ms per cell (benchmarks/core_overhead.py
prints it), and a forked cell starts with the modules the cells before it imported: the driver imports
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
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Callable

from bench import provenance
from bench.execute import execute
from bench.numerics import size_pools, torch_threads
from bench.registry import Registry
from bench.spec import Cell, RunRecord, Status
from bench.store import Store
from bench.writes import Writer
from runners.base import OnRecord, Summary, execute_keeping_output, pending_cells, recorder
from runners.inherited_imports import import_here, imported_since

def run_cells(cells: list[Cell], store: Store, registry: Registry, workers: int = 1,
              timeout: float | None = None, force: bool = False, on_record: OnRecord | None = None,
              lease_ttl: float | None = None, isolate: bool | None = None, threads: int | None = None,
              inherit_imports: bool = True) -> Summary:
    """Run the cells not yet done; `isolate`: fork each cell (None: only with workers > 1 or a timeout).

    `inherit_imports`: forked cells start with the modules earlier cells imported (runners/inherited_imports.py;
    False only to measure what that saves).

    `threads`: each cell computes on that many threads (the verdict locks use one: a reduction split over more
    threads adds in another order, bench/numerics.py); None: forked cells split the cores evenly, cells run here
    keep the driver's pools."""
    if isolate is None:
        isolate = workers > 1 or timeout is not None
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
                       inherit_imports)
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


def _claimed(batch: list[Cell], writer: Writer, summary: Summary) -> list[Cell]:
    """The cells of `batch` this driver now leases; the others are counted as done or leased elsewhere."""
    claimed, done = writer.claim([c.run_key for c in batch])
    for cell in batch:
        if cell.run_key in done:  # finished by another driver since the grid was planned
            summary.already_done += 1
        elif cell.run_key not in claimed:  # another live driver runs it
            summary.leased += 1
    return [c for c in batch if c.run_key in claimed and c.run_key not in done]


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

    For a forked cell, which exits after its one cell. By default glibc returns every block over its mmap threshold
    (at most 32 MiB) to the kernel when it is freed, and trims the heap's top, so a training loop that allocates the
    same activations step after step takes them back as fresh pages the kernel must fault in and zero: 865k minor
    faults and 1.6 s of system time in a 40 s label-smoothing pre-training, 62k and 0.25 s when kept (the cell 5 %
    faster). Where a block lives changes no number: torch aligns its buffers to 64 bytes and numpy's to 16 either
    way (the full reproduction's metrics compared run by run: README). False where the C library is not glibc.
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


def _child(cell: Cell, registry: Registry, timeout: float | None, conn: Connection, parent: int,
           threads: int | None) -> None:
    # Ctrl-C reaches the whole process group; the driver decides, and kills this child
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler, inherited through fork
    _die_with(parent)
    keep_freed_memory()
    if threads is not None:
        size_pools(threads)  # never restored: the child exits after its cell
    before = set(sys.modules)
    try:
        record = execute_keeping_output(cell, registry, timeout)
        conn.send((record, imported_since(before)))
        conn.close()
    finally:
        os._exit(0)  # skip the parent's inherited cleanup (database connections, atexit hooks)




@dataclass
class _Running:
    process: mp.process.BaseProcess
    cell: Cell
    started: float
    deadline: float | None


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


def _drive(todo: list[Cell], registry: Registry, workers: int, timeout: float | None,
           finish: Callable[[RunRecord], None], interrupted: int | None, writer: Writer, summary: Summary,
           threads: int | None = None, inherit_imports: bool = True) -> None:
    ctx = mp.get_context("fork")
    if threads is None and workers > 1:
        threads = core_share(workers)
    queue, running = deque(todo), {}
    watched = [interrupted] if interrupted is not None else []
    try:
        while queue or running:
            while queue and len(running) < workers:
                batch = [queue.popleft() for _ in range(min(workers - len(running), len(queue)))]
                for cell in _claimed(batch, writer, summary):
                    reader, writer_end = ctx.Pipe(duplex=False)
                    process = ctx.Process(target=_child, daemon=True,
                                          args=(cell, registry, timeout, writer_end, os.getpid(), threads))
                    process.start()
                    writer_end.close()
                    now = time.monotonic()
                    running[reader] = _Running(process, cell, now, now + timeout if timeout else None)
            if not running:
                continue
            waits = [r.deadline - time.monotonic() for r in running.values() if r.deadline is not None]
            if writer.due_in() is not None:
                waits.append(writer.due_in())
            ready = wait(list(running) + watched, timeout=max(0.0, min(waits)) if waits else None)
            if interrupted is not None and interrupted in ready:
                raise KeyboardInterrupt
            for reader in ready:
                record, imported = _collect(reader, running.pop(reader))
                finish(record)
                if inherit_imports and queue:
                    import_here(imported)  # the cells forked from now on start with them
            now = time.monotonic()
            for reader in [r for r, job in running.items() if job.deadline is not None and now >= job.deadline]:
                finish(_kill(reader, running.pop(reader), timeout))
            writer.tick()
    finally:
        for reader, job in running.items():  # Ctrl-C, SIGTERM or an error in the driver: no orphans
            job.process.kill()
            job.process.join()
            reader.close()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "unknown"
        hint = "; the out-of-memory killer sends SIGKILL" if -exitcode == signal.SIGKILL else ""
        return f"killed by signal {-exitcode} ({name}{hint})"
    return f"exit code {exitcode}"


def _collect(reader: Connection, job: _Running) -> tuple[RunRecord, list[str]]:
    """The child's record and the modules its cell imported (none when it died before reporting)."""
    imported: list[str] = []
    try:
        record, imported = reader.recv()
    except (EOFError, OSError):
        job.process.join()
        record = RunRecord(job.cell, Status.FAILED,
                           error=f"worker process died ({_death(job.process.exitcode)}) before reporting",
                           started_at=time.time() - (time.monotonic() - job.started),
                           wall_s=time.monotonic() - job.started)
    reader.close()
    job.process.join()
    return record, imported


def _kill(reader: Connection, job: _Running, timeout: float) -> RunRecord:
    job.process.kill()
    job.process.join()
    reader.close()
    elapsed = time.monotonic() - job.started
    return RunRecord(job.cell, Status.TIMEOUT, error=f"killed after {elapsed:.1f} s: exceeded --timeout {timeout:g} s",
                     started_at=time.time() - elapsed, wall_s=elapsed)
