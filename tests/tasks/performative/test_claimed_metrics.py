"""performative: the claimed gaps are computed by score from the iterates against the problem, and the rate curve's
x-axis is the samples the method drew, counted by the task (issue 23).

final_gap is ‖θ_T − θ_PS‖² of the returned last iterate; shifted_modulus is the instance's. limit_rel_error compares
the gap with the bias theory predicts at θ_∞(c), for the clip threshold c the PerformativeResult declares
(`declared`, under its Config field `c`): bench.execute checks the declaration against the cell's config
(bench.observe.check_declared), so a misdeclared threshold is a Misreport and the run is not scored. The rate
claim's curve `gap` reads the record of the sampler the problem handed the method (`PerformativeProblem.sampler()`):
every gradient drawn from D(θ) is counted there, and each recorded iterate is stamped with the count, so the curve's
x is the samples drawn, observed; a PerformativeResult whose copy of the steps differs, iterates no sampler
recorded, and draws on a second sampler are refused (Misreport).
"""

import dataclasses

import numpy as np
import pytest

from bench.configs import build_config
from bench.context import RunContext, log_spaced_steps
from bench.observe import Misreport, check_declared, observing
from methods.performative import pcsgd
from tasks.performative import PerformativeResult, trace
from tasks.performative.performative import SMALLEST, Config, build
from tests.tasks._claimed import (
    OBSERVED,
    OUTPUT,
    PROBLEM,
    REGISTRY,
    assert_unmoved,
    claimed_metrics,
    liar_runner,
    lie,
    pairs,
    solved,
)

FAMILY = "performative"
HOW = {"final_gap": OUTPUT, "shifted_modulus": PROBLEM, "limit_rel_error": OUTPUT, "curve:gap": OBSERVED}
MISDECLARED = {"declared": lambda d: {"c": 10.0 * d["c"]} if d else {"c": 1.0}}
SELF_REPORTED = {**MISDECLARED, "steps": lambda s: 2 * s}


def smoke_config(method: str):
    m = REGISTRY.method(method)
    return build_config(m.Config, dict(m.spec.smoke), method)


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_other_claimed_metric(method, task):
    # limit_rel_error reads the declared c: rewriting it moves that metric in score, and the harness refuses it
    # (test_a_misdeclared_clip_threshold_is_refused)
    assert_unmoved(FAMILY, method, task, SELF_REPORTED, reported=("limit_rel_error",))


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_a_misdeclared_clip_threshold_is_refused(method, task):
    problem, result = solved(method, task)
    config = smoke_config(method)
    check_declared(result, config)                                   # the honest declaration is the config's
    assert result.clip_threshold == getattr(config, "c", None)       # clipped variants: c; SGD, DiceSGD: unbiased
    with pytest.raises(Misreport, match="declares c="):
        check_declared(lie(result, MISDECLARED), config)


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_the_curve_is_stamped_with_the_samples_the_method_drew(method, task):
    problem, result = solved(method, task)
    T = smoke_config(method).T
    (sampler,) = problem.meter.issued
    assert sampler.samples == T                                      # one gradient per step
    curve = trace(problem, result)["gap"]
    assert [s for s, _ in curve] == result.steps.tolist() == log_spaced_steps(T).tolist()
    assert [g for _, g in curve] == np.sum((result.iterates - problem.theta_ps) ** 2, axis=1).tolist()
    with pytest.raises(Misreport, match="stamped them at"):
        trace(problem, lie(result, {"steps": lambda s: 2 * s}))


@pytest.fixture()
def problem():
    return build(Config(**SMALLEST), RunContext(seed=0).for_task())


def test_iterates_no_sampler_recorded_are_refused(problem):
    with observing(problem):
        result = pcsgd.solve(problem, pcsgd.Config(T=300), RunContext(seed=0))
    made_up = dataclasses.replace(result, iterates=result.iterates * 0.5)
    with pytest.raises(Misreport, match="not the record of any of the 1 sampler"):
        trace(problem, made_up)


def test_samples_drawn_on_another_sampler_are_refused(problem):
    with observing(problem):
        result = pcsgd.solve(problem, pcsgd.Config(T=300), RunContext(seed=0))
        problem.sampler().gradient(problem.theta0, 0)              # a draw the curve's x-axis would not count
    with pytest.raises(Misreport, match="drew 1 samples on other samplers"):
        trace(problem, result)


def test_every_draw_counts_on_the_curve(problem):
    """A loop that draws two gradients per step, recording every step: its curve runs at 2, 4, 6, whatever steps
    its PerformativeResult states."""
    with observing(problem):
        sampler, theta = problem.sampler(), problem.theta0.copy()
        for t in range(3):
            theta = theta - 0.1 * (sampler.gradient(theta, t) + sampler.gradient(theta, t + 1))
            sampler.record(theta)
    steps, iterates = sampler.record_arrays()
    assert trace(problem, PerformativeResult(theta, steps, iterates))["gap"][-1][0] == 6
    assert [s for s, _ in trace(problem, PerformativeResult(theta, steps, iterates))["gap"]] == [2, 4, 6]
    with pytest.raises(Misreport):
        trace(problem, PerformativeResult(theta, np.array([1, 2, 3]), iterates))


def test_the_harness_refuses_a_lying_method_and_scores_an_honest_one():
    """End to end through bench.execute: the liar (tests/tasks/performative/_liar.py) fails with the Misreport,
    whether it misdeclares its clip threshold or misstates its steps; with nothing misstated it is PCSGD."""
    run = liar_runner(FAMILY, "performative", SMALLEST, "tests.tasks.performative._liar", "pcsgd")
    misdeclared = run("liar")                                                            # refused before score
    assert misdeclared.status == "failed" and "Misreport: the method declares c=10.0" in misdeclared.error
    assert misdeclared.metrics == {}
    misstepped = run("liar", {"declare_factor": 1.0, "steps_factor": 2})                 # refused by trace
    assert misstepped.status == "failed" and "the sampler stamped them at" in misstepped.error
    honest = run("liar", {"declare_factor": 1.0})
    same = run("pcsgd", {"T": 500})
    assert honest.status == same.status == "done" and "limit_rel_error" in honest.metrics
    assert honest.metrics == same.metrics and honest.curves == same.curves
