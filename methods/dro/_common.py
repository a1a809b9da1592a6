"""Shared estimators of the dro family: the WDRO / KG-WDRO reformulations and their tuning.

Reformulations (arXiv 2502.08146 §2 background and Theorems 3.3, 3.5, 3.6):
  regression, strong   min_{β,κ} ‖y − Xβ‖₂/√N + √δ·‖β − Θκ‖_p          (Thm 3.3, un-squared: same argmin)
  regression, weak     min_β ‖y − Xβ‖₂/√N + √δ·‖Ψ^{1/2}β‖₂, Ψ = (I + ΘΘᵀ/λ)^{-1}  (Thm 3.5)
  classification       min_{β,κ} (1/N)Σ log(1 + e^{−y_i xᵢᵀβ}) + δ·‖β − Θκ‖_p  (Thm 3.6)
Vanilla WDRO is the same with Θ empty (M = 0). With γ = β − Θκ the strong problems are the vanilla
ones on X with M extra unpenalised features Z = XΘ (our exact reformulation, docs/papers/kg-wdro.md).

Solvers: p = 2 regression (strong, weak, vanilla) is solved exactly along the ridge path (the
optimum of ‖y − Xb‖/√N + c‖b‖₂ is a ridge solution (XᵀX + μI)^{-1}Xᵀy, its μ the root of
μ‖b‖ = c√N‖y − Xb‖), after projecting the unpenalised columns out; everything else through cvxpy
(Clarabel) with δ as a DPP parameter, so one compilation serves a whole δ grid.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from tasks.dro import DROProblem

KAPPA_RIDGE = 1e-8  # tiny ridge on the unpenalised κ in logistic fits: keeps κ finite when the data are
                    # separable along Θᵀx (the infimum is then not attained); negligible otherwise
CLARABEL_TOL = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9}  # argmin to ~1e-6


def delta_grid(lo: float, hi: float, n: int) -> np.ndarray:
    if not 0 < lo <= hi or n < 1:
        raise ValueError(f"need 0 < lo <= hi and n >= 1 for a log grid, got lo={lo}, hi={hi}, n={n}")
    return np.logspace(np.log10(lo), np.log10(hi), n)


def validation_loss(problem: DROProblem, coef: np.ndarray) -> float:
    """Mean squared error (regression) or log-loss (classification) on the validation sample."""
    eta = problem.x_val @ coef
    if problem.kind == "classification":
        return float(np.mean(np.logaddexp(0.0, -problem.y_val * eta)))
    return float(np.mean((problem.y_val - eta) ** 2))


def select(problem: DROProblem, values: np.ndarray, coefs: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """The candidate with the smallest validation loss (first one on ties) and its tuning value."""
    losses = [validation_loss(problem, c) for c in coefs]
    best = int(np.argmin(losses))
    return coefs[best], float(values[best])


def norm_p(config_p: int | None, problem: DROProblem) -> int:
    p = problem.penalty_norm if config_p is None else config_p
    if p not in (1, 2):
        raise ValueError(f"p must be 1 or 2, got {p}")
    return p


def rank_skip(theta: np.ndarray) -> str | None:
    d, m = theta.shape
    if np.linalg.matrix_rank(theta) >= d:
        return f"rank(Θ) = {np.linalg.matrix_rank(theta)} must be < d = {d}: the knowledge set is all of ℝ^d"
    return None


# ---- p = 2 regression: exact ridge-path solver ----------------------------------------------------

def sqrt_ridge_solver(x: np.ndarray, y: np.ndarray, n: int):
    """c ↦ argmin_b ‖y − Xb‖₂/√n + c‖b‖₂ (exact up to root-finding precision), one SVD for all c.

    KKT: b = 0, or Xb = y with b the min-norm interpolant, or b = (XᵀX + μI)^{-1}Xᵀy with
    μ = c√n‖y − Xb‖/‖b‖ > 0. All three are on the closure of the ridge path ∪ {0}: scan the path
    in log μ, refine the best point by the root of μ‖b(μ)‖ − c√n‖r(μ)‖."""
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    keep = s > s.max() * 1e-12 if s.size else s > 0
    u, s, vt = u[:, keep], s[keep], vt[keep]
    uy = u.T @ y
    outside = max(float(y @ y - uy @ uy), 0.0)  # ‖y‖² outside the column space of X
    root_n = np.sqrt(n)
    logs = np.linspace(np.log(s.max() ** 2) - 30, np.log(s.max() ** 2) + 30, 241) if s.size else np.zeros(0)
    mus = np.exp(logs)[:, None]                                              # (K, 1)
    scan_res = np.sqrt(outside + np.sum((uy * mus / (s**2 + mus)) ** 2, axis=1))  # (K,) ‖r(μ)‖
    scan_norm = np.linalg.norm(s * uy / (s**2 + mus), axis=1)                      # (K,) ‖b(μ)‖

    def parts(mu):
        a = s * uy / (s**2 + mu)                 # coordinates of b(μ) in the basis V
        return a, np.sqrt(outside + np.sum((uy * mu / (s**2 + mu)) ** 2))

    def objective(mu, c):
        a, res = parts(mu)
        return res / root_n + c * np.linalg.norm(a)

    a0, res0 = parts(0.0)
    zero, interpolant = (np.linalg.norm(y) / root_n, np.zeros(x.shape[1])), (res0 / root_n, vt.T @ a0,
                                                                             np.linalg.norm(a0))

    def solve(c: float) -> np.ndarray:
        candidates = [zero, (interpolant[0] + c * interpolant[2], interpolant[1])]
        if s.size and c > 0:
            k = int(np.argmin(scan_res / root_n + c * scan_norm))
            lo, hi = logs[max(k - 1, 0)], logs[min(k + 1, logs.size - 1)]

            def g(t):
                a, res = parts(np.exp(t))
                return np.exp(t) * np.linalg.norm(a) - c * root_n * res

            if g(lo) * g(hi) < 0:
                t = brentq(g, lo, hi, xtol=1e-14, rtol=1e-14)
            else:
                t = minimize_scalar(lambda t: objective(np.exp(t), c), bounds=(lo, hi), method="bounded",
                                    options={"xatol": 1e-12}).x
            candidates.append((objective(np.exp(t), c), vt.T @ parts(np.exp(t))[0]))
        return min(candidates, key=lambda fc: fc[0])[1]

    return solve


def _project_out(x: np.ndarray, y: np.ndarray, z: np.ndarray):
    """(P⊥X, P⊥y, solve_kappa) with P⊥ the projector onto span(Z)⊥; κ(γ) = Z⁺(y − Xγ)."""
    if z.shape[1] == 0:
        return x, y, lambda gamma: np.zeros(0)
    q, _ = np.linalg.qr(z)
    pinv = np.linalg.pinv(z)
    return x - q @ (q.T @ x), y - q @ (q.T @ y), lambda gamma: pinv @ (y - x @ gamma)


def ridge_path_regression(x, y, theta, deltas) -> list[np.ndarray]:
    """Strong (Θ with M ≥ 1) or vanilla (M = 0) p = 2 regression, one β per δ."""
    xp, yp, kappa = _project_out(x, y, x @ theta)
    solve = sqrt_ridge_solver(xp, yp, x.shape[0])
    out = []
    for delta in deltas:
        gamma = solve(np.sqrt(delta))
        out.append(gamma + theta @ kappa(gamma))
    return out


def weak_transform(theta: np.ndarray, lam: float) -> np.ndarray:
    """Ψ^{-1/2} = (I + ΘΘᵀ/λ)^{1/2}, Ψ the weak-transfer matrix (Thm 3.5; λ = 1/w of the cost
    ‖Δ‖₂² + w‖ΘᵀΔ‖₂²). For M = 1: Ψ = I − θθᵀ/(‖θ‖² + λ)."""
    if not lam > 0:
        raise ValueError(f"weak-transfer λ must be > 0, got {lam}")
    evals, evecs = np.linalg.eigh(theta @ theta.T)
    return (evecs * np.sqrt(1.0 + np.maximum(evals, 0.0) / lam)) @ evecs.T


def weak_regression(x, y, theta, deltas, lam) -> list[np.ndarray]:
    """min_β ‖y − Xβ‖/√N + √δ‖Ψ^{1/2}β‖₂: sqrt-ridge in v = Ψ^{1/2}β on the design XΨ^{-1/2}."""
    t = weak_transform(theta, lam)
    solve = sqrt_ridge_solver(x @ t, y, x.shape[0])
    return [t @ solve(np.sqrt(delta)) for delta in deltas]


# ---- everything else: cvxpy with δ as a parameter ---------------------------------------------------

def cvx_path(x, y, theta, deltas, p: int, kind: str, offset=None) -> list[np.ndarray]:
    """β = γ + Θκ minimising loss(Xγ + XΘκ + offset) + c·‖γ‖_p for each c in `deltas`, where
    c = √δ (regression, un-squared Thm 3.3 objective) or δ (classification, Thm 3.6)."""
    import cvxpy as cp  # imported on use: the leaderboard imports method modules for their Configs only
    n, d = x.shape
    m = theta.shape[1]
    gamma = cp.Variable(d)
    eta = x @ gamma + (0.0 if offset is None else offset)
    extra = 0.0
    if m:
        kappa = cp.Variable(m)
        eta = eta + (x @ theta) @ kappa
    c = cp.Parameter(nonneg=True)
    if kind == "classification":
        fit = cp.sum(cp.logistic(-cp.multiply(y, eta))) / n
        extra = KAPPA_RIDGE * cp.sum_squares(kappa) if m else 0.0
    else:
        fit = cp.norm(y - eta, 2) / np.sqrt(n)
    prob = cp.Problem(cp.Minimize(fit + c * cp.norm(gamma, p) + extra))
    out = []
    for delta in deltas:
        c.value = float(delta if kind == "classification" else np.sqrt(delta))
        prob.solve(solver=cp.CLARABEL, **CLARABEL_TOL)
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"cvxpy status {prob.status!r} at δ = {delta}")
        out.append(gamma.value + (theta @ kappa.value if m else 0.0))
    return out


def wdro_path(problem: DROProblem, theta: np.ndarray, deltas, p: int) -> list[np.ndarray]:
    """KG-WDRO strong / multi-source (Θ with M ≥ 1) or vanilla WDRO (M = 0) over a δ grid."""
    x, y = problem.x_train, problem.y_train
    if problem.kind == "regression" and p == 2:
        return ridge_path_regression(x, y, theta, deltas)
    return cvx_path(x, y, theta, deltas, p, problem.kind)


def fit_wdro(problem: DROProblem, theta: np.ndarray, config) -> tuple[np.ndarray, float]:
    """Fixed δ (config.delta) or the validation choice over the δ grid (the paper tunes on a validation set)."""
    p = norm_p(config.p, problem)
    if config.delta is not None:
        if config.delta < 0:
            raise ValueError(f"delta must be >= 0, got {config.delta}")
        return wdro_path(problem, theta, [config.delta], p)[0], float(config.delta)
    deltas = delta_grid(config.delta_min, config.delta_max, config.n_delta)
    return select(problem, deltas, wdro_path(problem, theta, deltas, p))
