"""Shared generators of the KG-WDRO simulation designs (arXiv 2502.08146 §5).

The paper's exact generators are not accessible (docs/papers/kg-wdro.md); what is documented: (β_j, θ_j) pairs
drawn from a bivariate normal with correlation ρ on the active coordinates, a signal-strength
level s, covariate correlation 0.3 in the regression design, and a target β correlated with a
combination θ_S = Σ_m w_m θ_m of three source vectors in the multi-source design. Everything
else (X law, noise σ, source sample sizes, support placement) is a stated hypothesis here.
"""

from __future__ import annotations

import numpy as np


def correlated_coefficients(rng: np.random.Generator, dim: int, support: int, rho: float,
                            scale: float, weights: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Target β and source Θ (d, M): on the first `support` coordinates θ_m,j ~ N(0, scale²) iid,
    θ_S = Θw and β_j = ρ·θ_S,j/‖w‖₂ + sqrt(1 − ρ²)·ξ_j, ξ_j ~ N(0, scale²); zero elsewhere.

    θ_S,j/‖w‖₂ ~ N(0, scale²), so each (β_j, θ_S,j) is bivariate normal with equal variances
    and correlation exactly ρ (for M = 1, w = (1,): the pair (β_j, θ_j) of the paper's Sim 1)."""
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must lie in [-1, 1], got {rho}")
    if not 1 <= support <= dim:
        raise ValueError(f"support must lie in [1, dim={dim}], got {support}")
    w = np.asarray(weights, dtype=float)
    theta = np.zeros((dim, w.size))
    theta[:support] = scale * rng.standard_normal((support, w.size))
    beta = np.zeros(dim)
    beta[:support] = rho * theta[:support] @ w / np.linalg.norm(w) \
        + np.sqrt(1.0 - rho**2) * scale * rng.standard_normal(support)
    return beta, theta


def ar1_factor(dim: int, corr: float) -> np.ndarray:
    """Cholesky factor L (L Lᵀ = Σ) of the AR(1) covariance Σ_jk = corr^|j−k|."""
    idx = np.arange(dim)
    return np.linalg.cholesky(corr ** np.abs(idx[:, None] - idx[None, :]))


def covariates(rng: np.random.Generator, n: int, factor: np.ndarray | None, dim: int) -> np.ndarray:
    z = rng.standard_normal((n, dim))
    return z if factor is None else z @ factor.T


def responses(rng: np.random.Generator, x: np.ndarray, coef: np.ndarray, kind: str,
              noise: float) -> np.ndarray:
    """Logistic model y ∈ {±1} with P(y = 1 | x) = 1/(1 + e^{−xᵀβ}), or y = xᵀβ + σε."""
    eta = x @ coef
    if kind == "classification":
        return np.where(rng.random(eta.shape) < 1.0 / (1.0 + np.exp(-eta)), 1.0, -1.0)
    return eta + noise * rng.standard_normal(eta.shape)


def check_sizes(n_train: int, n_test: int, n_source: int) -> None:
    for name, value in (("n_train", n_train), ("n_test", n_test), ("n_source", n_source)):
        if value < 2:
            raise ValueError(f"{name} must be >= 2, got {value}")
