"""What every runner shares: the `Runner` protocol, the summary it returns, the cells still to run, and the one way a
finished cell is recorded (stored in batches, counted, reported).

A runner is a function `run_cells(cells, store, registry, *, timeout, force, on_record, ...) -> Summary`: it runs
the cells not yet done (`pending_cells`), records each finished one through `recorder`, and returns the counts.
runners/local.py (processes on this machine) and runners/ray.py (a Ray cluster) are the two; their own settings
(workers, threads, address) are keyword arguments with defaults, so either runs where a `Runner` is expected.

A command picks one by name (`--runner NAME`, runners/choice.py): a `ChosenRunner` class per name, built from the
command's `Settings` (each takes what it uses and refuses what it cannot), which checks where the cells can run before
anything is stored, reaches its machines, then runs the cells as a `Runner` does.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from bench.execute import execute, log_text
from bench.registry import Registry
from bench.spec import Cell, RunRecord
from bench.store import Store
from bench.writes import Writer

OnRecord = Callable[[RunRecord], None]


@dataclass
class Summary:
    counts: Counter = field(default_factory=Counter)
    already_done: int = 0
    leased: int = 0  # skipped: another live driver holds the cell
    kept: int = 0  # finished, but a `done` run was already stored and was kept (no --force)

    def add(self, record: RunRecord) -> None:
        self.counts[record.status] += 1


class Runner(Protocol):
    def __call__(self, cells: list[Cell], store: Store, registry: Registry, *, timeout: float | None = None,
                 force: bool = False, on_record: OnRecord | None = None) -> Summary: ...


@dataclass(frozen=True)
class Settings:
    """How the command line asks for its cells to run; a runner takes the settings it uses."""

    workers: int = 1  # local: worker processes
    threads: int | None = None  # local: threads per cell (None: the cores split between the workers)
    isolation: str = "worker"  # local: reuse worker processes, or a fresh one per cell
    address: str | None = None  # ray: the cluster to join (None: a local Ray of its own)


OnStatus = Callable[[dict], None]  # {"done", "failed", "running", "pending", ...} counts


class ChosenRunner(Protocol):
    """A runner picked by name: `here` says whether its cells run in this machine's processes (where the verdict
    locks pin the thread count)."""

    here: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> ChosenRunner:
        """The runner for these settings; BenchError (one line) for a setting it cannot honour."""
        ...

    def place(self, cells: list[Cell]) -> None:
        """Refuse (BenchError) cells no machine of this runner can hold, before anything is stored."""

    def reach(self) -> None:
        """Reach the machines the cells run on (BenchError if unreachable), before the first cell is given out."""

    def __call__(self, cells: list[Cell], store: Store, registry: Registry, *, timeout: float | None = None,
                 force: bool = False, on_record: OnRecord | None = None,
                 on_status: OnStatus | None = None) -> Summary: ...


def pending_cells(cells: list[Cell], store: Store, force: bool, registry: Registry) -> tuple[list[Cell], int]:
    """Unique cells still to run (all of them with force); and how many were already done (under the task
    version the code declares now: an older version's run is stale and runs again)."""
    unique = list({c.run_key: c for c in cells}.values())
    if force:
        return unique, 0
    done = store.done_keys((c.run_key for c in unique), registry.task_versions(unique))
    return [c for c in unique if c.run_key not in done], len(done)


def recorder(writer: Writer, summary: Summary, registry: Registry, on_record: OnRecord | None,
             count: OnRecord | None = None) -> OnRecord:
    """finish(record): store it (batched), count it in `summary` and in `count`, then report it to `on_record`."""
    def finish(record: RunRecord) -> None:
        if not record.task_version:  # killed or crashed before execute() reported it
            record.task_version = registry.task(record.cell.task).version
        writer.add(record)
        summary.add(record)
        if count:
            count(record)
        if on_record:
            on_record(record)
    return finish


@contextmanager
def output_kept():
    """The process's file descriptors 1 and 2 go to a file while its cell runs: what Python warns, what libraries'
    loggers and progress bars print (including a handler a library installs on import) and what C extensions write
    lands in the run's log, not over the driver's progress display. Yields a function returning those lines (a
    progress bar's redraws reduced to its last)."""
    sink = tempfile.TemporaryFile(mode="w+b")
    saved, streams = [os.dup(1), os.dup(2)], (sys.stdout, sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(sink.fileno(), 1)
    os.dup2(sink.fileno(), 2)
    # Python's own streams too: a host (pytest, a notebook) may have pointed them elsewhere than fds 1 and 2
    sys.stdout = sys.stderr = io.TextIOWrapper(open(sink.fileno(), "wb", closefd=False), write_through=True)

    def said() -> list[str]:
        sys.stdout.flush()
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
        lines = (line.rsplit("\r", 1)[-1] for line in text.split("\n"))     # splitlines() would split at \r
        return [line for line in lines if line.strip()]
    try:
        yield said
    finally:
        sys.stdout.flush()
        sys.stdout, sys.stderr = streams
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)


def execute_keeping_output(cell: Cell, registry: Registry, timeout: float | None = None) -> RunRecord:
    """execute() in a worker process (a forked cell, a Ray task): what the process printed meanwhile joins the
    warnings and library log records execute() captured (which a host's own warning capture, pytest's, would
    otherwise swallow in the child). A printed line that repeats a captured message (a library that installs its
    own stderr handler on import logs it twice) is kept once."""
    with output_kept() as said:
        record = execute(cell, registry, timeout)
    captured = (record.log or "").splitlines()
    printed = [line for line in said() if not any(kept.endswith(_message(line)) for kept in captured)]
    record.log = log_text(captured + printed)
    return record


def _message(line: str) -> str:
    """A printed log line without its logger's "[name] " prefix."""
    return line.split("] ", 1)[1] if line.startswith("[") and "] " in line else line
