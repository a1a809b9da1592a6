"""Every compatible registered (method, task) pair runs on the task's smallest instance.

The checks are bench.testing's, the ones `bench check NAME` and a plugin's own tests run: a method or task enters
this suite the moment its file exists. As scikit-learn's check_estimator does for an estimator, they also check that
the same seed twice gives the same metrics (timings aside), that solving leaves the problem as the task built it, and
that every Config field survives a `--set` round trip. Here they run over this repository's registry only (plugins
installed in the environment are theirs to check), one test per check and pair.
"""

import pytest

from bench import testing
from bench.registry import Registry

REGISTRY = Registry.discover(plugins=False)
PAIRS = [(m, t) for m in REGISTRY.names("method") for t in REGISTRY.names("task")
         if REGISTRY.incompatibility(m, t) is None]


@pytest.mark.parametrize("kind", ["method", "task"])
def test_the_short_settings_are_declared_not_left_in_the_module(kind):
    """A module-level SMOKE / SMALLEST the decorator does not carry would be silently ignored by this suite."""
    for name in REGISTRY.names(kind):
        testing.short_settings_declared(REGISTRY, kind, name)


def test_every_task_family_has_a_method():
    families = {REGISTRY.listing("task", t).family for t in REGISTRY.names("task")}
    assert families <= {REGISTRY.listing("method", m).family for m, _ in PAIRS}


@pytest.mark.parametrize("task", REGISTRY.names("task"))
def test_every_family_declares_one_primary_metric_and_a_score(task):
    testing.family_contract(REGISTRY, task)


@pytest.mark.parametrize("method,task", PAIRS)
def test_pair_runs_and_scores_its_metrics(method, task):
    record = testing.scores_declared_metrics(REGISTRY, method, task)
    testing.same_seed_same_metrics(REGISTRY, method, task, record)  # caches built by the first run are read now


@pytest.mark.parametrize("method,task", PAIRS)
def test_solving_leaves_the_problem_as_built(method, task):
    testing.leaves_problem_as_built(REGISTRY, method, task)


@pytest.mark.parametrize("kind", ["method", "task"])
def test_every_config_field_survives_a_set_round_trip(kind):
    for name in REGISTRY.names(kind):
        testing.survives_round_trip(REGISTRY, kind, name)


@pytest.mark.parametrize("name", REGISTRY.names("method"))
def test_every_method_declares_its_switched_off_setting_or_why_there_is_none(name):
    """bench/switches.py: `bench reproduce --controls` judges every claim again with the credited method switched off,
    so each method says how (switches that build valid cells, of registered methods) or why it cannot be."""
    testing.switched_off_declared(REGISTRY, name)


def test_a_mutating_method_and_a_nondeterministic_one_fail_the_checks_that_catch_them(toy_registry):
    """The checks' own mechanism, on the toy family (tests/fixtures/bench_toy): toy_noisy draws from ctx.rng, so the
    same seed repeats; a fingerprint sees one changed element of a problem's array; a rename of a field counts."""
    import dataclasses

    import numpy as np

    problem = {"x": np.zeros(3), "label": "a"}
    before = testing.fingerprint(problem)
    problem["x"][1] = 1e-300
    assert testing.fingerprint(problem) != before
    assert testing.fingerprint({"y": np.zeros(3), "label": "a"}) != testing.fingerprint({"x": np.zeros(3),
                                                                                          "label": "a"})
    record = testing.scores_declared_metrics(toy_registry, "toy_noisy", "toy_target")
    assert testing.same_seed_same_metrics(toy_registry, "toy_noisy", "toy_target", record) == ""
    changed = dataclasses.replace(record, metrics={**record.metrics, "error": -1.0})
    with pytest.raises(testing.CheckFailed, match=r"the same seed gave other metrics: error -1\.0 then "):
        testing.same_seed_same_metrics(toy_registry, "toy_noisy", "toy_target", changed)
