"""The Ray runner: each cell a Ray task running the same `execute(cell)` as the local runner.

`run_cells(cells, store, registry, address=...)`: no address starts a local Ray, `auto` joins a
running cluster, `HOST:PORT` a given one. Each task gets `.options(num_cpus, num_gpus, memory,
resources)` from the method's declared `Resources` and the cell's hardware (`cpu`; `cuda`: at
least one GPU; `cuda:a100`: also the custom resource `accelerator_type:A100`, which Ray sets on
nodes with that GPU class). Before anything is submitted each cell is checked against the
cluster's nodes: a cell no node can hold is stored as `infeasible` with the reason instead of
waiting forever. Only this driver writes to the store, as each cell finishes.

The driver keeps at most as many cells in flight as the cluster's totals hold, so a submitted
cell is running (not queued inside Ray) and its hard timeout counts from submission (on a
cluster shared with other jobs, time queued behind them counts too). A cell past the timeout is
cancelled (its worker killed) and stored as `timeout`. A worker or node that dies, or a task
killed for memory, is retried (transient); an exception inside a method is a `failed` record
returned by `execute`, which Ray sees as success, so it is never retried. Ctrl-C or SIGTERM
cancels the cells in flight; everything finished is stored (in batches, leased like the local
runner's cells: bench.writes), and a rerun (either runner) resumes.

A local Ray this driver starts ends with it: `run_cells` shuts down a Ray it started itself, and
a reaper process (runners/reaper.py) kills what is left of it once the driver is gone, even
after kill -9 (Ray's dashboard and runtime-env agents otherwise outlived it for minutes).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from bench.errors import BenchError, mask_secrets
from bench.registry import Listing, Registry
from bench.spec import Cell, RunRecord, Status
from bench.store import Store
from bench.writes import Writer
from runners.base import OnRecord, OnStatus, Settings, Summary, execute_keeping_output, pending_cells, recorder

TRANSIENT = ("WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "ObjectLostError", "LocalRayletDiedError")


def cell_options(cell: Cell, registry: Registry) -> dict:
    """Ray task options from the method's Resources and the cell's hardware."""
    need = registry.method(cell.method).spec.resources
    options: dict = {"num_cpus": float(need.cpus), "num_gpus": 0.0, "resources": {}}
    if need.memory_gb:
        options["memory"] = int(need.memory_gb * 1024**3)
    kind, _, gpu_class = cell.hardware.partition(":")
    if kind == "cuda":
        options["num_gpus"] = float(max(need.gpus, 1.0))
        if gpu_class:
            options["resources"][f"accelerator_type:{gpu_class.upper()}"] = 0.001
    return options


def _demand(options: dict) -> dict[str, float]:
    demand = {"CPU": options["num_cpus"], "GPU": options["num_gpus"], "memory": float(options.get("memory", 0))}
    demand.update(options["resources"])
    return {k: v for k, v in demand.items() if v > 0}


def _describe(demand: dict[str, float]) -> str:
    parts = []
    for name, value in demand.items():
        if name == "memory":
            parts.append(f"{value / 1024**3:.3g} GB memory")
        elif name.startswith("accelerator_type:"):
            parts.append(f"a {name.split(':', 1)[1]} GPU")
        else:
            parts.append(f"{value:g} {name}")
    return ", ".join(parts)


def infeasibility(demand: dict[str, float], nodes: list[dict[str, float]]) -> str | None:
    """Why no node of the cluster can ever run a task with this demand, or None."""
    if any(all(node.get(k, 0.0) >= v for k, v in demand.items()) for node in nodes):
        return None
    have = "; ".join(_describe({k: v for k, v in n.items()
                                if k in ("CPU", "GPU", "memory") or k.startswith("accelerator_type:")})
                     for n in nodes) or "no alive node"
    missing = sorted({k for k, v in demand.items() if not any(n.get(k, 0.0) >= v for n in nodes)})
    hint = " (this cluster has no GPU)" if "GPU" in missing and not any(n.get("GPU") for n in nodes) else ""
    return (f"infeasible on this Ray cluster: the cell needs {_describe(demand)}; "
            f"no node has enough {', '.join(missing)}{hint}; nodes: {have}")


def connect(address: str | None, runtime_env: dict | None = None, num_cpus: int | None = None) -> None:
    """ray.init: a local Ray (no address), `auto`, or HOST:PORT; BenchError if unreachable."""
    import ray

    if address and address.startswith(("http://", "https://")):
        shown = mask_secrets(address)
        raise BenchError(f"Ray address {shown!r} is a dashboard (job API) address; `bench grid --address` takes "
                         f"the GCS address HOST:6379 or `auto` (use `bench submit --address {shown}` for jobs)")
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import logging

    from bench.errors import verbose

    level = logging.INFO if verbose() else logging.ERROR  # Ray's INFO and WARNING lines only with --verbose
    logging.getLogger("ray").setLevel(level)
    kwargs: dict = {"log_to_driver": False, "runtime_env": runtime_env or None, "logging_level": level}
    if address:
        if address != "auto":
            _check_reachable(address)
        kwargs["address"] = address
    elif not os.environ.get("RAY_ADDRESS"):  # set inside a Ray job: ray.init() joins that cluster
        # "local": a new Ray of its own, even where `ray start` runs on this machine
        kwargs.update(address="local", include_dashboard=False, num_cpus=num_cpus)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        ray.shutdown()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"cannot reach a Ray cluster at {mask_secrets(address or 'a new local Ray')}: "
                         f"{mask_secrets(first)}") from None
    if kwargs.get("address") == "local":
        _start_reaper(os.path.dirname(ray.__file__))


_REAPER: subprocess.Popen | None = None


def _start_reaper(ray_dir: str) -> None:
    """A watcher that kills this driver's local Ray once the driver is gone (runners/reaper.py)."""
    global _REAPER
    if not sys.platform.startswith("linux"):
        return
    if _REAPER is not None and _REAPER.stdin:
        _REAPER.stdin.close()  # the previous local Ray was shut down: its reaper sweeps and exits
    _REAPER = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "reaper.py"), str(os.getpid()),
                                ray_dir],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True, close_fds=True)


def _check_reachable(address: str) -> None:
    """Fail fast on a GCS address nothing listens on (ray.init would retry for minutes)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise BenchError(f"bad Ray address {mask_secrets(address)!r}: use HOST:PORT (the head's GCS port, 6379 by "
                         "default) or auto")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise BenchError(f"cannot reach a Ray cluster at {mask_secrets(address)}: {exc.strerror or exc} "
                         "(is `ray start --head` running there?)") from None


def _registry_payload(registry: Registry) -> tuple[str, tuple[Listing, ...], str]:
    listings = tuple(registry.listings)
    token = hashlib.sha256(repr(listings).encode()).hexdigest()[:16]
    return token, listings, str(registry.papers_dir)


_WORKER_REGISTRIES: dict[str, Registry] = {}


def _execute_remote(cell: Cell, payload, timeout_s: float | None) -> RunRecord:
    """Body of the Ray task: rebuild the registry once per worker process, then execute."""
    from pathlib import Path

    token, listings, papers_dir = payload
    registry = _WORKER_REGISTRIES.get(token)
    if registry is None:
        registry = _WORKER_REGISTRIES[token] = Registry(list(listings), Path(papers_dir))
    return execute_keeping_output(cell, registry, timeout_s)  # what the worker prints stays with the run


@dataclass
class _InFlight:
    cell: Cell
    attempt: int
    started: float  # monotonic
    wall_start: float  # unix
    demand: dict[str, float]


def is_transient(exc: BaseException) -> bool:
    """Worker or node died, or killed for memory: worth another try. Anything else is not."""
    return any(c.__name__ in TRANSIENT for c in type(exc).__mro__)


def run_cells(cells: list[Cell], store: Store, registry: Registry, address: str | None = None,
              timeout: float | None = None, force: bool = False, on_record: OnRecord | None = None,
              on_status: OnStatus | None = None, retries: int = 2, runtime_env: dict | None = None,
              num_cpus: int | None = None) -> Summary:
    """Run the cells on Ray, storing each as it finishes; returns the counts per status."""
    todo, already = pending_cells(cells, store, force, registry)
    summary = Summary(already_done=already)
    if not todo:
        return summary
    import ray

    owns_ray = not ray.is_initialized()  # a Ray started here is shut down here
    connect(address, runtime_env, num_cpus)
    writer = Writer(store, "ray", force=force, versions=registry.task_versions(todo))
    try:
        with _sigterm_as_interrupt():
            _drive(todo, registry, timeout, on_record, on_status, retries, summary, writer)
    except (MemoryError, OSError) as exc:  # the driver's disk is full or its memory ran out: exit 3
        fault = writer.fault(exc)
        if fault is None:
            raise
        raise fault from None
    finally:
        try:
            writer.close()
            summary.kept = writer.kept
        finally:
            if owns_ray:
                try:  # best effort: an error here must not replace the KeyboardInterrupt leaving
                    ray.shutdown()
                except Exception:  # noqa: BLE001 - the reaper ends whatever is left
                    pass
    return summary


@dataclass(frozen=True)
class RayRunner:
    """`--runner ray`: each cell a Ray task on the cluster at `address` (None: a local Ray of its own). Ray places a
    GPU cell on a node that has one, or stores it as infeasible; nothing is refused beforehand."""

    address: str | None = None
    here = False

    @classmethod
    def from_settings(cls, settings: Settings) -> RayRunner:
        return cls(settings.address)

    def place(self, cells: list[Cell]) -> None:
        """Nothing to refuse here: a cell no node can hold is stored as infeasible, with the reason."""

    def reach(self) -> None:
        connect(self.address)  # an unreachable cluster is a one-line error before any cell is given out

    def __call__(self, cells: list[Cell], store: Store, registry: Registry, *, timeout: float | None = None,
                 force: bool = False, on_record: OnRecord | None = None,
                 on_status: OnStatus | None = None) -> Summary:
        return run_cells(cells, store, registry, address=self.address, timeout=timeout, force=force,
                         on_record=on_record, on_status=on_status)


class _sigterm_as_interrupt:
    """SIGTERM raises KeyboardInterrupt (main thread only), so it leaves the way Ctrl-C does."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._raise)

    @staticmethod
    def _raise(signum, frame):
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


@dataclass(eq=False)
class _Flight:
    """One grid's cells on Ray: those queued (cell, attempt, options, demand), those in flight, what they hold of the
    cluster's totals, and the counts the progress display shows (running, pending and each finished status)."""

    totals: dict[str, float]
    counts: dict[str, int]
    queue: deque[tuple[Cell, int, dict, dict]] = field(default_factory=deque)
    inflight: dict = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)

    def fits(self, demand: dict[str, float]) -> bool:
        return not self.inflight or all(self.used.get(k, 0.0) + v <= self.totals.get(k, 0.0) + 1e-9
                                        for k, v in demand.items())

    def submit(self, remote, payload, timeout: float | None, writer: Writer, summary: Summary) -> None:
        """Submit queued cells while the cluster's totals hold them, each leased first (bench.writes)."""
        while self.queue and self.fits(self.queue[0][3]):
            cell, attempt, options, demand = self.queue.popleft()
            claimed, done = writer.claim([cell.run_key])
            self.counts["pending"] -= 1
            if not claimed:  # finished by, or leased to, another driver meanwhile
                if cell.run_key in done:
                    summary.already_done += 1
                else:
                    summary.leased += 1
                continue
            ref = remote.options(max_retries=0, retry_exceptions=False, name=f"bench:{cell.method}:{cell.seed}",
                                 **options).remote(cell, payload, timeout)
            self.inflight[ref] = _InFlight(cell, attempt, time.monotonic(), time.time(), demand)
            for k, v in demand.items():
                self.used[k] = self.used.get(k, 0.0) + v
            self.counts["running"] += 1

    def release(self, ref) -> _InFlight:
        job = self.inflight.pop(ref)
        for k, v in job.demand.items():
            self.used[k] -= v
        self.counts["running"] -= 1
        return job

    def wait_s(self, writer: Writer, timeout: float | None) -> float:
        """How long to wait for a cell: at most a second, until the writer's next flush or the first deadline."""
        wait_s = min(1.0, writer.due_in() if writer.due_in() is not None else 1.0)
        if timeout:
            next_deadline = min(j.started for j in self.inflight.values()) + timeout
            wait_s = max(0.0, min(wait_s, next_deadline - time.monotonic()))
        return wait_s


def _cluster() -> tuple[list[dict[str, float]], dict[str, float]]:
    """The alive nodes' resources, and their totals."""
    import ray

    nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
    totals: dict[str, float] = {}
    for node in nodes:
        for k, v in node.items():
            totals[k] = totals.get(k, 0.0) + v
    return nodes, totals


def _queue_feasible(todo: list[Cell], registry: Registry, nodes: list[dict[str, float]], flight: _Flight,
                    finish: OnRecord) -> None:
    """Queue the cells some node can hold; store the others as infeasible, with the reason, at once."""
    for cell in todo:
        options = cell_options(cell, registry)
        demand = _demand(options)
        reason = infeasibility(demand, nodes)
        if reason:
            flight.counts["pending"] -= 1
            finish(RunRecord(cell, Status.INFEASIBLE, error=reason, started_at=time.time(), wall_s=0.0))
        else:
            flight.queue.append((cell, 1, options, demand))


def _settle(ref, job: _InFlight, flight: _Flight, registry: Registry, retries: int, finish: OnRecord) -> None:
    """A finished Ray task: its record; a task that failed itself (not the method) is queued again when transient
    and tries are left, else stored as failed with the attempt it reached."""
    import ray

    try:
        finish(ray.get(ref))
    except Exception as exc:  # noqa: BLE001 - the task itself failed (not the method)
        elapsed = time.monotonic() - job.started
        if is_transient(exc) and job.attempt <= retries:
            flight.counts["pending"] += 1
            flight.queue.appendleft((job.cell, job.attempt + 1, cell_options(job.cell, registry), job.demand))
            return
        first = (str(exc).strip().splitlines() or [""])[0]
        kind = "transient, " if is_transient(exc) else ""
        finish(RunRecord(job.cell, Status.FAILED, error=(
            f"{type(exc).__name__} ({kind}attempt {job.attempt} of "
            f"{retries + 1 if is_transient(exc) else 1}): {first}"),
            started_at=job.wall_start, wall_s=elapsed))


def _cancel_overdue(flight: _Flight, timeout: float, finish: OnRecord) -> None:
    """Cancel the cells past the timeout (their workers killed) and store them as `timeout`."""
    import ray

    now = time.monotonic()
    for ref in [r for r, j in flight.inflight.items() if now - j.started >= timeout]:
        ray.cancel(ref, force=True)
        job = flight.release(ref)
        elapsed = now - job.started
        finish(RunRecord(job.cell, Status.TIMEOUT, error=f"cancelled after {elapsed:.1f} s: exceeded --timeout "
                         f"{timeout:g} s", started_at=job.wall_start, wall_s=elapsed))


def _drive(todo: list[Cell], registry: Registry, timeout: float | None, on_record: OnRecord | None,
           on_status: OnStatus | None, retries: int, summary: Summary, writer: Writer) -> None:
    """Check each cell against the cluster, then keep as many in flight as the cluster holds until all finished."""
    import ray

    nodes, totals = _cluster()
    flight = _Flight(totals, {"running": 0, "pending": len(todo)})

    def count(record: RunRecord) -> None:
        flight.counts[record.status] = flight.counts.get(record.status, 0) + 1

    def status() -> None:
        if on_status:
            on_status(dict(flight.counts))

    finish = recorder(writer, summary, registry, on_record, count)
    _queue_feasible(todo, registry, nodes, flight, finish)
    status()
    remote = ray.remote(_execute_remote)
    payload = ray.put(_registry_payload(registry))
    try:
        flight.submit(remote, payload, timeout, writer, summary)
        status()
        while flight.inflight:
            ready, _ = ray.wait(list(flight.inflight), num_returns=1, timeout=flight.wait_s(writer, timeout))
            for ref in ready:
                _settle(ref, flight.release(ref), flight, registry, retries, finish)
            if timeout:
                _cancel_overdue(flight, timeout, finish)
            flight.submit(remote, payload, timeout, writer, summary)
            status()
            writer.tick()
    finally:
        for ref in list(flight.inflight):  # Ctrl-C, SIGTERM or an error in the driver: stop what still runs
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - best effort while leaving
                pass
