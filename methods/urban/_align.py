"""Unsupervised orthogonal alignment of two point clouds without correspondences (Wasserstein–Procrustes).

Grave, Joulin & Berthet, "Unsupervised Alignment of Embeddings with Wasserstein Procrustes",
AISTATS 2019: min_{W ∈ O(d)} min_{T ∈ Π(p, q)} Σ_ij T_ij ‖x_i W − y_j‖², solved by alternating an
entropic optimal-transport coupling T (Sinkhorn) and the orthogonal Procrustes solution
W = U Vᵀ of Xᵀ T Y = U Σ Vᵀ. The problem is non-convex; the initial coupling comes from entropic
Gromov–Wasserstein (Peyré, Cuturi & Solomon, ICML 2016), which compares only the clouds' internal
distance matrices and is therefore blind to the unknown rotation.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp


def sinkhorn(cost: np.ndarray, eps: float, iters: int = 100) -> np.ndarray:
    """Entropic OT coupling between uniform marginals, in the log domain: argmin ⟨T, C⟩ − ε H(T)."""
    n, m = cost.shape
    log_p, log_q = np.full(n, -np.log(n)), np.full(m, -np.log(m))
    c = cost / eps
    f, g = np.zeros(n), np.zeros(m)
    for _ in range(iters):
        f = log_p - logsumexp(g[None, :] - c, axis=1)
        g = log_q - logsumexp(f[:, None] - c, axis=0)
    return np.exp(f[:, None] + g[None, :] - c)


def gromov_wasserstein(x: np.ndarray, y: np.ndarray, eps: float, iters: int = 20) -> np.ndarray:
    """Entropic GW coupling for the square loss on squared-distance matrices (Peyré et al. 2016, Prop. 2)."""
    c1 = np.sum((x[:, None] - x[None, :]) ** 2, -1)
    c2 = np.sum((y[:, None] - y[None, :]) ** 2, -1)
    c1, c2 = c1 / c1.max(), c2 / c2.max()
    p, q = np.full(len(x), 1 / len(x)), np.full(len(y), 1 / len(y))
    const = (c1 ** 2 @ p)[:, None] + (c2 ** 2 @ q)[None, :]
    t = np.outer(p, q)
    for _ in range(iters):
        t = sinkhorn(const - 2 * c1 @ t @ c2.T, eps)
    return t


def procrustes(x: np.ndarray, y: np.ndarray, coupling: np.ndarray) -> np.ndarray:
    """argmin_{W ∈ O(d)} Σ_ij T_ij ‖x_i W − y_j‖² = U Vᵀ with Xᵀ T Y = U Σ Vᵀ (Schönemann 1966)."""
    u, _, vt = np.linalg.svd(x.T @ coupling @ y)
    return u @ vt


def standardise(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(centred and RMS-scaled cloud, mean, RMS norm): alignment is solved up to translation and scale."""
    mean = h.mean(0)
    scale = float(np.sqrt(np.mean(np.sum((h - mean) ** 2, 1)))) or 1.0
    return (h - mean) / scale, mean, scale


def wasserstein_procrustes(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, *, subsample: int = 300,
                           gw_eps: float = 5e-3, ot_eps: float = 2e-2, rounds: int = 10) -> np.ndarray:
    """Orthogonal W with x W ≈ y (as distributions) for standardised clouds x (n, d), y (m, d)."""
    xs = x[rng.permutation(len(x))[:subsample]]
    ys = y[rng.permutation(len(y))[:subsample]]
    w = procrustes(xs, ys, gromov_wasserstein(xs, ys, gw_eps))
    for _ in range(rounds):
        cost = _sq_dist(xs @ w, ys)                                              # (n, m) ‖x_i W − y_j‖²
        w = procrustes(xs, ys, sinkhorn(cost / cost.mean(), ot_eps))
    return w


def _sq_dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(np.sum(a * a, 1)[:, None] + np.sum(b * b, 1)[None, :] - 2 * a @ b.T, 0.0)
