"""RunContext: everything a method or task may take from the outside world, per run.

Randomness (`rng`, `torch_generator`), the device, curve logging, progress and the deadline.
Methods never seed globals or read the environment; the runner owns all of that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

# Streams are keyed so a task's data and a method's randomness never share draws.
TASK_STREAM = 0
METHOD_STREAM = 1


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
        """The context a task's build() gets: same seed and device, its own random stream."""
        return RunContext(seed=self.seed, device=self.device, stream=TASK_STREAM, deadline=self.deadline)


def log_spaced_steps(total: int, points: int = 100) -> np.ndarray:
    """Unique integer steps 1..total spaced evenly in log scale, always including total."""
    steps = np.unique(np.round(np.logspace(0, np.log10(max(total, 1)), points)).astype(int))
    return steps[(steps >= 1) & (steps <= total)]
