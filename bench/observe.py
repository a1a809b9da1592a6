"""What the harness observes of a method's run, for a family's `score` to read instead of the method's own word.

A claim that rests on a cost (forward passes, oracle calls, wall time) must not rest on a number the method wrote
about itself. A family whose claims do gives its problem a `Meter` (the attribute `meter`) and has its task wire the
meter to what it hands the method: forward hooks on the models (`count_forwards`), a counting oracle, ... so every
unit of cost is counted where it is spent, by task code. The harness (bench/execute.py) runs the method's solve
inside `observing(problem)`: the meter is reset right before solve (nothing the task did while building, such as
its own reference decoding, counts) and frozen right after it (nothing the scorer does counts), with the solve's
wall time. `score` reads `meter.reading()`; a count the method still reports in its Result is its report, which
`check_report` compares with the observation (a mismatch is a `Misreport`: the run fails, its claims read not run).

Outside the harness (a test calling solve, then score) the reading is live: everything since the meter was made or
last reset, and the seconds since then; a test that solves one problem more than once wraps each solve in
`observing(problem)`. A number the scorer must take from the Result because it is the method's configuration (the
clip threshold whose fixed point the iterates are judged against, the β that scales an implicit reward) is declared
in `result.declared` (config field -> value) and compared by the harness with the cell's config (`check_declared`):
the configuration is the harness's to know, so a declaration that differs is a Misreport. What no meter can see
is a method that goes around what it was handed (copies a model's weights, reads a problem field its contract
forbids): that is for code review, not for a count.
"""

from __future__ import annotations

import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator


class Misreport(ValueError):
    """A method's reported cost differs from what the harness observed."""


@dataclass(frozen=True)
class Reading:
    counts: dict[str, int] = field(default_factory=dict)  # name -> units counted (0 for a name never counted)
    seconds: float = 0.0  # wall time of the solve (a live reading: since the meter's reset)
    delimited: bool = False  # True when the harness reset the meter before solve and froze it after

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)


class Meter:
    """Counters and a stopwatch for one problem, written by task code only (never a dataclass: a problem's fields are
    fingerprinted by the conformance suite, and counting must not look like the method changing its problem)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._started = time.perf_counter()
        self._frozen: Reading | None = None
        self.issued: list[Any] = []  # objects the problem handed out during the solve (e.g. saddle's oracles)

    def count(self, name: str, units: int = 1) -> None:
        self._counts[name] = self._counts.get(name, 0) + int(units)

    def issue(self, item: Any) -> Any:
        """Keep `item` (an oracle, a handle) for the scorer to find; returns it."""
        self.issued.append(item)
        return item

    def reset(self) -> None:
        self._counts, self._frozen, self.issued = {}, None, []
        self._started = time.perf_counter()

    def freeze(self) -> None:
        self._frozen = Reading(dict(self._counts), time.perf_counter() - self._started, True)

    def reading(self) -> Reading:
        """The frozen reading of the last observed solve, else the live one."""
        if self._frozen is not None:
            return self._frozen
        return Reading(dict(self._counts), time.perf_counter() - self._started, False)

    def __repr__(self) -> str:
        return f"Meter({self.reading()})"


def meter_of(problem: Any) -> Meter | None:
    meter = getattr(problem, "meter", None)
    return meter if isinstance(meter, Meter) else None


@contextmanager
def observing(problem: Any) -> Iterator[Meter | None]:
    """Delimit one solve: the problem's meter (if it has one) is reset on entry and frozen on exit."""
    meter = meter_of(problem)
    if meter is not None:
        meter.reset()
    try:
        yield meter
    finally:
        if meter is not None:
            meter.freeze()


def count_forwards(module: Any, meter: Meter, name: str) -> None:
    """Count the forward passes of a torch module into `meter`: `name` += 1 per call, `name + "_rows"` += the batch
    size of its first tensor argument (a batched forward of B sequences is B sequence evaluations).

    A forward pre-hook, so the model's outputs are untouched. It holds the meter weakly and is removed when the meter
    is gone, so a model shared by several problems counts into each live one only.
    """
    ref = weakref.ref(meter)

    def hook(mod, args, kwargs):
        live = ref()
        if live is not None:
            first = next((a for a in (*args, *kwargs.values()) if hasattr(a, "shape") and len(a.shape) >= 1), None)
            live.count(name)
            live.count(f"{name}_rows", int(first.shape[0]) if first is not None else 1)
        return None

    handle = module.register_forward_pre_hook(hook, with_kwargs=True)
    weakref.finalize(meter, handle.remove)


def check_declared(result: Any, config: Any) -> None:
    """Raise Misreport when a value `result.declared` gives for a config field is not the cell's config value.

    `declared` maps config field names to the values the Result says the method ran with (absent or empty: nothing
    declared). Sequences compare element-wise; a float NaN equals NaN."""
    for name, value in (getattr(result, "declared", None) or {}).items():
        if not hasattr(config, name):
            raise Misreport(f"the method declares {name}={value!r}, but its config has no field {name!r}")
        actual = getattr(config, name)
        if not _same(value, actual):
            raise Misreport(f"the method declares {name}={value!r}; the cell's config has {name}={actual!r}. The "
                            "scorer reads the declaration, and a run whose declaration differs is not scored")


def _same(a: Any, b: Any) -> bool:
    def items(x: Any) -> list | None:
        x = x.tolist() if hasattr(x, "tolist") else x
        return list(x) if isinstance(x, (list, tuple)) else None

    if items(a) is not None or items(b) is not None:
        a, b = items(a), items(b)
        return a is not None and b is not None and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def check_report(what: str, reported: float, observed: float) -> None:
    """Raise Misreport when a method's reported count is not the observed one."""
    if reported != observed:
        raise Misreport(f"the method reports {reported} {what}; the harness observed {observed}. The metrics use the "
                        "observation, and a run whose report differs is not scored")
