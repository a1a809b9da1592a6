"""Target-only and two-step transfer baselines against known answers: closed forms, optimality
(KKT) conditions, and the limit where the source equals the target (ρ = 1, a large source sample),
in which the two-step estimators must recover the target's β."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.dro import (
    _common,
    _transfer,
    target_lasso,
    target_logistic,
    target_ridge,
    trans_glm,
    trans_lasso,
    trans_ridge,
)
from tasks.dro import score, strong_transfer_logistic, weak_transfer_linear
from tests.methods.dro.test_kg_wdro import make_problem


def test_ridge_fits_are_the_normal_equations():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((12, 5)), rng.standard_normal(12)
    for a, w in zip((0.1, 3.0), _transfer.ridge_fits(x, y, np.array([0.1, 3.0])), strict=True):
        np.testing.assert_allclose(w, np.linalg.solve(x.T @ x + a * np.eye(5), x.T @ y), atol=1e-10)


def test_lasso_path_satisfies_the_kkt_conditions_and_starts_at_zero():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((30, 8)), rng.standard_normal(30)
    alphas, coefs = _transfer.lasso_fits(x, y, 6, 1e-2)
    assert np.all(np.abs(coefs[0]) < 1e-12)   # α_max = ‖Xᵀy‖∞/n: the smallest α with w = 0
    for a, w in zip(alphas, coefs, strict=True):
        g = x.T @ (y - x @ w) / 30          # must equal α·sign(w) on the support, |g| ≤ α off it
        on = w != 0
        np.testing.assert_allclose(g[on], a * np.sign(w[on]), atol=1e-5)
        assert np.all(np.abs(g[~on]) <= a + 1e-5)


def test_logistic_fits_do_not_depend_on_numpys_global_rng():
    """liblinear shuffles its coordinates; its seed once came from np.random's global state, fresh per process."""
    problem = make_problem(kind="classification", n=60, d=8, seed=3)
    cs = np.array([0.05, 1.0, 20.0])
    fits = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        fits.append(_transfer.logistic_fits(problem.x_train, problem.y_train, cs, 1))
    for a, b in zip(*fits, strict=True):
        assert np.array_equal(a, b)


def test_offset_l1_logistic_satisfies_the_kkt_conditions():
    # Trans-GLM's debiasing step: min (1/n)Σ log(1 + e^{−y(o + xᵀδ)}) + λ‖δ‖₁
    problem = make_problem(kind="classification", n=40, d=6, seed=2)
    x, y = problem.x_train, problem.y_train
    offset = x @ np.full(6, 0.2)
    lam = 0.02
    (delta,) = _common.cvx_path(x, y, np.zeros((6, 0)), [lam], 1, "classification", offset=offset)
    g = x.T @ (y / (1 + np.exp(y * (offset + x @ delta)))) / 40   # −gradient of the loss
    on = np.abs(delta) > 1e-6
    np.testing.assert_allclose(g[on], lam * np.sign(delta[on]), atol=1e-6)
    assert np.all(np.abs(g[~on]) <= lam + 1e-6)


def test_target_only_fits_are_the_validation_best_grid_points():
    problem = make_problem(n=30, d=5, seed=3)
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((30, 5))
    problem = type(problem)(**{**problem.__dict__, "x_val": xv, "y_val": xv @ problem.beta})
    result = target_ridge.solve(problem, target_ridge.Config(n_alpha=7), RunContext(seed=0))
    alphas = np.logspace(-2, 4, 7)
    fits = _transfer.ridge_fits(problem.x_train, problem.y_train, alphas)
    errors = [np.mean((problem.y_val - xv @ w) ** 2) for w in fits]
    assert result.tuning == pytest.approx(alphas[int(np.argmin(errors))])
    np.testing.assert_allclose(result.coef, fits[int(np.argmin(errors))], atol=1e-12)


SAME_SOURCE = dict(dim=10, rho=1.0, signal=1.0, noise=0.1, n_train=20, n_test=2000, n_source=20_000)


@pytest.mark.parametrize("module", [trans_lasso, trans_ridge])
def test_two_step_regression_recovers_beta_when_the_source_is_the_target(module):
    # ρ = 1 makes θ = β: step 1 on 20,000 pooled samples estimates β to ~σ·sqrt(d/n) ≈ 0.002;
    # step 2 may add a validation-chosen δ̂ of the order of the target noise (σ = 0.1, N = 20)
    problem = weak_transfer_linear.build(weak_transfer_linear.Config(**SAME_SOURCE), RunContext(seed=0).for_task())
    single = target_ridge.solve(problem, target_ridge.Config(), RunContext(seed=0))
    result = module.solve(problem, module.Config(), RunContext(seed=0))
    # measured: Trans-Lasso 0.028, Trans-Ridge 0.030, target-only ridge 0.111
    assert score(problem, result)["coef_error"] < 0.06
    assert score(problem, result)["coef_error"] < 0.5 * score(problem, single)["coef_error"]


def test_trans_glm_recovers_beta_when_the_source_is_the_target():
    cfg = strong_transfer_logistic.Config(dim=10, support=10, rho=1.0, n_train=40, n_test=2000, n_source=20_000)
    problem = strong_transfer_logistic.build(cfg, RunContext(seed=0).for_task())
    result = trans_glm.solve(problem, trans_glm.Config(), RunContext(seed=0))
    single = target_logistic.solve(problem, target_logistic.Config(), RunContext(seed=0))
    # measured: Trans-GLM 0.071, target-only logistic 1.18
    assert score(problem, result)["coef_error"] < 0.15
    assert score(problem, result)["coef_error"] < 0.25 * score(problem, single)["coef_error"]


def test_regression_baselines_skip_classification_and_back():
    cls, reg = make_problem(kind="classification"), make_problem()
    for module in (target_lasso, target_ridge, trans_lasso, trans_ridge):
        assert "regression" in module.skip(cls, module.Config())
    for module in (target_logistic, trans_glm):
        assert "classification" in module.skip(reg, module.Config())
