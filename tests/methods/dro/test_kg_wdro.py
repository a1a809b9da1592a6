"""KG-WDRO's reformulations (Theorems 3.3, 3.5, 3.6) against a direct convex solve of the
Wasserstein DRO problem (its strong dual written from the cost, tests/methods/dro/_direct.py),
and the limits the spec lists (§8): δ → ∞ lands in span(Θ), θ → −3θ changes nothing, weak
transfer interpolates between strong transfer (λ → 0) and vanilla WDRO (λ → ∞)."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.dro import kg_wdro_multi, kg_wdro_strong, kg_wdro_weak, wdro
from tasks.dro import DROProblem
from tests.methods.dro import _direct


def make_problem(kind="regression", n=8, d=3, m=1, seed=0, p=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    theta = rng.standard_normal((d, m))
    beta = theta @ np.ones(m) + 0.3 * rng.standard_normal(d)
    eta = x @ beta
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), 1.0, -1.0) if kind == "classification" \
        else eta + 0.5 * rng.standard_normal(n)
    return DROProblem(kind=kind, penalty_norm=p, x_train=x, y_train=y, x_val=x, y_val=y, x_test=x, y_test=y,
                   theta=theta, x_source=(), y_source=(), beta=beta)


def fit(module, problem, **cfg):
    return module.solve(problem, module.Config(**cfg), RunContext(seed=0)).coef


def check_against_direct(problem, coef, direct, beta_atol=2e-4, **kw):
    """β̂ attains the direct problem's optimal value (its worst-case risk evaluated directly) and
    coincides with the direct minimiser (to `beta_atol`: the direct solve's argmin is only as
    accurate as sqrt(gap tolerance / curvature))."""
    x, y = problem.x_train, problem.y_train
    value, beta_direct = direct(x, y, **kw)
    value_at_coef, _ = direct(x, y, beta_fixed=coef, **kw)
    assert value_at_coef == pytest.approx(value, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(coef, beta_direct, atol=beta_atol)
    return value


@pytest.mark.parametrize("p,delta", [(2, 0.3), (1, 0.3), (2, 0.02)])
def test_strong_regression_equals_direct_dro(p, delta):
    problem = make_problem(p=p)
    coef = fit(kg_wdro_strong, problem, delta=delta, p=p)
    value = check_against_direct(problem, coef, _direct.regression_dro, delta=delta,
                                 theta=problem.theta, q=2 if p == 2 else np.inf)
    # Theorem 3.3's value: (sqrt(MSE) + √δ‖β̂ − θκ‖_p)², κ optimal (closed form for p = 2)
    if p == 2:
        th = problem.theta[:, 0]
        gap = np.linalg.norm(coef - th * (th @ coef) / (th @ th))
        mse = np.mean((problem.y_train - problem.x_train @ coef) ** 2)
        assert value == pytest.approx((np.sqrt(mse) + np.sqrt(delta) * gap) ** 2, rel=1e-6)


def test_multi_source_regression_equals_direct_dro():
    problem = make_problem(d=4, m=2, n=10, seed=1, p=1)
    coef = fit(kg_wdro_multi, problem, delta=0.2)
    check_against_direct(problem, coef, _direct.regression_dro, delta=0.2, theta=problem.theta, q=np.inf)


@pytest.mark.parametrize("lam", [0.1, 2.0])
def test_weak_regression_equals_direct_dro_with_weight_one_over_lambda(lam):
    # Theorem 3.5 with Ψ = I − θθᵀ/(‖θ‖² + λ) is the DRO with cost ‖Δ‖² + (1/λ)(θᵀΔ)²
    problem = make_problem(seed=2)
    coef = fit(kg_wdro_weak, problem, delta=0.3, lam=lam)
    check_against_direct(problem, coef, _direct.regression_dro, delta=0.3, theta=problem.theta, q=2,
                         weight=1.0 / lam)


@pytest.mark.parametrize("p", [1, 2])
def test_strong_classification_equals_direct_dro(p):
    problem = make_problem(kind="classification", n=12, seed=3, p=p)
    coef = fit(kg_wdro_strong, problem, delta=0.1, p=p)
    check_against_direct(problem, coef, _direct.classification_dro, delta=0.1, theta=problem.theta,
                         q=2 if p == 2 else np.inf)


def test_large_radius_lands_in_span_of_theta_and_equals_ols_on_the_knowledge_feature():
    problem = make_problem(n=20, d=5, seed=4, p=1)
    th = problem.theta[:, 0]
    z = problem.x_train @ th
    kappa = (z @ problem.y_train) / (z @ z)         # OLS of y on the single feature θᵀx
    for p in (1, 2):
        np.testing.assert_allclose(fit(kg_wdro_strong, problem, delta=1e4, p=p), kappa * th, atol=1e-6)


def test_sign_and_scale_of_theta_do_not_matter():
    problem = make_problem(n=15, d=6, seed=5)
    flipped = DROProblem(**{**problem.__dict__, "theta": -3.0 * problem.theta})
    for p in (1, 2):
        np.testing.assert_allclose(fit(kg_wdro_strong, problem, delta=0.5, p=p),
                                   fit(kg_wdro_strong, flipped, delta=0.5, p=p), atol=1e-6)


def test_weak_transfer_limits_are_strong_transfer_and_vanilla_wdro():
    problem = make_problem(n=15, d=6, seed=6)
    strong = fit(kg_wdro_strong, problem, delta=0.4, p=2)
    vanilla = fit(wdro, problem, delta=0.4, p=2)
    np.testing.assert_allclose(fit(kg_wdro_weak, problem, delta=0.4, lam=1e-10), strong, atol=1e-5)
    np.testing.assert_allclose(fit(kg_wdro_weak, problem, delta=0.4, lam=1e10), vanilla, atol=1e-5)


def test_validation_search_picks_the_grid_point_with_least_validation_error():
    problem = make_problem(n=20, d=6, seed=7)
    rng = np.random.default_rng(8)
    xv = rng.standard_normal((20, 6))
    problem = DROProblem(**{**problem.__dict__, "x_val": xv, "y_val": xv @ problem.beta})
    result = kg_wdro_strong.solve(problem, kg_wdro_strong.Config(n_delta=5), RunContext(seed=0))
    grid = np.logspace(-4, 1, 5)
    errors = [np.mean((problem.y_val - xv @ fit(kg_wdro_strong, problem, delta=g)) ** 2) for g in grid]
    assert result.tuning == pytest.approx(grid[int(np.argmin(errors))])


def test_skips_say_why():
    multi = make_problem(d=4, m=2)
    assert "M = 2" in kg_wdro_strong.skip(multi, kg_wdro_strong.Config())
    full = make_problem(d=2, m=2)
    assert "rank" in kg_wdro_multi.skip(full, kg_wdro_multi.Config())
    assert "regression" in kg_wdro_weak.skip(make_problem(kind="classification"), kg_wdro_weak.Config())
