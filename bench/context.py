"""RunContext: everything a method or task may take from the outside world, per run.

Randomness (`rng`, `torch_generator`), the device, curve logging, progress, the deadline and where this machine keeps
its caches of built artefacts (`cache_dir(family)`). Methods never seed globals or read the environment; the runner
owns all of that.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np

# Streams are keyed so a task's data and a method's randomness never share draws.
TASK_STREAM = 0
METHOD_STREAM = 1

CACHE_ENV = "BENCH_CACHE_DIR"  # where this machine keeps the built artefacts (tiny models and their worlds)
DEFAULT_CACHE_ROOT = "~/.cache/icml2025-bench"


def default_cache_root() -> Path:
    """$BENCH_CACHE_DIR if set (and not empty), else ~/.cache/icml2025-bench, with `~` expanded. A property of the
    machine, not of a run: it lives on the context, never in a Config, so a run's key does not depend on it."""
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_ROOT).expanduser()


class DeadlineExceeded(Exception):
    """Raised by `ctx.check_deadline()` when a run has used up its time."""


@dataclass
class RunContext:
    seed: int
    device: str = "cpu"
    stream: int = METHOD_STREAM
    deadline: float | None = None  # time.monotonic() value after which the run must stop
    on_progress: Callable[[float], None] | None = None
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    # read where the context is built (bench.execute: in the process that runs the cell), tests and benchmarks alike
    cache_root: Path = field(default_factory=default_cache_root)

    def __post_init__(self) -> None:
        self.cache_root = Path(self.cache_root).expanduser()

    def cache_dir(self, family: str) -> Path:
        """`<cache_root>/<family>`: where a family's tasks cache what they build (created by the cache on first use)."""
        if not family or "/" in family or family in (".", ".."):
            raise ValueError(f"a cache family is one folder name, got {family!r}")
        return self.cache_root / family

    @cached_property
    def rng(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.stream])

    @cached_property
    def torch_generator(self) -> Any:
        import torch  # heavy: only for the families that use it

        generator = torch.Generator(device=self.device.split(":")[0] if self.device != "cpu" else "cpu")
        generator.manual_seed(int(np.random.SeedSequence([self.seed, self.stream]).generate_state(1)[0]))
        return generator

    def log(self, step: int, **values: float) -> None:
        """Record one point of each named curve (e.g. ctx.log(t, loss=0.3))."""
        for name, value in values.items():
            self.curves.setdefault(name, []).append((int(step), float(value)))

    def progress(self, fraction: float) -> None:
        if self.on_progress is not None:
            self.on_progress(min(max(float(fraction), 0.0), 1.0))

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceeded("run exceeded its time limit")

    def for_task(self) -> "RunContext":
        """The context a task's build() gets: same seed, device and cache root, its own random stream."""
        return RunContext(seed=self.seed, device=self.device, stream=TASK_STREAM, deadline=self.deadline,
                          cache_root=self.cache_root)


def log_spaced_steps(total: int, points: int = 100) -> np.ndarray:
    """Unique integer steps 1..total spaced evenly in log scale, always including total."""
    steps = np.unique(np.round(np.logspace(0, np.log10(max(total, 1)), points)).astype(int))
    return steps[(steps >= 1) & (steps <= total)]
