"""Scalar quadratic task: ground truth against closed forms (the paper's quadratic experiment, from its poster and
project page; our constants in docs/papers/clipped-sgd-performative.md)."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.performative import PerformativeResult, score
from tasks.performative.performative import Config, build


def make(**overrides):
    return build(Config(**overrides), RunContext(seed=0).for_task())


def clipped_mean_by_points(problem, theta, c):
    """(1/m) Σ_i clip_c(∇ℓ(θ; z_i(θ))) computed point by point from the sampling oracle."""
    g = np.array([problem.sample_gradient(np.array([theta]), i)[0] for i in range(problem.num_samples)])
    return float(np.mean(g if c is None else np.clip(g, -c, c)))


def test_data_are_fixed_by_world_seed_not_run_seed():
    a = build(Config(), RunContext(seed=0).for_task())
    b = build(Config(), RunContext(seed=7).for_task())
    assert a.theta_ps[0] == b.theta_ps[0]
    assert make(world_seed=1).theta_ps[0] != a.theta_ps[0]


def test_theta_ps_closed_form_is_the_root_of_the_unclipped_mean_field():
    problem = make()
    # p̄ = 0.193 for world_seed 0 → θ_PS = −10·0.193/0.9 (the spec's measured −2.144)
    assert problem.theta_ps[0] == pytest.approx(-10 * 0.193 / 0.9, abs=1e-12)
    assert abs(problem.mean_gradient(problem.theta_ps, None)[0]) < 1e-12
    assert abs(clipped_mean_by_points(problem, problem.theta_ps[0], None)) < 1e-12
    # and it is the only root: the field is increasing with slope 1 − aβ
    for delta in (-1.0, 1.0):
        value = problem.mean_gradient(problem.theta_ps + delta, None)[0]
        assert value == pytest.approx(0.9 * delta, abs=1e-12)


@pytest.mark.parametrize("theta", [-6.0, -2.144, -0.266, 0.0, 0.5, 3.0])
@pytest.mark.parametrize("c", [None, 0.5, 1.0, 5.0])
def test_two_point_mean_field_equals_the_average_over_the_data(theta, c):
    problem = make(beta=0.03)
    assert problem.mean_gradient(np.array([theta]), c)[0] == pytest.approx(
        clipped_mean_by_points(problem, theta, c), abs=1e-12)


@pytest.mark.parametrize("beta, expected", [(0.01, -0.266), (0.05, -0.478)])
def test_clipped_fixed_point_by_bisection(beta, expected):
    problem = make(beta=beta)
    theta_inf = problem.clipped_fixed_point(1.0)[0]
    assert theta_inf == pytest.approx(expected, abs=1e-3)  # the spec's measured values
    # regime: the Z̃=1 term is clipped at +1, the Z̃=0 term is not → closed form −p̄/((1−aβ)(1−p̄))
    assert theta_inf == pytest.approx(-0.193 / ((1 - 10 * beta) * (1 - 0.193)), rel=1e-12)
    assert abs(problem.mean_gradient(np.array([theta_inf]), 1.0)[0]) < 1e-13
    # a root, not a flat stretch: the field changes sign right around it
    assert problem.mean_gradient(np.array([theta_inf - 1e-9]), 1.0)[0] < 0
    assert problem.mean_gradient(np.array([theta_inf + 1e-9]), 1.0)[0] > 0


def test_no_bias_when_c_exceeds_every_gradient():
    problem = make()
    c = problem.gradient_bound  # c ≥ G: clipping never binds on X
    assert problem.clipped_fixed_point(c)[0] == pytest.approx(problem.theta_ps[0], abs=1e-12)


def test_bias_amplification_is_exactly_one_over_shifted_modulus_squared():
    # (θ_∞ − θ_PS)(1 − aβ) = p̄(ab − 1/(1 − p̄)) does not depend on β while the clip regimes stay
    # the same (Z̃=1 term clipped, Z̃=0 term not), i.e. bias ∝ 1/μ̃² (Theorem 2's lower bound).
    scaled = []
    for beta in (0.0, 0.01, 0.02, 0.03, 0.05, 0.07):
        problem = make(beta=beta)
        gap = (problem.clipped_fixed_point(1.0)[0] - problem.theta_ps[0]) ** 2
        scaled.append(gap * (1 - 10 * beta) ** 2)
    assert np.ptp(scaled) / np.mean(scaled) < 0.01
    assert scaled[0] == pytest.approx((0.193 * (10 - 1 / (1 - 0.193))) ** 2, rel=1e-9)


def test_constants_and_gradient_bound():
    problem = make(beta=0.05)
    assert (problem.dim, problem.num_samples, problem.mu, problem.lipschitz) == (1, 1000, 1.0, 10.0)
    assert problem.shifted_modulus == pytest.approx(0.5)
    assert problem.gradient_bound == pytest.approx(0.5 * 20 + 10)  # (1 − aβ)R + ab
    grid = np.linspace(-problem.radius, problem.radius, 401)
    worst = max(abs(problem.sample_gradient(np.array([t]), i)[0]) for t in grid for i in range(50))
    assert worst == pytest.approx(problem.gradient_bound)


def test_scalar_fast_path_matches_the_array_oracle():
    problem = make(beta=0.03)
    for i in range(0, 1000, 37):
        for theta in (-3.0, 0.25, 7.0):
            assert problem.scalar_gradient(theta, i) == problem.sample_gradient(np.array([theta]), i)[0]


@pytest.mark.parametrize("beta", [0.1, 0.2])
def test_rejects_beta_without_a_contracting_shift(beta):
    with pytest.raises(ValueError, match=r"1/\|a\|"):
        make(beta=beta)


def test_score_of_the_exact_answers():
    problem = make()
    steps = np.array([1])
    exact = score(problem, PerformativeResult(problem.theta_ps, steps, problem.theta_ps[None]))
    assert exact["final_gap"] == 0 and exact["stationarity"] < 1e-24
    theta_inf = problem.clipped_fixed_point(1.0)
    biased = score(problem, PerformativeResult(theta_inf, steps, theta_inf[None], declared={"c": 1.0}))
    assert biased["limit_gap"] == 0 and biased["limit_rel_error"] == 0
    assert biased["final_gap"] == pytest.approx(3.530, abs=1e-3)



def test_a_declared_infinite_threshold_is_unbiased():
    """c = ∞ never clips: the limit is θ_PS, as for a result that declares nothing."""
    problem = make()
    theta = problem.theta_ps + 0.5
    nothing, infinite = (score(problem, PerformativeResult(theta, np.array([1]), theta[None], declared=d))
                         for d in ({}, {"c": float("inf")}))
    assert nothing == infinite and nothing["predicted_gap"] == 0 and "limit_rel_error" not in nothing
