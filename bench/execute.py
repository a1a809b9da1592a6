"""execute(cell) -> RunRecord: build the task, run the method, score, time, and catch.

The solve runs inside `bench.observe.observing(problem)`: a family whose claims rest on a cost counts it on the
problem's meter, delimited here to the solve, and its score reads that instead of the method's report.

The same function runs in-process, in a forked worker of the local runner, or in a Ray task.
It never touches the store: the driver saves what it returns. What the libraries say meanwhile (Python warnings
and the log records of transformers, diffusers, cvxpy, ...) is kept in the record's `log`, stored with the run,
instead of landing on the terminal over the progress display.
"""

from __future__ import annotations

import logging
import math
import resource
import sys
import time
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path

from bench import provenance
from bench.configs import build_config
from bench.context import DeadlineExceeded, RunContext
from bench.errors import BenchError
from bench.observe import check_declared, observing
from bench.registry import Registry
from bench.spec import Cell, RunRecord, Status

# the libraries whose loggers print to the terminal on their own (each installs its own handler)
LIBRARY_LOGGERS = ("transformers", "diffusers", "datasets", "huggingface_hub", "peft", "accelerate", "cvxpy", "torch",
                   "causallearn", "lingam", "ray")
LOG_LINES = 200  # kept per run; repeats are counted, not stored again


class _Lines(logging.Handler):
    def __init__(self, lines: list[str]):
        super().__init__(logging.DEBUG)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"[{record.name}] {record.levelname.lower()}: {record.getMessage()}")


@contextmanager
def captured(lines: list[str]):
    """Python warnings and the library loggers' records go to `lines` while the block runs, not to stderr."""
    handler = _Lines(lines)
    saved = []
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers, logger.propagate = [handler], False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")                 # each warning once per place, as Python shows them
        try:
            yield
        finally:
            lines.extend(f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})" for w in caught)
            for logger, handlers, propagate in saved:
                logger.handlers, logger.propagate = handlers, propagate


def log_text(lines: list[str]) -> str | None:
    """The captured lines, each once with its count, at most LOG_LINES of them (None: nothing was said)."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    shown = [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]
    if len(shown) > LOG_LINES:
        shown = shown[:LOG_LINES] + [f"... {len(shown) - LOG_LINES} more distinct lines"]
    return "\n".join(shown) or None


def device_for(hardware: str) -> str:
    """The torch device string for a cell's hardware; BenchError if this machine lacks it."""
    if hardware == "cpu":
        return "cpu"
    try:
        import torch  # only a GPU cell pays for this import
    except ImportError:
        raise BenchError(f"hardware {hardware!r} needs PyTorch with CUDA; torch is not installed "
                         "(allowed here: cpu)") from None
    if not torch.cuda.is_available():
        raise BenchError(f"hardware {hardware!r} requested but no CUDA GPU is visible on this machine "
                         "(allowed here: cpu)")
    return "cuda"


def _peak_mem_mb() -> float:
    # ru_maxrss is in KiB on Linux: the peak of this process (a forked worker: of that cell, counting the modules it
    # inherited from the driver, runners/inherited_imports.py)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def execute(cell: Cell, registry: Registry, timeout_s: float | None = None) -> RunRecord:
    """Run one cell and return its record; exceptions become status 'failed' with the traceback."""
    started = time.time()
    clock, cpu_clock = time.perf_counter(), time.process_time()
    record = RunRecord(cell=cell, status=Status.FAILED, started_at=started, machine=provenance.machine())
    lines: list[str] = []
    try:
        with captured(lines):
            _run(cell, registry, timeout_s, record)
    except DeadlineExceeded as exc:
        record.status, record.error = Status.TIMEOUT, str(exc)
    except Exception:  # noqa: BLE001 - any failure of a run is data, stored with its traceback
        record.status, record.error = Status.FAILED, traceback.format_exc()
    record.log = log_text(lines)
    record.wall_s = time.perf_counter() - clock
    record.cpu_s = time.process_time() - cpu_clock
    record.peak_mem_mb = _peak_mem_mb() if sys.platform != "win32" else None
    return record


def _run(cell: Cell, registry: Registry, timeout_s: float | None, record: RunRecord) -> None:
    """Build, check, solve and score into `record` (execute() catches and times)."""
    method = registry.method(cell.method)
    task = registry.task(cell.task)
    record.task_version = task.version
    family = registry.family(task.family)
    device = device_for(cell.hardware)
    deadline = time.monotonic() + timeout_s if timeout_s else None
    # the context's cache root defaults to this machine's ($BENCH_CACHE_DIR), read here, in the process that runs the
    # cell: not a Config field, so where a machine keeps its caches is no part of a run's key
    ctx = RunContext(seed=int(cell.seed), device=device, deadline=deadline)
    problem = task.build(build_config(task.Config, cell.task_config, task.name), ctx.for_task())
    config = build_config(method.Config, cell.method_config, method.name)
    reason = method.skip(problem, config)
    if reason:
        record.status, record.error = Status.SKIPPED, reason
    else:
        with observing(problem):  # the problem's meter, if any: reset right before solve, frozen right after
            result = method.solve(problem, config, ctx)
        check_declared(result, config)  # the configuration a Result declares for its scorer is the cell's
        # NaN has no SQL representation that survives every backend; a missing metric is honest
        metrics = {k: float(v) for k, v in family.score(problem, result).items() if not math.isnan(v)}
        curves = {**ctx.curves, **family.trace(problem, result)}
        record.metrics, record.curves = metrics, curves  # together: a run its trace refuses keeps no metrics
        record.status = Status.DONE
