"""The conformance checks, for any registered method or task, plugins (entry points) included.

A method or task enters them the moment it is registered. As scikit-learn's `check_estimator` does for an estimator,
they run it on every compatible partner at the task's smallest instance and check that it scores only the family's
declared metrics, that the same seed twice gives the same metrics (timings aside), that solving leaves the problem as
the task built it, that every Config field survives a `--set` round trip, and that a method declares its switched-off
setting (bench/switches.py). A task declares its smallest instance as `@task(..., smallest={config overrides})`, a
method a short run as `@method(..., smoke={config overrides})`; without them the defaults run.

In a plugin's own tests:

    from bench.testing import check_method, check_task

    def test_my_method_conforms():
        check_method("my_method")   # raises CheckFailed (an AssertionError) naming each failed check

From the command line: `bench check NAME`, one line per check. tests/test_conformance.py runs the same functions over
this repository's registry, one test per check and pair.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bench.cells import Entry, make_cell
from bench.configs import build_config, parse_overrides
from bench.context import RunContext
from bench.errors import BenchError
from bench.execute import execute
from bench.registry import Registry
from bench.spec import RunRecord
from bench.switches import Switch

TIMED_UNITS = ("s", "tok/s")  # metrics of the wall clock: the one thing the same seed may not repeat
MIN_REASON = 20  # characters: a reason that no setting removes a mechanism says why, it is not a placeholder


class CheckFailed(AssertionError):
    """A conformance check that failed; the message says why."""


@dataclass(frozen=True)
class Check:
    label: str  # what is checked, e.g. "sgd x performative: the same seed gives the same metrics"
    run: Callable[[], str]  # returns a note (empty, or what was seen); raises on failure


@dataclass(frozen=True)
class Outcome:
    label: str
    failure: str | None  # why it failed; None: it passed
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.failure is None


def check_method(name: str, registry: Registry | None = None) -> list[Outcome]:
    """Every check of a registered method (plugins included); CheckFailed names the failed ones."""
    return conform(name, method_checks(name, registry or Registry.discover()))


def check_task(name: str, registry: Registry | None = None) -> list[Outcome]:
    """Every check of a registered task (plugins included); CheckFailed names the failed ones."""
    return conform(name, task_checks(name, registry or Registry.discover()))


def method_checks(name: str, registry: Registry) -> list[Check]:
    """A method's own declarations, then its runs on each compatible task."""
    registry.listing("method", name)  # an unknown name is a one-line error naming the close ones
    tasks = [t for t in registry.names("task") if registry.incompatibility(name, t) is None]
    checks = [Check(f"{name}: short settings declared in @method(...)",
                    lambda: short_settings_declared(registry, "method", name)),
              Check(f"{name}: every Config field survives a --set round trip",
                    lambda: survives_round_trip(registry, "method", name)),
              Check(f"{name}: switched-off setting declared (bench/switches.py)",
                    lambda: switched_off_declared(registry, name)),
              Check(f"{name}: a registered task it runs on", lambda: _partners(tasks, "task", name))]
    return checks + [check for task in tasks for check in pair_checks(registry, name, task)]


def task_checks(name: str, registry: Registry) -> list[Check]:
    """A task's own declarations and its family's contract, then each compatible method's runs on it."""
    registry.listing("task", name)
    methods = [m for m in registry.names("method") if registry.incompatibility(m, name) is None]
    checks = [Check(f"{name}: short settings declared in @task(...)",
                    lambda: short_settings_declared(registry, "task", name)),
              Check(f"{name}: every Config field survives a --set round trip",
                    lambda: survives_round_trip(registry, "task", name)),
              Check(f"{name}: its family declares its metrics and a score", lambda: family_contract(registry, name)),
              Check(f"{name}: a registered method runs on it", lambda: _partners(methods, "method", name))]
    return checks + [check for method in methods for check in pair_checks(registry, method, name)]


def pair_checks(registry: Registry, method: str, task: str) -> list[Check]:
    """The pair on the task's smallest instance: declared metrics, determinism, the problem left as built."""
    first: list[RunRecord] = []

    def scores() -> str:
        first.append(scores_declared_metrics(registry, method, task))
        return "skipped: " + (first[0].error or "") if first[0].status == "skipped" else ""

    def repeats() -> str:
        if not first:
            raise CheckFailed("not checked: the first run did not score")
        return same_seed_same_metrics(registry, method, task, first[0])

    pair = f"{method} x {task}"
    return [Check(f"{pair}: runs and scores only its family's declared metrics", scores),
            Check(f"{pair}: the same seed gives the same metrics", repeats),
            Check(f"{pair}: solving leaves the problem as built", lambda: leaves_problem_as_built(registry, method,
                                                                                                   task))]


def run_checks(checks: Iterable[Check]) -> list[Outcome]:
    """Each check's outcome; an exception inside a plugin's code is a failed check (its first line), never a crash."""
    outcomes = []
    for check in checks:
        try:
            outcomes.append(Outcome(check.label, None, check.run() or ""))
        except CheckFailed as exc:
            outcomes.append(Outcome(check.label, str(exc)))
        except Exception as exc:  # noqa: BLE001 - the checked code's own error is the check's finding
            first = (str(exc).strip().splitlines() or [""])[0]
            outcomes.append(Outcome(check.label, f"{type(exc).__name__}: {first}" if first else type(exc).__name__))
    return outcomes


def conform(name: str, checks: list[Check]) -> list[Outcome]:
    """The checks' outcomes when all pass; CheckFailed naming each failed one (and why) otherwise."""
    outcomes = run_checks(checks)
    failed = [o for o in outcomes if not o.passed]
    if failed:
        raise CheckFailed(f"{name}: {len(failed)} of {len(outcomes)} checks failed: "
                          + "; ".join(f"{o.label}: {o.failure}" for o in failed))
    return outcomes


def _partners(names: list[str], kind: str, name: str) -> str:
    if not names:
        raise CheckFailed(f"no registered {kind} is compatible with {name}, so none of its runs can be checked")
    return ", ".join(names)


def smallest(registry: Registry, kind: str, name: str) -> dict:
    """The config overrides of a short run (a method's `smoke`) or of the smallest instance (a task's `smallest`)."""
    return dict(registry.method(name).spec.smoke if kind == "method" else registry.task(name).spec.smallest)


def short_settings_declared(registry: Registry, kind: str, name: str) -> str:
    """A module-level SMOKE / SMALLEST the decorator does not carry would be silently ignored by these checks."""
    attr = "SMOKE" if kind == "method" else "SMALLEST"
    module = importlib.import_module(registry.listing(kind, name).module)
    if hasattr(module, attr) and smallest(registry, kind, name) != dict(getattr(module, attr)):
        raise CheckFailed(f"{name}: pass {attr} to @{kind}(...)")
    return ", ".join(f"{k}={v}" for k, v in smallest(registry, kind, name).items())


def family_contract(registry: Registry, task: str) -> str:
    """The task's family module declares METRICS with exactly one primary metric, and a score function."""
    family = registry.family(registry.task(task).family)
    metrics = getattr(family.module, "METRICS", None)
    if not isinstance(metrics, dict) or not metrics:
        raise CheckFailed(f"family {family.name} ({family.module.__name__}) declares no METRICS "
                          "{name: Metric(higher_is_better, unit, primary)}")
    primary = [name for name, metric in metrics.items() if metric.primary]
    if len(primary) != 1:
        raise CheckFailed(f"family {family.name}: exactly one metric must be primary, found {primary or 'none'}")
    if not callable(getattr(family.module, "score", None)):
        raise CheckFailed(f"family {family.name} ({family.module.__name__}) has no score(problem, result)")
    return f"primary metric {primary[0]}"


def scores_declared_metrics(registry: Registry, method: str, task: str) -> RunRecord:
    """One run at seed 0: done (or skipped, with its reason), the primary metric among its metrics, every metric
    declared by the family (nothing undeclared reaches the store) and finite."""
    record = execute(_cell(registry, method, task), registry)
    if record.status not in ("done", "skipped"):  # the last line of the error first (`bench check` shows it alone)
        last = (record.error or "").strip().splitlines()
        raise CheckFailed(f"{record.status}: {last[-1] if last else 'no error text'}\n{record.error or ''}")
    if record.status == "skipped":
        if not record.error:
            raise CheckFailed("skipped without saying why")
        return record
    family = registry.family(registry.task(task).family)
    if family.primary_metric not in record.metrics:
        raise CheckFailed(f"the primary metric {family.primary_metric} is missing from {sorted(record.metrics)}")
    undeclared = sorted(name for name in record.metrics if family.metric(name) is None)
    if undeclared:
        raise CheckFailed(f"metric(s) {', '.join(undeclared)} not declared in the family's METRICS")
    infinite = sorted(name for name, value in record.metrics.items() if not math.isfinite(value))
    if infinite:
        raise CheckFailed(f"metric(s) {', '.join(infinite)} not finite")
    return record


def same_seed_same_metrics(registry: Registry, method: str, task: str, first: RunRecord) -> str:
    """A second run of the same cell (caches the first built are read now) gives the same metrics, timings aside."""
    if first.status == "skipped":
        return "skipped"
    again = execute(_cell(registry, method, task), registry)
    family = registry.family(registry.task(task).family)
    timed = {name for name in first.metrics if family.metric(name).unit in TIMED_UNITS or name == "speedup"}
    before = {k: v for k, v in first.metrics.items() if k not in timed}
    after = {k: v for k, v in again.metrics.items() if k not in timed}
    if after != before:
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        raise CheckFailed("the same seed gave other metrics: " + ", ".join(
            f"{k} {before.get(k)!r} then {after.get(k)!r}" for k in differ))
    return ""


def leaves_problem_as_built(registry: Registry, method: str, task: str) -> str:
    """Solving leaves every array, tensor, weight, number and string the problem holds as the task built them."""
    m, t = registry.method(method), registry.task(task)
    ctx = RunContext(seed=0)
    problem = t.build(build_config(t.Config, smallest(registry, "task", task), task), ctx.for_task())
    config = build_config(m.Config, smallest(registry, "method", method), method)
    reason = m.skip(problem, config)
    if reason:
        return f"skipped: {reason}"
    before = fingerprint(problem)
    m.solve(problem, config, ctx)
    if fingerprint(problem) != before:
        raise CheckFailed(f"{method} changed the {task} problem it was given")
    return ""


def survives_round_trip(registry: Registry, kind: str, name: str) -> str:
    """Every Config default, written as a user would type it after --set, reads back as the same value."""
    spec = registry.method(name) if kind == "method" else registry.task(name)
    defaults = {f.name: getattr(spec.Config(), f.name) for f in dataclasses.fields(spec.Config)}
    typed = parse_overrides(spec.Config, {k: as_text(v) for k, v in defaults.items()}, name)
    if typed != defaults:
        changed = sorted(k for k in defaults if typed.get(k) != defaults[k])
        raise CheckFailed(f"{name}: " + ", ".join(f"{k}={as_text(defaults[k])} read back as {typed.get(k)!r}"
                                                  for k in changed))
    return f"{len(defaults)} fields"


def switched_off_declared(registry: Registry, method: str) -> str:
    """`bench reproduce --controls` judges every claim again with the credited method switched off, so each method says
    how (switches that build valid cells, of registered methods of its family) or why it cannot be."""
    declared = registry.switched_off(method)
    if isinstance(declared, str):
        if len(declared) <= MIN_REASON:
            raise CheckFailed(f"{method}: say why no setting removes its mechanism")
        return f"none: {declared}"
    if not declared or not all(isinstance(s, Switch) for s in declared):
        raise CheckFailed(f"{method}: SWITCHED_OFF declares no switch")
    task = next((t for t in registry.names("task") if registry.incompatibility(method, t) is None), None)
    if task is None:
        raise CheckFailed(f"{method}: no compatible task to build its switches' cells on")
    family = registry.listing("method", method).family
    for switch in declared:
        try:
            make_cell(registry, Entry(switch.method, switch.config), Entry(task), 0)  # the Config's own checks
        except BenchError as exc:
            raise CheckFailed(f"switch {switch.name}: {exc}") from None
        if switch.method != method and registry.listing("method", switch.method).family != family:
            raise CheckFailed(f"switch {switch.name}: {switch.method} is not a method of family {family}")
    return "; ".join(switch.label() for switch in declared)


def _cell(registry: Registry, method: str, task: str):
    return make_cell(registry, Entry(method, smallest(registry, "method", method)),
                     Entry(task, smallest(registry, "task", task)), seed=0)


def as_text(value: Any) -> str:
    """A value as a user would type it after --set."""
    if isinstance(value, tuple):
        return "[" + ", ".join(as_text(v) for v in value) + "]" if len(value) != 1 else as_text(value[0])
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)


def fingerprint(value: Any) -> str:
    """A hash of everything a problem holds that a method could overwrite: arrays, tensors, modules' weights,
    numbers and strings, through dataclasses, dicts, lists and tuples (callables and opaque objects are skipped)."""
    import numpy as np

    torch = sys.modules.get("torch")  # a problem holding tensors was built by code that imported torch
    digest, seen, alive = hashlib.sha256(), set(), []

    def walk(item: Any, depth: int = 0) -> None:
        if isinstance(item, (int, float, str, bool, bytes, type(None))):
            digest.update(repr(item).encode())
            return
        if depth > 8 or id(item) in seen:  # shared or cyclic parts are hashed once
            return
        seen.add(id(item))
        alive.append(item)  # a freed temporary's id must not come back
        if isinstance(item, np.ndarray):
            raw = repr(item.tolist()).encode() if item.dtype == object else np.ascontiguousarray(item).tobytes()
            digest.update(raw)
        elif torch is not None and isinstance(item, torch.Tensor):
            digest.update(item.detach().to("cpu", torch.float64).numpy().tobytes())
        elif torch is not None and isinstance(item, torch.nn.Module):
            for name, tensor in item.state_dict().items():
                digest.update(name.encode())
                walk(tensor, depth + 1)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            for f in dataclasses.fields(item):
                digest.update(f.name.encode())
                walk(getattr(item, f.name), depth + 1)
        elif isinstance(item, dict):
            for key in sorted(item, key=repr):
                digest.update(repr(key).encode())
                walk(item[key], depth + 1)
        elif isinstance(item, (list, tuple)):
            for element in item:
                walk(element, depth + 1)
    walk(value)
    return digest.hexdigest()
