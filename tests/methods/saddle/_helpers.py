"""Shared helpers of the saddle method tests: build an instance, run a method, score it."""

import numpy as np

from bench.context import RunContext
from tasks.saddle import saddle_bilinear, saddle_constrained, saddle_coupling_curvature, saddle_sc_sc, score

TASKS = {
    "sc_sc": saddle_sc_sc,
    "constrained": saddle_constrained,
    "bilinear": saddle_bilinear,
    "coupling_curvature": saddle_coupling_curvature,
}


def make(regime: str, seed: int = 0, **overrides):
    module = TASKS[regime]
    return module.build(module.Config(**overrides), RunContext(seed=seed).for_task())


def run(method_module, problem, **config):
    result = method_module.solve(problem, method_module.Config(**config), RunContext(seed=0))
    return result, score(problem, result)


def mean_metric(method_module, regime, metric, seeds=range(3), config=None, **overrides):
    values = [run(method_module, make(regime, s, **overrides), **(config or {}))[1][metric] for s in seeds]
    return float(np.mean(values))


def loglog_slope(xs, ys):
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
