"""The saddle counts are the oracle's record, not the method's word (issue 23).

Every oracle call is counted by the task's `Oracle` where it happens, and the problem keeps the oracles it hands
out (`problem.meter`); `score` reads the counts from the record of that oracle, so a SaddleResult whose history was
edited, made up, or whose oracle calls went partly through another oracle is refused (Misreport). Every registered
saddle method's history is its oracle's record, so its metrics are those of the record.
"""

import dataclasses

import numpy as np
import pytest

from bench.context import RunContext
from bench.observe import Misreport, observing
from bench.registry import Registry
from methods.saddle import extragradient
from tasks.saddle import SaddleResult, observed_history, saddle_sc_sc, score, score_record, trace, trace_record
from tests.tasks._claimed import OBSERVED, PROBLEM, claimed_metrics

REGISTRY = Registry.discover(plugins=False)
METHODS = [m for m in REGISTRY.names("method") if REGISTRY.listing("method", m).family == "saddle"]
CLAIMED = ("grad_f_calls", "grad_g_calls", "matvec_calls", "log10_slope_grad_f", "r2_tail_grad_f", "reached")


def _problem(seed: int = 0):
    return saddle_sc_sc.build(saddle_sc_sc.Config(**saddle_sc_sc.SMALLEST), RunContext(seed=seed).for_task())


def _honest(problem):
    with observing(problem):
        return extragradient.solve(problem, extragradient.Config(), RunContext(seed=0))


@pytest.mark.parametrize("name", METHODS)
def test_every_methods_history_is_its_oracles_record(name):
    problem, method = _problem(), REGISTRY.method(name)
    config = method.Config()
    if method.skip(problem, config):
        pytest.skip("not for this instance")
    with observing(problem):
        result = method.solve(problem, config, RunContext(seed=0))
    (oracle,) = problem.meter.issued
    np.testing.assert_array_equal(observed_history(problem, result), np.array(oracle._rows, float))
    scores = score(problem, result)
    assert scores == score_record(problem, result.x, result.y, result.history)
    if scores["reached"]:                                      # the counts at the first record below the target
        assert scores["grad_f_calls"] + scores["grad_g_calls"] + scores["matvec_calls"] <= oracle.total_calls


@pytest.mark.parametrize("column", [0, 1, 2, 3])
def test_an_edited_count_is_refused(column):
    problem = _problem()
    honest = _honest(problem)
    history = honest.history.copy()
    history[1:, column] = np.floor(history[1:, column] / 2)   # half the calls, the errors untouched
    with pytest.raises(Misreport, match="not the record"):
        score(problem, dataclasses.replace(honest, history=history))
    with pytest.raises(Misreport):
        trace(problem, dataclasses.replace(honest, history=history))
    assert all(score(problem, honest)[m] == score_record(problem, honest.x, honest.y, honest.history)[m]
               for m in CLAIMED)


def test_a_made_up_history_is_refused():
    problem = _problem()
    rows = [(k, k, 2 * k, k, 10 ** (-k / 10)) for k in range(0, 121)]  # a perfect linear rate, no oracle behind it
    made_up = SaddleResult(problem.x_star.copy(), problem.y_star.copy(), np.array(rows, float), "target")
    assert score_record(problem, made_up.x, made_up.y, made_up.history)["reached"] == 1.0
    with pytest.raises(Misreport, match="not the record of any"):
        score(problem, made_up)


def test_calls_spent_on_another_oracle_are_refused():
    """Work done through a second oracle (a warm start, a line search) must show in the record the result carries."""
    problem = _problem()
    with observing(problem):
        side = problem.oracle()
        for _ in range(50):
            side.grad_f(problem.x0)
        result = extragradient.solve(problem, extragradient.Config(), RunContext(seed=0))
    with pytest.raises(Misreport, match="50 oracle calls on other oracles"):
        score(problem, result)


def test_the_curves_are_the_oracles_record():
    problem = _problem()
    honest = _honest(problem)
    assert trace(problem, honest) == trace_record(np.array(problem.meter.issued[0]._rows, float))


HOW = {**{m: OBSERVED for m in CLAIMED}, "matvec_calls": OBSERVED, "coupling_condition": PROBLEM, "kappa_x": PROBLEM,
       "kappa_y": PROBLEM, "kappa_xy": PROBLEM}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics("saddle") <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"
