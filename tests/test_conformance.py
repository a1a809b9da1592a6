"""Every compatible registered (method, task) pair runs on the task's smallest instance.

A method or task enters this suite the moment its file exists. Each family may name its
smallest instance (task config overrides) and a short horizon for its methods below.
"""

import math

import pytest

from bench.execute import execute
from bench.registry import Registry
from runners.grid import Entry, make_cell

REGISTRY = Registry.discover(plugins=False)
SMALLEST_TASK = {"performative": {"m": 50}, "performative_strategic": {"dim": 3, "strategic_dims": 1, "m": 100}}
SHORT_METHOD = {"performative": {"T": 500}}
PAIRS = [(m, t) for m in REGISTRY.names("method") for t in REGISTRY.names("task")
         if REGISTRY.incompatibility(m, t) is None]


def _overrides(registry, kind, name, table):
    entry = registry.method(name) if kind == "method" else registry.task(name)
    wanted = table.get(name, table.get(entry.family, {}))
    fields = entry.Config.__dataclass_fields__
    return {k: v for k, v in wanted.items() if k in fields}


def test_every_family_has_a_pair():
    families = {REGISTRY.listing("task", t).family for t in REGISTRY.names("task")}
    assert families <= {REGISTRY.listing("method", m).family for m, _ in PAIRS}


@pytest.mark.parametrize("method,task", PAIRS)
def test_pair_runs_and_scores_every_metric(method, task):
    cell = make_cell(REGISTRY, Entry(method, _overrides(REGISTRY, "method", method, SHORT_METHOD)),
                     Entry(task, _overrides(REGISTRY, "task", task, SMALLEST_TASK)), seed=0)
    record = execute(cell, REGISTRY)
    assert record.status in ("done", "skipped"), record.error
    if record.status == "skipped":
        assert record.error  # a skip always says why
        return
    family = REGISTRY.family(REGISTRY.task(task).family)
    assert family.primary_metric in record.metrics
    assert set(record.metrics) <= set(family.metrics)  # nothing undeclared reaches the store
    assert all(math.isfinite(v) for v in record.metrics.values())
