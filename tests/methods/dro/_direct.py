"""Direct convex solves of the Wasserstein DRO problems, written without the KG-WDRO theorems.

Strong duality for Wasserstein DRO with an empirical centre (Blanchet & Murthy 2019; Gao &
Kleywegt 2016):  sup_{W_c(P, P_N) ≤ δ} E_P ℓ = inf_{λ≥0} λδ + (1/N)Σ_i sup_Δ [ℓ(x_i + Δ, y_i) − λ c(Δ)],
with Δ restricted to the directions the cost allows (ker Θᵀ for strong transfer; c = ∞ elsewhere).

Regression, ℓ = (y − βᵀx)², c = ‖Δ‖²: t_i ≥ sup_Δ (r_i − βᵀΔ)² − λ c(Δ) is a linear matrix
inequality in (β, λ, t_i) (homogenise with s and take a Schur complement):
  quadratic cost c = ΔᵀAΔ, Δ = Uw:   [[λUᵀAU, 0, −Uᵀβ], [0, t_i, r_i], [−βᵀU, r_i, 1]] ⪰ 0;
  ∞-norm cost c = ‖Δ‖∞²: sup over the cone through the vertices v_k of {‖Δ‖∞ ≤ 1, ΘᵀΔ = 0}
  (a convex function of v is largest at a vertex), one 3×3 LMI per vertex with h_k = βᵀv_k,
  i.e. h_k²/λ + r_i²/t_i ≤ 1, written as second-order cones.
Classification, logistic ℓ (1-Lipschitz, slope → 1), c = ‖Δ‖_q: the inner sup is ℓ(y_i βᵀx_i)
when λ ≥ sup{βᵀΔ : ‖Δ‖_q ≤ 1, Δ allowed} and +∞ otherwise (Shafieezadeh-Abadeh et al. 2015);
that support function is ‖Uᵀβ‖₂ (q = 2) or max_k βᵀv_k (q = ∞), written directly.
`beta_fixed` evaluates the worst-case risk of a given β (the inner sup + dual, β not optimised).
"""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
from scipy.linalg import null_space


def _solve(prob: cp.Problem) -> None:
    """Clarabel at gap and feasibility tolerance 1e-9, or 1e-8 where it stalls short of 1e-9.

    Whether 1e-9 is reached depends on the machine's BLAS kernels: on some CPUs a problem
    evaluated at a fixed, near-optimal β stops as "optimal_inaccurate" with the value right to
    ~4e-8 relative. The tests compare values at rel 1e-6, so 1e-8 still certifies them; a
    status other than optimal fails the test either way.
    """
    for tol in (1e-9, 1e-8):
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        if prob.status == cp.OPTIMAL:
            return
    assert prob.status == cp.OPTIMAL, prob.status


def linf_vertices(theta: np.ndarray) -> np.ndarray:
    """Vertices of {Δ : ‖Δ‖∞ ≤ 1, ΘᵀΔ = 0}: k = d − M coordinates at ±1, the other M solved."""
    d, m = theta.shape
    k, out = d - m, []
    for fixed in itertools.combinations(range(d), k):
        free = [j for j in range(d) if j not in fixed]
        for signs in itertools.product((-1.0, 1.0), repeat=k):
            v = np.zeros(d)
            v[list(fixed)] = signs
            if m:
                a = theta[free].T                        # (M, M)
                if abs(np.linalg.det(a)) < 1e-12:
                    continue
                v[free] = np.linalg.solve(a, -theta[list(fixed)].T @ np.array(signs))
            if np.all(np.abs(v) <= 1 + 1e-9):
                out.append(v)
    return np.unique(np.round(np.array(out), 12), axis=0)


def regression_dro(x, y, delta, theta, q, weight=None, beta_fixed=None):
    """(value, β) of min_β sup_{W ≤ δ} E(y − βᵀx)²; cost ‖Δ‖_q² on ker Θᵀ, or ‖Δ‖² + w(θᵀΔ)² (weight w)."""
    n, d = x.shape
    beta = cp.Variable(d) if beta_fixed is None else cp.Constant(beta_fixed)
    lam, t = cp.Variable(nonneg=True), cp.Variable(n)
    r = y - x @ beta
    cons = []
    if q == 2:
        if weight is not None:
            u, a = np.eye(d), np.eye(d) + weight * theta @ theta.T
        else:
            u = null_space(theta.T) if theta.shape[1] else np.eye(d)
            a = np.eye(d)
        k = u.shape[1]
        ua = u.T @ a @ u
        for i in range(n):
            b = cp.reshape(u.T @ beta, (k, 1), order="F")
            cons.append(cp.bmat([[lam * ua, np.zeros((k, 1)), -b],
                                 [np.zeros((1, k)), cp.reshape(t[i], (1, 1), order="F"),
                                  cp.reshape(r[i], (1, 1), order="F")],
                                 [-b.T, cp.reshape(r[i], (1, 1), order="F"), np.ones((1, 1))]]) >> 0)
    else:
        # the per-vertex 3×3 LMI [[λ, 0, −h_k], [0, t_i, r_i], [−h_k, r_i, 1]] ⪰ 0 is
        # h_k²/λ + r_i²/t_i ≤ 1 (Schur); over all k it is (max_k |h_k|)²/λ + r_i²/t_i ≤ 1 (SOC form)
        hstar, a, b = cp.Variable(), cp.Variable(), cp.Variable(n)
        cons += [cp.abs(v @ beta) <= hstar for v in linf_vertices(theta)]
        cons += [cp.quad_over_lin(hstar, lam) <= a, a + b <= 1]
        cons += [cp.quad_over_lin(r[i], t[i]) <= b[i] for i in range(n)]
    prob = cp.Problem(cp.Minimize(lam * delta + cp.sum(t) / n), cons)
    _solve(prob)
    return prob.value, np.asarray(beta.value)


def classification_dro(x, y, delta, theta, q, beta_fixed=None):
    """(value, β) of min_β sup_{W ≤ δ} E log(1 + e^{−yβᵀx}); cost ‖Δ‖_q on ker Θᵀ (∞ across labels)."""
    n, d = x.shape
    beta = cp.Variable(d) if beta_fixed is None else cp.Constant(beta_fixed)
    lam = cp.Variable(nonneg=True)
    if q == 2:
        u = null_space(theta.T) if theta.shape[1] else np.eye(d)
        cons = [cp.norm(u.T @ beta, 2) <= lam]
    else:
        cons = [v @ beta <= lam for v in linf_vertices(theta)]
    loss = cp.sum(cp.logistic(-cp.multiply(y, x @ beta))) / n
    prob = cp.Problem(cp.Minimize(loss + lam * delta), cons)
    _solve(prob)
    return prob.value, np.asarray(beta.value)
