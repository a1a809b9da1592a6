"""Cell (one run), Metric, Resources, and the run_key that identifies a cell in the store."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Mapping

HARDWARE_KINDS = ("cpu", "cuda")  # plus named GPU classes such as "cuda:a100"


@dataclass(frozen=True)
class Metric:
    """How a family's score is read: direction, unit, and whether it ranks methods."""

    higher_is_better: bool
    unit: str = ""
    primary: bool = False
    description: str = ""
    bounds: tuple[float | None, float | None] | None = None  # the values it can take (None: unbounded that side);
    # a confidence interval is kept inside them (leaderboard.queries.summarize)


@dataclass(frozen=True)
class Resources:
    """What one run of a method needs from the machine (used by the Ray runner)."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_gb: float = 1.0


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace; the same value always gives the same text."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} cannot be part of a cell")
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _plain(value.item())
    return value


def validate_hardware(hardware: str) -> str:
    kind = hardware.split(":", 1)[0]
    if kind not in HARDWARE_KINDS or hardware.endswith(":"):
        raise ValueError(f"hardware {hardware!r}: allowed are cpu, cuda, or cuda:<gpu class> such as cuda:a100")
    return hardware


@dataclass(frozen=True)
class Cell:
    """One run: method + its full config + task + its full config + seed + hardware.

    Configs are the complete dicts (defaults with overrides applied), so two spellings of
    the same run give the same run_key.
    """

    method: str
    task: str
    seed: int
    method_config: Mapping[str, Any] = field(default_factory=dict)
    task_config: Mapping[str, Any] = field(default_factory=dict)
    hardware: str = "cpu"

    def canonical(self) -> str:
        return canonical_json(
            {
                "method": self.method,
                "method_config": self.method_config,
                "task": self.task,
                "task_config": self.task_config,
                "seed": int(self.seed),
                "hardware": self.hardware,
            }
        )

    @property
    def run_key(self) -> str:
        return run_key(self)

    @property
    def setting_key(self) -> str:
        """sha256 of the cell without its seed: the runs that are one setting over seeds."""
        return setting_key(self.method, self.method_config, self.task, self.task_config, self.hardware)

    def __hash__(self) -> int:
        return hash(self.canonical())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cell) and self.canonical() == other.canonical()

    def label(self) -> str:
        return f"{self.method} x {self.task} seed={self.seed} [{self.hardware}]"


def setting_key(method: str, method_config: Mapping[str, Any], task: str, task_config: Mapping[str, Any],
                hardware: str) -> str:
    text = canonical_json({"method": method, "method_config": method_config, "task": task,
                           "task_config": task_config, "hardware": hardware})
    return hashlib.sha256(text.encode()).hexdigest()


def run_key(cell: Cell) -> str:
    """sha256 of the cell's canonical JSON. The code version is stored beside it, not in it."""
    return hashlib.sha256(cell.canonical().encode()).hexdigest()


class Status(StrEnum):
    """A run's status in the store: pending and running while a driver holds its lease, then one of the finished
    ones a runner reports (`FINISHED`). A StrEnum: it is stored, compared and printed as its plain string."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"        # the method declined the problem, with its reason
    INFEASIBLE = "infeasible"  # no node of the cluster can hold the cell


FINISHED = (Status.DONE, Status.FAILED, Status.TIMEOUT, Status.SKIPPED, Status.INFEASIBLE)


@dataclass
class RunRecord:
    """What a runner hands back to the driver for one cell; the driver stores it."""

    cell: Cell
    status: Status  # one of FINISHED (a plain string is converted; anything else is refused)
    task_version: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    error: str | None = None
    started_at: float | None = None  # unix time
    wall_s: float | None = None
    cpu_s: float | None = None  # CPU seconds of the run's process (every thread): the cost on a shared machine
    peak_mem_mb: float | None = None
    machine: dict | None = None  # bench.provenance.machine() of the process that ran it (None: the driver's)
    log: str | None = None  # the libraries' warnings and log messages while it ran (bench.execute), not printed

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if self.status not in FINISHED:
            raise ValueError(f"a runner reports a finished status ({', '.join(FINISHED)}), not {self.status!r}")
