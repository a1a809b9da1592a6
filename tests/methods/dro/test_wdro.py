"""Vanilla WDRO against the classical equivalences: zero radius is plain ERM (OLS, unpenalised
logistic MLE), the radius beyond which β̂ = 0 has a closed form (the dual norm of the gradient of
the loss at 0), and the estimator equals a direct convex solve of the Wasserstein dual."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bench.context import RunContext
from methods.dro import kg_wdro_strong, wdro
from tests.methods.dro import _direct
from tests.methods.dro.test_kg_wdro import check_against_direct, fit, make_problem


@pytest.mark.parametrize("p", [1, 2])
def test_zero_radius_regression_is_ols(p):
    problem = make_problem(n=30, d=5, seed=10)
    ols = np.linalg.lstsq(problem.x_train, problem.y_train, rcond=None)[0]
    # p = 2 runs the exact ridge-path solver (measured 1e-14); p = 1 the interior-point solver,
    # whose argmin is accurate to ~sqrt(gap tolerance 1e-10) (measured 1.1e-6)
    atol = 1e-9 if p == 2 else 1e-5
    np.testing.assert_allclose(fit(wdro, problem, delta=0.0, p=p), ols, atol=atol)
    np.testing.assert_allclose(fit(kg_wdro_strong, problem, delta=0.0, p=p), ols, atol=atol)


@pytest.mark.parametrize("p", [1, 2])
def test_zero_radius_classification_is_the_logistic_mle(p):
    problem = make_problem(kind="classification", n=200, d=4, seed=11)   # not separable
    x, y = problem.x_train, problem.y_train
    def loss(b):
        return np.mean(np.logaddexp(0, -y * (x @ b)))
    def grad(b):
        return -(x.T @ (y / (1 + np.exp(y * (x @ b))))) / len(y)
    mle = minimize(loss, np.zeros(4), jac=grad, method="BFGS", options={"gtol": 1e-12}).x
    np.testing.assert_allclose(fit(wdro, problem, delta=0.0, p=p), mle, atol=1e-5)


@pytest.mark.parametrize("p,dual", [(1, np.inf), (2, 2)])
def test_regression_is_zero_exactly_beyond_the_closed_form_radius(p, dual):
    # β = 0 is optimal iff √δ ≥ ‖Xᵀy‖_dual / (√N‖y‖) (subgradient of sqrt(MSE) at 0);
    # p = 2: exact solver (0 exactly), p = 1: interior point (measured 1.6e-6 at 1.001×)
    problem = make_problem(n=20, d=5, seed=12)
    x, y = problem.x_train, problem.y_train
    root_delta = np.linalg.norm(x.T @ y, dual) / (np.sqrt(len(y)) * np.linalg.norm(y))
    assert np.linalg.norm(fit(wdro, problem, delta=(1.001 * root_delta) ** 2, p=p)) < (1e-12 if p == 2 else 1e-5)
    assert np.linalg.norm(fit(wdro, problem, delta=(0.95 * root_delta) ** 2, p=p)) > 1e-3


def test_logistic_is_zero_exactly_beyond_the_closed_form_radius():
    # gradient of the mean logistic loss at 0 is −(1/2N)Σ y_i x_i; β = 0 iff δ ≥ its ∞-norm (p = 1)
    problem = make_problem(kind="classification", n=40, d=5, seed=13)
    thresh = np.linalg.norm(problem.x_train.T @ problem.y_train, np.inf) / (2 * 40)
    assert np.linalg.norm(fit(wdro, problem, delta=1.001 * thresh, p=1)) < 1e-6
    assert np.linalg.norm(fit(wdro, problem, delta=0.95 * thresh, p=1)) > 1e-3


@pytest.mark.parametrize("p", [1, 2])
def test_regression_equals_direct_dro(p):
    problem = make_problem(n=8, d=3, seed=14, p=p)
    coef = fit(wdro, problem, delta=0.3, p=p)
    check_against_direct(problem, coef, _direct.regression_dro, delta=0.3, theta=np.zeros((3, 0)),
                         q=2 if p == 2 else np.inf)


def test_small_radius_with_fewer_samples_than_features_gives_the_min_norm_interpolant():
    # N < d: sqrt(MSE) has a kink at r = 0; β̂ = X⁺y exactly when √δ ≤ ‖X⁺y‖/(√N‖(XXᵀ)⁻¹y‖)
    problem = make_problem(n=5, d=8, seed=14)
    x, y = problem.x_train, problem.y_train
    interpolant = np.linalg.pinv(x) @ y
    limit = np.linalg.norm(interpolant) / (np.sqrt(5) * np.linalg.norm(np.linalg.solve(x @ x.T, y)))
    delta = (0.5 * limit) ** 2
    coef = fit(wdro, problem, delta=delta, p=2)
    np.testing.assert_allclose(coef, interpolant, atol=1e-9)
    # the direct dual's value there is δ‖X⁺y‖²; its argmin is loose (curvature δ), hence beta_atol
    value = check_against_direct(problem, coef, _direct.regression_dro, beta_atol=1e-2, delta=delta,
                                 theta=np.zeros((8, 0)), q=2)
    assert value == pytest.approx(delta * interpolant @ interpolant, rel=1e-5)
    assert np.linalg.norm(fit(wdro, problem, delta=(2 * limit) ** 2, p=2) - interpolant) > 1e-3


@pytest.mark.parametrize("p", [1, 2])
def test_classification_equals_direct_dro(p):
    problem = make_problem(kind="classification", n=12, seed=15, p=p)
    coef = fit(wdro, problem, delta=0.05, p=p)
    check_against_direct(problem, coef, _direct.classification_dro, delta=0.05,
                         theta=np.zeros((3, 0)), q=2 if p == 2 else np.inf)


def test_negative_radius_is_refused():
    with pytest.raises(ValueError, match="delta must be >= 0"):
        wdro.solve(make_problem(), wdro.Config(delta=-1.0), RunContext(seed=0))
