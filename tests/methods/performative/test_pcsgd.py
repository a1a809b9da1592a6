"""PCSGD converges to the clipped fixed point θ_∞(c), not to θ_PS (the paper's Theorems 1-2; our checks in
docs/papers/clipped-sgd-performative.md)."""

from dataclasses import replace

import numpy as np
import pytest

from bench.context import RunContext, log_spaced_steps
from methods.performative import _common, pcsgd
from tasks.performative import performative as quadratic
from tasks.performative import performative_strategic as strategic
from tasks.performative import score


def make(**overrides):
    return quadratic.build(quadratic.Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("beta", [0.01, 0.05])
def test_final_iterate_sits_at_the_bisection_fixed_point(beta):
    problem = make(beta=beta)
    result = pcsgd.solve(problem, pcsgd.Config(), RunContext(seed=0))
    scores = score(problem, result)
    assert result.clip_threshold == 1.0
    # within 5 % (relative, on the squared gap) of ‖θ_∞ − θ_PS‖² (3.53 / 11.44); measured 0.1 %
    assert scores["limit_rel_error"] < 0.05
    assert abs(result.theta[0] - problem.clipped_fixed_point(1.0)[0]) < 0.01


def test_bias_grows_with_beta_like_one_over_shifted_modulus_squared():
    gaps = {beta: score(p, pcsgd.solve(p, pcsgd.Config(), RunContext(seed=1)))["final_gap"]
            for beta in (0.01, 0.05) for p in [make(beta=beta)]}
    # ((1 − 0.1)/(1 − 0.5))² = 3.24, the plateau ratio of the paper's plot
    assert gaps[0.05] / gaps[0.01] == pytest.approx(3.24, rel=0.05)


def test_no_bias_when_c_is_at_least_the_gradient_bound():
    problem = make()
    result = pcsgd.solve(problem, pcsgd.Config(c=problem.gradient_bound), RunContext(seed=0))
    assert result.clip_threshold == problem.gradient_bound
    assert score(problem, result)["final_gap"] < 1e-2


def test_scalar_fast_path_follows_the_array_path_exactly():
    problem = make(beta=0.05)
    config = pcsgd.Config(T=3000)
    fast = pcsgd.solve(problem, config, RunContext(seed=4))
    slow = pcsgd.solve(replace(problem, scalar_gradient=None), config, RunContext(seed=4))
    np.testing.assert_allclose(fast.iterates, slow.iterates, rtol=1e-12, atol=1e-12)


def test_records_iterates_on_the_log_spaced_grid():
    problem = make()
    result = pcsgd.solve(problem, pcsgd.Config(T=5000), RunContext(seed=0))
    np.testing.assert_array_equal(result.steps, log_spaced_steps(5000))
    assert result.iterates.shape == (len(result.steps), 1)
    assert result.steps[-1] == 5000 and result.iterates[-1, 0] == result.theta[0]
    assert np.all(np.abs(result.iterates) <= problem.radius * (1 + 1e-12))


def test_dp_sigma_against_a_hand_computation():
    # c·sqrt(T log(1/δ))/(m ε) with c = 1, T = 1e5, δ = 1e-5, m = 1000, ε = 0.1:
    # log(1e5) = 11.5129, T·log = 1 151 292.5, sqrt = 1072.983, /(1000·0.1) = 10.72983
    assert _common.dp_sigma(1.0, 100_000, 1000, 0.1, 1e-5) == pytest.approx(10.72983, rel=1e-6)
    assert _common.dp_sigma(0.5, 100_000, 1000, 0.1, 1e-5) == pytest.approx(5.364915, rel=1e-6)


def test_epsilon_calibrates_the_noise_with_sensitivity_c():
    problem = make()
    private = pcsgd.Config(T=2000, c=0.5, epsilon=0.3, delta=1e-4)
    sigma = _common.dp_sigma(0.5, 2000, problem.num_samples, 0.3, 1e-4)
    explicit = pcsgd.Config(T=2000, c=0.5, sigma=sigma)
    a = pcsgd.solve(problem, private, RunContext(seed=2)).theta
    b = pcsgd.solve(problem, explicit, RunContext(seed=2)).theta
    assert a[0] == b[0]


def test_strategic_task_lands_at_the_clipped_fixed_point():
    problem = strategic.build(strategic.Config(), RunContext(seed=0).for_task())
    scores = score(problem, pcsgd.solve(problem, pcsgd.Config(T=20_000), RunContext(seed=0)))
    assert scores["predicted_gap"] > 0.05                       # the bias ‖θ_∞ − θ_PS‖² ≈ 0.077
    assert scores["limit_gap"] < 0.1 * scores["predicted_gap"]  # measured 0.0011
    assert scores["limit_rel_error"] < 0.1


@pytest.mark.parametrize("field, value", [("c", 0.0), ("T", 0), ("sigma", -1.0), ("epsilon", 0.0), ("delta", 1.0)])
def test_bad_config_values_are_rejected_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        pcsgd.Config(**{field: value})
