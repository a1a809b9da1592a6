"""Layered tabular CMDP ground truth: occupancy measures, the LP optimum, value iteration.

States are numbered layer by layer: layer 0 is {x_0} = {0}, layer k (1 ≤ k < L) holds `width`
states, and the terminal layer X_L is implicit (the episode ends after the L-th action), so the
kernel P has shape (S, A, S) with rows of the last decision layer all zero.
Occupancy measure (Rosenberg & Mansour 2019): q(x, a) = Pr[x_k = x, a_k = a]; the occupancy
polytope Q(P) is {q ≥ 0 : Σ_a q(x_0, a) = 1, Σ_a q(x, a) = Σ_{x', a'} P(x | x', a') q(x', a')}.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog


def layer_slices(n_layers: int, width: int) -> list[slice]:
    """State index ranges of decision layers 0..L-1 (layer 0 is the single start state)."""
    return [slice(0, 1)] + [slice(1 + (k - 1) * width, 1 + k * width) for k in range(1, n_layers)]


def occupancy(P: np.ndarray, layers: list[slice], policies: np.ndarray) -> np.ndarray:
    """q^{P,π} for one policy (S, A) or a batch (T, S, A); same shape as `policies`."""
    batch = policies[None] if policies.ndim == 2 else policies
    q = np.zeros_like(batch)
    d = np.zeros(batch.shape[:2])                         # (T, S) state-visit probabilities
    d[:, 0] = 1.0
    for k, sl in enumerate(layers):
        q[:, sl] = d[:, sl, None] * batch[:, sl]          # (T, |X_k|, A)
        if k + 1 < len(layers):
            nxt = layers[k + 1]
            d[:, nxt] = np.einsum("tsa,san->tn", q[:, sl], P[sl, :, nxt])
    return q[0] if policies.ndim == 2 else q


def flow_matrix(P: np.ndarray, layers: list[slice]) -> tuple[np.ndarray, np.ndarray]:
    """(A_eq, b_eq) of the occupancy polytope over q flattened as (S·A,)."""
    S, A, _ = P.shape
    A_eq = np.zeros((S, S * A))
    b_eq = np.zeros(S)
    for x in range(S):
        A_eq[x, x * A:(x + 1) * A] = 1.0                  # Σ_a q(x, a)
        if x == 0:
            b_eq[0] = 1.0
        else:
            A_eq[x] -= P[:, :, x].reshape(-1)             # − Σ_{x',a'} P(x|x',a') q(x',a')
    return A_eq, b_eq


def solve_lp(P: np.ndarray, layers: list[slice], r: np.ndarray, G: np.ndarray,
             alpha: np.ndarray) -> tuple[float, np.ndarray]:
    """OPT = max_{q ∈ Q(P)} rᵀq s.t. G_i q ≤ α_i; returns (OPT, q*) with q* of shape (S, A)."""
    S, A = r.shape
    A_eq, b_eq = flow_matrix(P, layers)
    res = linprog(-r.reshape(-1), A_ub=G.reshape(len(G), -1), b_ub=alpha, A_eq=A_eq, b_eq=b_eq,
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"CMDP linear program failed ({res.message}); thresholds α = {alpha} may be infeasible")
    return -float(res.fun), res.x.reshape(S, A)


def slater_rho(P: np.ndarray, layers: list[slice], G: np.ndarray, alpha: np.ndarray) -> float:
    """ρ = max_{q ∈ Q(P)} min_i (α_i − G_i q), an LP in (q, ρ)."""
    S, A = G.shape[1:]
    n = S * A
    A_eq, b_eq = flow_matrix(P, layers)
    A_eq = np.hstack([A_eq, np.zeros((S, 1))])
    A_ub = np.hstack([G.reshape(len(G), -1), np.ones((len(G), 1))])  # G_i q + ρ ≤ α_i
    c = np.zeros(n + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=A_ub, b_ub=alpha, A_eq=A_eq, b_eq=b_eq,
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    return float(res.x[-1])


def min_cost(P: np.ndarray, layers: list[slice], g: np.ndarray) -> float:
    """min_{q ∈ Q(P)} gᵀq by backward dynamic programming (one cost)."""
    return -value_iteration(P, layers, -g)


def value_iteration(P: np.ndarray, layers: list[slice], r: np.ndarray) -> float:
    """max_π V^π(x_0) of the unconstrained layered MDP, by backward induction."""
    V = np.zeros(P.shape[0])
    for sl in reversed(layers):
        V[sl] = np.max(r[sl] + P[sl] @ V, axis=1)
    return float(V[0])


def random_means(rng: np.random.Generator, S: int, A: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """r̄ ~ U[0,1]^{S×A}; ḡ_i = (r̄ + U)/2, positively correlated with r̄ so the constraint binds."""
    r = rng.random((S, A))
    g = 0.5 * (r[None] + rng.random((m, S, A)))
    return r, g


def random_kernel(rng: np.random.Generator, layers: list[slice], A: int) -> np.ndarray:
    """P(·|x, a) ~ Dirichlet(1) over the next layer; zero rows on the last decision layer."""
    S = layers[-1].stop
    P = np.zeros((S, A, S))
    for sl, nxt in zip(layers, layers[1:]):
        n = nxt.stop - nxt.start
        P[sl, :, nxt] = rng.dirichlet(np.ones(n), size=(sl.stop - sl.start, A))
    return P


def thresholds_for_rho(P: np.ndarray, layers: list[slice], g: np.ndarray, rho: float) -> np.ndarray:
    """α_i = min_{q} Ḡ_i q + ρ, which gives Slater parameter exactly ρ when m = 1 (≥ ρ otherwise)."""
    return np.array([min_cost(P, layers, gi) + rho for gi in g])
