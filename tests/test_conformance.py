"""Every compatible registered (method, task) pair runs on the task's smallest instance.

A method or task enters this suite the moment its file exists. A task declares its smallest instance as
`@task(..., smallest={config overrides})`, a method a short run as `@method(..., smoke={config overrides})`;
without them the defaults run.
"""

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
