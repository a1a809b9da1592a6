"""The local runner: cells in this process, or in forked worker processes with a hard timeout.

Without a timeout and with one worker, cells run in-process (lowest overhead). Otherwise each
cell runs in its own forked child, so a cell past `timeout` is killed (stored as `timeout`)
and a crash of one cell cannot take the grid down. Only this driver process writes to the
store, right after each cell finishes; Ctrl-C leaves every finished cell stored.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Callable

from bench.execute import execute
from bench.registry import Registry
from bench.spec import Cell, RunRecord
from bench.store import Store

OnRecord = Callable[[RunRecord], None]


@dataclass
class Summary:
    counts: Counter = field(default_factory=Counter)
    already_done: int = 0

    def add(self, record: RunRecord) -> None:
        self.counts[record.status] += 1


def pending_cells(cells: list[Cell], store: Store, force: bool) -> tuple[list[Cell], int]:
    """Unique cells still to run (all of them with force); and how many were already done."""
    unique = list({c.run_key: c for c in cells}.values())
    if force:
        return unique, 0
    done = store.done_keys(c.run_key for c in unique)
    return [c for c in unique if c.run_key not in done], len(done)


def run_cells(cells: list[Cell], store: Store, registry: Registry, workers: int = 1,
              timeout: float | None = None, force: bool = False, on_record: OnRecord | None = None) -> Summary:
    todo, already = pending_cells(cells, store, force)
    summary = Summary(already_done=already)

    def finish(record: RunRecord) -> None:
        if not record.task_version:  # killed or crashed before execute() reported it
            record.task_version = registry.task(record.cell.task).version
        store.save(record, runner="local")
        summary.add(record)
        if on_record:
            on_record(record)

    if workers <= 1 and timeout is None:
        for cell in todo:
            finish(execute(cell, registry))
    else:
        _run_forked(todo, registry, max(workers, 1), timeout, finish)
    return summary


def _child(cell: Cell, registry: Registry, timeout: float | None, conn: Connection) -> None:
    # Ctrl-C reaches the whole process group; the driver decides, and kills this child
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        conn.send(execute(cell, registry, timeout))
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
    """Turn Ctrl-C into a readable file descriptor that the driver loop waits on.

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
    previous = signal.signal(signal.SIGINT, lambda signum, frame: os.write(write_fd, b"\0"))
    try:
        yield read_fd
    finally:
        signal.signal(signal.SIGINT, previous)
        os.close(read_fd)
        os.close(write_fd)


def _run_forked(todo: list[Cell], registry: Registry, workers: int, timeout: float | None,
                finish: Callable[[RunRecord], None]) -> None:
    with _interrupt_pipe() as interrupted:
        _drive(todo, registry, workers, timeout, finish, interrupted)


def _drive(todo: list[Cell], registry: Registry, workers: int, timeout: float | None,
           finish: Callable[[RunRecord], None], interrupted: int | None) -> None:
    ctx = mp.get_context("fork")
    queue, running = deque(todo), {}
    watched = [interrupted] if interrupted is not None else []
    try:
        while queue or running:
            while queue and len(running) < workers:
                cell = queue.popleft()
                reader, writer = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_child, args=(cell, registry, timeout, writer), daemon=True)
                process.start()
                writer.close()
                now = time.monotonic()
                running[reader] = _Running(process, cell, now, now + timeout if timeout else None)
            deadlines = [r.deadline for r in running.values() if r.deadline is not None]
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait(list(running) + watched, timeout=wait_s)
            if interrupted is not None and interrupted in ready:
                raise KeyboardInterrupt
            for reader in ready:
                finish(_collect(reader, running.pop(reader)))
            now = time.monotonic()
            for reader in [r for r, job in running.items() if job.deadline is not None and now >= job.deadline]:
                finish(_kill(reader, running.pop(reader), timeout))
    finally:
        for reader, job in running.items():  # Ctrl-C or an error in the driver: no orphans
            job.process.kill()
            job.process.join()
            reader.close()


def _collect(reader: Connection, job: _Running) -> RunRecord:
    try:
        record = reader.recv()
    except (EOFError, OSError):
        job.process.join()
        record = RunRecord(job.cell, "failed", error=f"worker process died (exit code {job.process.exitcode}) before reporting",
                           started_at=time.time() - (time.monotonic() - job.started),
                           wall_s=time.monotonic() - job.started)
    reader.close()
    job.process.join()
    return record


def _kill(reader: Connection, job: _Running, timeout: float) -> RunRecord:
    job.process.kill()
    job.process.join()
    reader.close()
    elapsed = time.monotonic() - job.started
    return RunRecord(job.cell, "timeout", error=f"killed after {elapsed:.1f} s: exceeded --timeout {timeout:g} s",
                     started_at=time.time() - elapsed, wall_s=elapsed)
