"""Every compatible registered (method, task) pair runs on the task's smallest instance.

A method or task enters this suite the moment its file exists. A task module may declare its
smallest instance as `SMALLEST = {config overrides}`, a method module a short run as
`SMOKE = {config overrides}`; without them the defaults run.
"""

import importlib
import math

import pytest

from bench.execute import execute
from bench.registry import Registry
from runners.grid import Entry, make_cell

REGISTRY = Registry.discover(plugins=False)
PAIRS = [(m, t) for m in REGISTRY.names("method") for t in REGISTRY.names("task")
         if REGISTRY.incompatibility(m, t) is None]


def _knob(kind: str, name: str, attr: str) -> dict:
    return dict(getattr(importlib.import_module(REGISTRY.listing(kind, name).module), attr, {}))


def test_every_task_family_has_a_method():
    families = {REGISTRY.listing("task", t).family for t in REGISTRY.names("task")}
    assert families <= {REGISTRY.listing("method", m).family for m, _ in PAIRS}


@pytest.mark.parametrize("method,task", PAIRS)
def test_pair_runs_and_scores_its_metrics(method, task):
    cell = make_cell(REGISTRY, Entry(method, _knob("method", method, "SMOKE")),
                     Entry(task, _knob("task", task, "SMALLEST")), seed=0)
    record = execute(cell, REGISTRY)
    assert record.status in ("done", "skipped"), record.error
    if record.status == "skipped":
        assert record.error  # a skip always says why
        return
    family = REGISTRY.family(REGISTRY.task(task).family)
    assert family.primary_metric in record.metrics
    assert all(family.metric(name) is not None for name in record.metrics)  # nothing undeclared reaches the store
    assert all(math.isfinite(v) for v in record.metrics.values())
