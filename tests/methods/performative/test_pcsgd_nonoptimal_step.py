"""PCSGD with the μ-sized constant step ("Non-Opt"): its transient, predicted exactly."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.performative import _common, pcsgd_nonoptimal_step, pcsgd_optimal_step
from tasks.performative import performative as quadratic


def make(**overrides):
    return quadratic.build(quadratic.Config(**overrides), RunContext(seed=0).for_task())


def test_mean_final_iterate_matches_the_linear_transient():
    # a = 1, b = 2, β = 0.9, c = 1: between θ_0 = 5 and θ_∞ the Z̃=1 gradient 0.1θ + 2 is clipped
    # at +1 and the Z̃=0 one (0.1θ) is not, so the mean clipped field is exactly
    # p̄ + (1 − p̄)·0.1·θ = κ(θ − θ_∞), κ = 0.1(1 − p̄). The mean iterate therefore obeys
    # E θ_T − θ_∞ = (1 − γκ)^T (θ_0 − θ_∞) with the step γ = log(μ²TD²/c1)/(μT), μ = 1.
    problem = make(a=1.0, b=2.0, beta=0.9)
    T, p_bar = 100_000, 0.193
    gamma = _common.optimal_constant_step(problem.mu, T, 40.0, 1.0 + 0.1**2)
    assert gamma == pytest.approx(np.log(1e5 * 1600 / 1.01) / 1e5, rel=1e-12)  # 1.888e-4
    theta_inf = problem.clipped_fixed_point(1.0)[0]
    predicted = theta_inf + (1 - gamma * 0.1 * (1 - p_bar)) ** T * (5.0 - theta_inf)  # ≈ −0.78
    finals = [pcsgd_nonoptimal_step.solve(problem, pcsgd_nonoptimal_step.Config(), RunContext(seed=s)).theta[0]
              for s in range(4)]
    assert np.mean(finals) == pytest.approx(predicted, abs=0.05)  # per-seed std ≈ 0.015
    assert predicted - theta_inf > 1.0                             # far from converged


def test_equals_the_optimal_step_when_there_is_no_shift():
    problem = make(beta=0.0)  # μ̃ = μ: the two rules coincide
    a = pcsgd_nonoptimal_step.solve(problem, pcsgd_nonoptimal_step.Config(T=5000), RunContext(seed=0))
    b = pcsgd_optimal_step.solve(problem, pcsgd_optimal_step.Config(T=5000), RunContext(seed=0))
    np.testing.assert_array_equal(a.iterates, b.iterates)
    assert a.clip_threshold == b.clip_threshold == 1.0
