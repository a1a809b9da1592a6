"""Tabular (weighted) Bradley–Terry MLE and Monte-Carlo Voronoi weights, shared by mle and weighted_mle.

Objective (paper Eq. 1 with w ≡ 1, Eq. 2 otherwise):

    F(r) = − Σ_{a ≠ b} w_a w_b p_D(a ≻ b) log σ(r_a − r_b) + (λ/2) Σ_a w_a r_a²

strictly convex in the alternatives with w_a > 0 (λ > 0). Solved by damped Newton (dense
Hessian, Armijo backtracking) until the first-order residual of §2.3,
max_a |λ r_a − Σ_b w_b (p_ab − σ(r_a − r_b))|, is below `tol`. An alternative with w_a = 0
(an empty Monte-Carlo cell) does not enter F; its reward is the root of the same first-order
equation given the others (the weighted-win-rate identity extended to it; strictly increasing
in r_a, so unique).
"""

from __future__ import annotations

import numpy as np

from tasks.reward_learning import sigmoid


def _objective(r, win, w, lam, off):
    diff = r[:, None] - r[None, :]
    log_sig = -np.logaddexp(0.0, -diff)
    return float(-np.sum(np.where(off, np.outer(w, w) * win * log_sig, 0.0)) + 0.5 * lam * np.dot(w, r * r))


def _residual(r, win, w, lam, off):
    """λ r_a − Σ_{b≠a} w_b (p_ab − σ(r_a − r_b)), for every a (the gradient of F divided by w_a)."""
    sig = sigmoid(r[:, None] - r[None, :])
    return lam * r - np.sum(np.where(off, w[None, :] * (win - sig), 0.0), axis=1)


def fit_bt(win: np.ndarray, weights: np.ndarray, lam: float, tol: float = 1e-11,
           max_iter: int = 200) -> np.ndarray:
    """argmin_r F(r) for the win matrix p_D (n, n) and weights w (n,) ≥ 0; raises if Newton stalls."""
    win, w = np.asarray(win, float), np.asarray(weights, float)
    n = len(w)
    if lam <= 0:
        raise ValueError(f"λ must be > 0 (it makes the objective strictly convex), got {lam}")
    active = w > 0
    r = np.zeros(n)
    idx = np.flatnonzero(active)
    sub, ws = win[np.ix_(idx, idx)], w[idx]
    off = ~np.eye(len(idx), dtype=bool)
    x = np.zeros(len(idx))
    for _ in range(max_iter):
        res = _residual(x, sub, ws, lam, off)
        if np.max(np.abs(res)) < tol:
            break
        sig = sigmoid(x[:, None] - x[None, :])
        curv = np.where(off, np.outer(ws, ws) * sig * (1.0 - sig), 0.0)             # (n, n) w_a w_b σ(1−σ)
        hess = np.diag(lam * ws + curv.sum(axis=1)) - curv
        grad = ws * res
        step = np.linalg.solve(hess, -grad)
        f0, t = _objective(x, sub, ws, lam, off), 1.0
        slack = 1e-13 * (1.0 + abs(f0))  # near the optimum F changes below its rounding: take the full step
        while _objective(x + t * step, sub, ws, lam, off) > f0 + 1e-4 * t * np.dot(grad, step) + slack and t > 1e-10:
            t *= 0.5
        x = x + t * step
    else:
        raise RuntimeError(f"Newton did not reach the residual {tol} in {max_iter} steps")
    r[idx] = x
    for a in np.flatnonzero(~active):
        r[a] = _zero_weight_reward(win[a, idx], ws, x, lam, tol)
    return r


def _zero_weight_reward(p_row, w, r_active, lam, tol):
    """Root of g(z) = λ z − Σ_b w_b (p_ab − σ(z − r_b)) (strictly increasing) by safeguarded Newton."""
    lo, hi = -1e6, 1e6
    z = 0.0
    for _ in range(200):
        sig = sigmoid(z - r_active)
        g = lam * z - np.dot(w, p_row - sig)
        if abs(g) < tol:
            return z
        lo, hi = (z, hi) if g < 0 else (lo, z)
        dg = lam + np.dot(w, sig * (1.0 - sig))
        z_new = z - g / dg
        z = z_new if lo < z_new < hi else 0.5 * (lo + hi)
    return z


def voronoi_weights(point_sets: list[np.ndarray], box: tuple[float, float], samples: int,
                    rng: np.random.Generator, chunk: int = 20_000) -> list[np.ndarray]:
    """w_M(y) = vol{s ∈ S : y nearest in M} / vol(S) for each M in `point_sets`, by Monte Carlo.

    One set of uniform samples of S = [lo, hi]^d serves every set (common random numbers: an
    exact duplicate then splits its original's count exactly in two). Samples at exactly the
    same distance from several alternatives are split equally among them.
    """
    lo, hi = box
    d = point_sets[0].shape[1]
    counts = [np.zeros(len(p)) for p in point_sets]
    done = 0
    while done < samples:
        size = min(chunk, samples - done)
        s = rng.uniform(lo, hi, size=(size, d))                                      # (N, d)
        for points, count in zip(point_sets, counts):
            dist = np.sum((s[:, None, :] - points[None, :, :]) ** 2, axis=2)         # (N, m)
            nearest = dist == dist.min(axis=1, keepdims=True)                         # ties: exact equality
            count += (nearest / nearest.sum(axis=1, keepdims=True)).sum(axis=0)
        done += size
    return [c / samples for c in counts]
