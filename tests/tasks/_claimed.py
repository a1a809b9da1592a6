"""What the leaderboard's claims rest on, per family, and a lie detector for the fields a method reports (issue 23).

Every metric a claim reads (leaderboard/papers/*.yaml: `metric`, `x_metric`, a rate claim's `curve`) must be
computed by the family's `score` from the method's outputs against the problem, or observed by the harness
(bench/observe.py), never taken from a number the method wrote about itself. docs/metrics-audit.md has the table;
each family's tests/tasks/<family>/test_claimed_metrics.py (or test_observed_*.py where the harness measures)
classifies its claimed metrics and checks, on every registered (method, task) pair at its smallest settings, that
changing what a method reports about itself leaves every claimed metric where it was.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from bench.cells import Entry, make_cell
from bench.configs import build_config
from bench.context import RunContext
from bench.execute import execute
from bench.observe import observing
from bench.registry import Listing, Registry
from bench.spec import RunRecord

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = Registry.discover(plugins=False)

OUTPUT = "computed by score from the method's outputs against the problem"
PROBLEM = "a property of the problem the task built"
OBSERVED = "observed by the harness or the task (bench.observe)"
REPORTED = "the method's own report (an open item of docs/metrics-audit.md)"


def _cells(entry: dict) -> list[dict]:
    cells = entry.get("cells") or []
    cells = [cells] if isinstance(cells, dict) else list(cells)
    control = entry.get("control") or {}
    extra = control.get("cells") or [] if isinstance(control, dict) else []
    return cells + ([extra] if isinstance(extra, dict) else list(extra))


@cache
def claimed_metrics(family: str) -> frozenset[str]:
    """Every metric (and `curve:<name>`) a claim, control or check of any paper reads on a task of `family`:
    `metric`, `x_metric`, a tracking claim's `expect.against`, a rate claim's `curve`."""
    found = set()
    for path in sorted((ROOT / "leaderboard" / "papers").glob("*.yaml")):
        paper = yaml.safe_load(path.read_text())
        for section in ("claims", "controls", "checks"):
            for entry in paper.get(section) or []:
                tasks = {cell["task"] for cell in _cells(entry) if "task" in cell}
                if any(REGISTRY.listing("task", t).family == family for t in tasks):
                    against = (entry.get("expect") or {}).get("against")  # a tracking claim's baseline
                    found |= {m for m in (entry.get("metric"), entry.get("x_metric"), against) if m}
                    if entry.get("curve"):
                        found.add(f"curve:{entry['curve']}")
    return frozenset(found)


def pairs(family: str) -> list[tuple[str, str]]:
    """Every compatible registered (method, task) pair of the family."""
    methods = [m for m in REGISTRY.names("method") if REGISTRY.listing("method", m).family == family]
    tasks = [t for t in REGISTRY.names("task") if REGISTRY.listing("task", t).family == family]
    return [(m, t) for m in methods for t in tasks if REGISTRY.incompatibility(m, t) is None]


def built(task: str, seed: int = 0):
    """The task's problem at its smallest settings, as `solved` builds it."""
    t = REGISTRY.task(task)
    return t.build(build_config(t.Config, dict(t.spec.smallest), task), RunContext(seed=seed).for_task())


def solved(method: str, task: str, seed: int = 0) -> tuple[Any, Any] | None:
    """(problem, result) of the pair at the task's smallest and the method's smoke settings, the solve delimited as
    the harness delimits it; None when the method skips the problem."""
    m = REGISTRY.method(method)
    problem = built(task, seed)
    config = build_config(m.Config, dict(m.spec.smoke), method)
    if m.skip(problem, config):
        return None
    with observing(problem):
        result = m.solve(problem, config, RunContext(seed=seed))
    return problem, result


def solved_or_skip(method: str, task: str, seed: int = 0) -> tuple[Any, Any]:
    """`solved`, skipping the calling test when the method skips the problem."""
    import pytest

    run = solved(method, task, seed)
    if run is None:
        pytest.skip(f"{method} skips {task} at its smallest settings")
    return run


def liar_runner(family: str, task: str, task_config: dict, module: str, *methods: str) -> Callable[..., RunRecord]:
    """run(method, config) -> the RunRecord bench.execute stores for `method` on `task` at `task_config`, seed 0, in a
    registry of the task, the registered `methods` and the method `liar` of `module` (a test module that lies about
    itself, registered here by hand and never discovered)."""
    registry = Registry([REGISTRY.listing("task", task), *(REGISTRY.listing("method", m) for m in methods),
                         Listing("method", "liar", family, module, "", "test")])
    entry = Entry(task, task_config)

    def run(method: str, config: dict | None = None) -> RunRecord:
        return execute(make_cell(registry, Entry(method, config or {}), entry, 0), registry)

    return run


def claimed_scores(family: str, problem, result) -> dict[str, float]:
    scores = REGISTRY.family(family).score(problem, result)
    return {k: v for k, v in scores.items() if k in claimed_metrics(family)}


def same(a: dict[str, float], b: dict[str, float]) -> bool:
    """Equal metric dicts, NaN equal to NaN."""
    return a.keys() == b.keys() and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in
                                        ((a[k], b[k]) for k in a))


def lie(result, changes: dict[str, Callable[[Any], Any]]):
    """The result with each reported field in `changes` (that it has) rewritten by its function."""
    fields = {f.name for f in dataclasses.fields(result)}
    return dataclasses.replace(result, **{name: fn(getattr(result, name)) for name, fn in changes.items()
                                          if name in fields})


def assert_unmoved(family: str, method: str, task: str, changes: dict[str, Callable[[Any], Any]],
                   reported: tuple[str, ...] = ()) -> None:
    """Rewriting the fields the method reports about itself (`changes`) leaves every claimed metric but the known
    self-reported ones (`reported`) bit-identical."""
    problem, result = solved_or_skip(method, task)
    honest, lying = (claimed_scores(family, problem, r) for r in (result, lie(result, changes)))
    keep = [k for k in honest if k not in reported]
    assert same({k: lying.get(k, math.nan) for k in keep}, {k: honest[k] for k in keep})
