"""Shared pieces of the target-only and two-step transfer baselines of the dro family.

Penalised fits along a grid, the validation choice (methods/dro/_common.select) and the pooled
target ∪ source sample of the two-step estimators (Trans-Lasso, Trans-GLM, Trans-Ridge):
  (1) transferring step  ŵ = argmin_w L_pooled(w) + λ_w·pen(w)   on target ∪ all sources,
  (2) debiasing step     δ̂ = argmin_δ L_target(ŵ + δ) + λ_δ·pen(δ),   β̂ = ŵ + δ̂.
"""

from __future__ import annotations

import numpy as np

from methods.dro import _common
from tasks.dro import DROProblem


def pooled(problem: DROProblem) -> tuple[np.ndarray, np.ndarray]:
    """Target training sample stacked with every source sample ("oracle": all sources informative)."""
    return (np.vstack((problem.x_train, *problem.x_source)),
            np.concatenate((problem.y_train, *problem.y_source)))


def ridge_fits(x: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> list[np.ndarray]:
    """argmin_w ‖y − Xw‖₂² + α‖w‖₂² for each α (closed form through one SVD)."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    uy = u.T @ y
    return [vt.T @ (s * uy / (s**2 + a)) for a in alphas]


def lasso_fits(x: np.ndarray, y: np.ndarray, n_alpha: int, ratio: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """Lasso path of (1/2n)‖y − Xw‖² + α‖w‖₁, α = α_max·logspace(0, log10 ratio, n_alpha),
    α_max = ‖Xᵀy‖_∞/n (the smallest α with w = 0)."""
    # imported on use: the leaderboard imports method modules for their Configs only
    from sklearn.linear_model import lasso_path
    alpha_max = max(float(np.max(np.abs(x.T @ y))) / x.shape[0], 1e-12)
    alphas = alpha_max * np.logspace(0.0, np.log10(ratio), n_alpha)
    _, coefs, _ = lasso_path(x, y, alphas=alphas, max_iter=50_000, tol=1e-7)
    return alphas, [coefs[:, k] for k in range(alphas.size)]


def logistic_fits(x: np.ndarray, y: np.ndarray, cs: np.ndarray, p: int) -> list[np.ndarray]:
    """Penalised logistic regression without intercept (liblinear): C·Σ log(1 + e^{−y xᵀw}) +
    ‖w‖₁ (p = 1) or + ½‖w‖₂² (p = 2), for each C."""
    # imported on use: the leaderboard imports method modules for their Configs only
    from sklearn.linear_model import LogisticRegression
    out = []
    for c in cs:
        # random_state: liblinear's coordinate order is shuffled; without it the seed came from numpy's global RNG,
        # seeded afresh in every process, and the fits differed from run to run in the 7th digit
        model = LogisticRegression(C=float(c), l1_ratio=1.0 if p == 1 else 0.0, solver="liblinear",
                                   fit_intercept=False, tol=1e-6, max_iter=10_000, random_state=0)
        out.append(model.fit(x, y).coef_.ravel().copy())
    return out


def choose(problem: DROProblem, values, coefs) -> tuple[np.ndarray, float]:
    return _common.select(problem, np.asarray(values, dtype=float), coefs)
