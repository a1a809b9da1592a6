"""Every compatible registered (method, task) pair runs on the task's smallest instance.

A method or task enters this suite the moment its file exists. As scikit-learn's check_estimator does for an
estimator, it also checks that the same seed twice gives the same metrics (timings aside), that solving leaves the
problem as the task built it, and that every Config field survives a `--set` round trip. A task declares its
smallest instance as `@task(..., smallest={config overrides})`, a method a short run as `@method(...,
smoke={config overrides})`; without them the defaults run.
"""

import dataclasses
import importlib
import math

import pytest

from bench.execute import execute
from bench.registry import Registry
from bench.cells import Entry, make_cell

REGISTRY = Registry.discover(plugins=False)
PAIRS = [(m, t) for m in REGISTRY.names("method") for t in REGISTRY.names("task")
         if REGISTRY.incompatibility(m, t) is None]


def _knob(kind: str, name: str) -> dict:
    return dict(REGISTRY.method(name).spec.smoke if kind == "method" else REGISTRY.task(name).spec.smallest)


@pytest.mark.parametrize("kind, attr", [("method", "SMOKE"), ("task", "SMALLEST")])
def test_the_short_settings_are_declared_not_left_in_the_module(kind, attr):
    """A module-level SMOKE / SMALLEST the decorator does not carry would be silently ignored by this suite."""
    for name in REGISTRY.names(kind):
        module = importlib.import_module(REGISTRY.listing(kind, name).module)
        if hasattr(module, attr):
            assert _knob(kind, name) == dict(getattr(module, attr)), f"{name}: pass {attr} to @{kind}(...)"


def test_every_task_family_has_a_method():
    families = {REGISTRY.listing("task", t).family for t in REGISTRY.names("task")}
    assert families <= {REGISTRY.listing("method", m).family for m, _ in PAIRS}


@pytest.mark.parametrize("method,task", PAIRS)
def test_pair_runs_and_scores_its_metrics(method, task):
    cell = make_cell(REGISTRY, Entry(method, _knob("method", method)),
                     Entry(task, _knob("task", task)), seed=0)
    record = execute(cell, REGISTRY)
    assert record.status in ("done", "skipped"), record.error
    if record.status == "skipped":
        assert record.error  # a skip always says why
        return
    family = REGISTRY.family(REGISTRY.task(task).family)
    assert family.primary_metric in record.metrics
    assert all(family.metric(name) is not None for name in record.metrics)  # nothing undeclared reaches the store
    assert all(math.isfinite(v) for v in record.metrics.values())
    again = execute(cell, REGISTRY)                                       # caches built by the first run are read now
    timed = {name for name in record.metrics if family.metric(name).unit in TIMED_UNITS or name == "speedup"}
    assert {k: v for k, v in again.metrics.items() if k not in timed} == \
        {k: v for k, v in record.metrics.items() if k not in timed}, "the same seed gave other metrics"


# metrics of the wall clock: the one thing the same seed may not repeat
TIMED_UNITS = ("s", "tok/s")


def _fingerprint(value) -> str:
    """A hash of everything a problem holds that a method could overwrite: arrays, tensors, modules' weights,
    numbers and strings, through dataclasses, dicts, lists and tuples (callables and opaque objects are skipped)."""
    import hashlib

    import numpy as np
    import torch

    digest, seen, alive = hashlib.sha256(), set(), []

    def walk(item, depth=0):
        if isinstance(item, (int, float, str, bool, bytes, type(None))):
            digest.update(repr(item).encode())
            return
        if depth > 8 or id(item) in seen:                     # shared or cyclic parts are hashed once
            return
        seen.add(id(item))
        alive.append(item)                                    # a freed temporary's id must not come back
        if isinstance(item, np.ndarray):
            raw = repr(item.tolist()).encode() if item.dtype == object else np.ascontiguousarray(item).tobytes()
            digest.update(raw)
        elif isinstance(item, torch.Tensor):
            digest.update(item.detach().to("cpu", torch.float64).numpy().tobytes())
        elif isinstance(item, torch.nn.Module):
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


@pytest.mark.parametrize("method,task", PAIRS)
def test_solving_leaves_the_problem_as_built(method, task):
    from bench.configs import build_config
    from bench.context import RunContext

    m, t = REGISTRY.method(method), REGISTRY.task(task)
    ctx = RunContext(seed=0)
    problem = t.build(build_config(t.Config, _knob("task", task), task), ctx.for_task())
    config = build_config(m.Config, _knob("method", method), method)
    if m.skip(problem, config):
        return
    before = _fingerprint(problem)
    m.solve(problem, config, ctx)
    assert _fingerprint(problem) == before, f"{method} changed the {task} problem it was given"


def _as_text(value) -> str:
    """A value as a user would type it after --set."""
    if isinstance(value, tuple):
        return "[" + ", ".join(_as_text(v) for v in value) + "]" if len(value) != 1 else _as_text(value[0])
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)


@pytest.mark.parametrize("kind", ["method", "task"])
def test_every_config_field_survives_a_set_round_trip(kind):
    from bench.configs import parse_overrides

    for name in REGISTRY.names(kind):
        spec = REGISTRY.method(name) if kind == "method" else REGISTRY.task(name)
        defaults = {f.name: getattr(spec.Config(), f.name) for f in dataclasses.fields(spec.Config)}
        typed = parse_overrides(spec.Config, {k: _as_text(v) for k, v in defaults.items()}, name)
        assert typed == defaults, name


@pytest.mark.parametrize("name", REGISTRY.names("method"))
def test_every_method_declares_its_switched_off_setting_or_why_there_is_none(name):
    """bench/switches.py: `bench reproduce --controls` judges every claim again with the credited method switched off,
    so each method says how (switches that build valid cells, of registered methods) or why it cannot be."""
    from bench.switches import Switch

    declared = REGISTRY.switched_off(name)
    if isinstance(declared, str):
        assert len(declared) > 20, f"{name}: say why no setting removes its mechanism"
        return
    assert declared and all(isinstance(s, Switch) for s in declared)
    task = next(t for m, t in PAIRS if m == name)
    for switch in declared:
        make_cell(REGISTRY, Entry(switch.method, switch.config), Entry(task), 0)  # the Config's own checks
        if switch.method != name:
            assert REGISTRY.listing("method", switch.method).family == REGISTRY.listing("method", name).family
