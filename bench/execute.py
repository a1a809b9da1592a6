"""execute(cell) -> RunRecord: build the task, run the method, score, time, and catch.

The same function runs in-process, in a forked worker of the local runner, or in a Ray task.
It never touches the store: the driver saves what it returns.
"""

from __future__ import annotations

import math
import resource
import sys
import time
import traceback

from bench.configs import build_config
from bench.context import DeadlineExceeded, RunContext
from bench.errors import BenchError
from bench.registry import Registry
from bench import provenance
from bench.spec import Cell, RunRecord, Status


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
    # ru_maxrss is in KiB on Linux: the peak of this process (a forked worker: of that cell)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def execute(cell: Cell, registry: Registry, timeout_s: float | None = None) -> RunRecord:
    """Run one cell and return its record; exceptions become status 'failed' with the traceback."""
    started = time.time()
    clock, cpu_clock = time.perf_counter(), time.process_time()
    record = RunRecord(cell=cell, status=Status.FAILED, started_at=started, machine=provenance.machine())
    try:
        method = registry.method(cell.method)
        task = registry.task(cell.task)
        record.task_version = task.version
        family = registry.family(task.family)
        device = device_for(cell.hardware)
        deadline = time.monotonic() + timeout_s if timeout_s else None
        ctx = RunContext(seed=int(cell.seed), device=device, deadline=deadline)
        problem = task.build(build_config(task.Config, cell.task_config, task.name), ctx.for_task())
        config = build_config(method.Config, cell.method_config, method.name)
        reason = method.skip(problem, config)
        if reason:
            record.status, record.error = Status.SKIPPED, reason
        else:
            result = method.solve(problem, config, ctx)
            # NaN has no SQL representation that survives every backend; a missing metric is honest
            record.metrics = {k: float(v) for k, v in family.score(problem, result).items() if not math.isnan(v)}
            record.curves = {**ctx.curves, **family.trace(problem, result)}
            record.status = Status.DONE
    except DeadlineExceeded as exc:
        record.status, record.error = Status.TIMEOUT, str(exc)
    except Exception:  # noqa: BLE001 - any failure of a run is data, stored with its traceback
        record.status, record.error = Status.FAILED, traceback.format_exc()
    record.wall_s = time.perf_counter() - clock
    record.cpu_s = time.process_time() - cpu_clock
    record.peak_mem_mb = _peak_mem_mb() if sys.platform != "win32" else None
    return record
