"""Strategic-classification task: RRM fixed point, measured moduli, clipped fixed point."""

import numpy as np
import pytest
import scipy.optimize

from bench.context import RunContext
from tasks.performative.performative_strategic import Config, build


@pytest.fixture(scope="module")
def problem():
    return build(Config(), RunContext(seed=0).for_task())


def finite_difference_jacobian(field, theta, h=1e-6):
    return np.array([(field(theta + h * e) - field(theta - h * e)) / (2 * h) for e in np.eye(len(theta))]).T


def test_theta_ps_is_performatively_stable(problem):
    # the RRM fixed point is stationary for its own distribution: E_{D(θ_PS)} ∇ℓ(θ_PS; Z) = 0
    assert np.linalg.norm(problem.mean_gradient(problem.theta_ps, None)) < 1e-10  # measured 1e-12


def test_sample_gradients_average_to_the_mean_field(problem):
    rng = np.random.default_rng(1)
    for _ in range(3):
        theta = rng.standard_normal(problem.dim)
        per_point = np.array([problem.sample_gradient(theta, i) for i in range(problem.num_samples)])
        assert np.allclose(per_point.mean(axis=0), problem.mean_gradient(theta, None), atol=1e-12)
        norms = np.linalg.norm(per_point, axis=1, keepdims=True)
        clipped = per_point * np.minimum(1.0, 0.7 / norms)
        assert np.allclose(clipped.mean(axis=0), problem.mean_gradient(theta, 0.7), atol=1e-12)


def test_performativity_moves_the_stable_point(problem):
    static = build(Config(beta=0.0), RunContext(seed=0).for_task())
    # β = 0: RRM is one ordinary ridge-logistic fit; compare with an independent root finder
    direct = scipy.optimize.root(lambda t: static.mean_gradient(t, None), np.zeros(10), tol=1e-13).x
    assert np.allclose(static.theta_ps, direct, atol=1e-10)
    assert np.sum((problem.theta_ps - static.theta_ps) ** 2) > 0.02  # measured 0.029 for the defaults


def test_measured_shifted_modulus_matches_finite_differences(problem):
    jac = finite_difference_jacobian(lambda t: problem.mean_gradient(t, None), problem.theta_ps)
    assert problem.shifted_modulus == pytest.approx(np.linalg.eigvalsh(0.5 * (jac + jac.T))[0], rel=1e-5)
    # μ ≥ λ (the ridge) and the shift weakens the contraction of this instance: 0 < μ̃ < μ
    assert problem.mu >= 0.1
    assert 0 < problem.shifted_modulus < problem.mu
    static = build(Config(beta=0.0), RunContext(seed=0).for_task())
    assert static.shifted_modulus == pytest.approx(static.mu, rel=1e-12)  # no shift: J = Hessian


def test_clipping_binds_and_creates_a_measurable_bias(problem):
    grads = np.array([problem.sample_gradient(problem.theta_ps, i) for i in range(problem.num_samples)])
    assert np.mean(np.linalg.norm(grads, axis=1) > 1.0) > 0.5  # most per-sample gradients get clipped
    theta_inf = problem.clipped_fixed_point(1.0)
    assert np.linalg.norm(problem.mean_gradient(theta_inf, 1.0)) < 1e-9
    assert np.sum((theta_inf - problem.theta_ps) ** 2) > 0.05  # measured 0.077
    assert np.linalg.norm(problem.mean_gradient(theta_inf, None)) > 1e-2  # θ_∞ is not stable
    # no bias when c exceeds every gradient on X
    assert np.allclose(problem.clipped_fixed_point(problem.gradient_bound), problem.theta_ps, atol=1e-9)


def test_ball_contains_the_targets_and_bounds_the_gradients(problem):
    assert np.linalg.norm(problem.theta_ps) < problem.radius / 4
    assert np.linalg.norm(problem.clipped_fixed_point(1.0)) < problem.radius / 4
    rng = np.random.default_rng(2)
    for _ in range(20):
        theta = rng.standard_normal(problem.dim)
        theta *= problem.radius / np.linalg.norm(theta)
        worst = max(np.linalg.norm(problem.sample_gradient(theta, i)) for i in range(0, problem.num_samples, 10))
        assert worst <= problem.gradient_bound


def test_rrm_that_cannot_contract_is_reported():
    # β = 10 still converges (slowly); at β = 20 RRM oscillates instead of contracting
    with pytest.raises(ValueError, match="beta=20.0, lam=0.1"):
        build(Config(beta=20.0), RunContext(seed=0).for_task())
