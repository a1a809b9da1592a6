"""Full-feedback occupancy-measure primal–dual predecessor (Stradi/Germano et al. 2023–24).

Paper: baseline for Stradi et al., ICML 2025, arXiv 2410.02269 (its predecessor BoBW method); the algorithm is the
best-of-both-worlds method of Germano, Stradi et al., "A Best-of-Both-Worlds Algorithm for
Constrained MDPs with Long-Term Constraints", arXiv 2304.14326: full feedback (the whole r_t,
G_t are revealed after each episode), primal OGD on occupancy measures, dual OGD on λ:

    q_{t+1} = Π_{Q(P̂_t)}(q_t + η (r_t − Σ_i λ_{t,i} G_{t,i}))      (Euclidean projection)
    π_{t+1}(a|x) = q_{t+1}(x,a)/Σ_a q_{t+1}(x,a)
    λ_{t+1} = Π_{[0, T^{1/4}]^m}(λ_t + η_λ (G_t q_t − α))

Fidelity: approximate. The predecessor projects onto the occupancy measures of a transition
confidence set (a convex programme per episode); we project onto Q(P̂_t) of the empirical kernel,
solved by Dykstra's alternating projections (affine flow constraints / non-negative orthant,
`dykstra_iters` rounds, warm-started at the previous iterate). η = eta_scale/√T and
η_λ = dual_scale/(L√T) are our constants. It is an upper reference (sees full vectors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.cmdp import _common
from tasks.cmdp import CMDPProblem, CMDPResult, flow_matrix

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE: dict = {}


SWITCHED_OFF = ("a baseline of the paper (its full-feedback predecessor, Germano, Stradi et al. 2023): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    eta_scale: float = 1.0      # η·√T, primal OGD step on q (ours)
    dual_scale: float = 10.0    # η_λ·L·√T, dual OGD step (ours)
    dykstra_iters: int = 50     # rounds of Dykstra's projection per episode

    def __post_init__(self) -> None:
        if not (self.eta_scale > 0 and self.dual_scale > 0 and self.dykstra_iters >= 1):
            raise ValueError(f"need eta_scale > 0, dual_scale > 0, dykstra_iters ≥ 1; got {self}")


def project_occupancy(y: np.ndarray, A_eq: np.ndarray, b_eq: np.ndarray, iters: int) -> np.ndarray:
    """Euclidean projection of y onto {q ≥ 0, A_eq q = b_eq} by Dykstra's algorithm."""
    pinv = np.linalg.pinv(A_eq)
    x, p, qv = y.copy(), np.zeros_like(y), np.zeros_like(y)
    for _ in range(iters):
        z = x + p
        a = z - pinv @ (A_eq @ z - b_eq)          # onto the affine flow constraints
        p = z - a
        w = a + qv
        x = np.maximum(w, 0.0)                    # onto the orthant
        qv = w - x
    return x


def policy_of(q: np.ndarray) -> np.ndarray:
    """π(a|x) = q(x,a)/q(x); uniform where q(x) = 0."""
    mass = q.sum(axis=1, keepdims=True)
    return np.where(mass > 1e-12, q / np.maximum(mass, 1e-12), 1.0 / q.shape[1])


@method(family="cmdp", config=Config, smoke=SMOKE)
def solve(problem: CMDPProblem, config: Config, ctx: RunContext) -> CMDPResult:
    T, m, L = problem.T, problem.m, problem.n_layers
    model = _common.EmpiricalModel(problem)
    q = model.occupancy(_common.uniform_policy(problem))
    lam = np.zeros(m)
    eta, eta_dual, cap = config.eta_scale / np.sqrt(T), config.dual_scale / (L * np.sqrt(T)), T ** 0.25
    policies, lambdas = np.empty((T, *q.shape)), np.empty((T, m))
    for t in range(T):
        pi = policy_of(q)
        policies[t], lambdas[t] = pi, lam
        states, actions = _common.sample_episode(problem, pi, ctx.rng)
        r, g = problem.sample_rewards(t, ctx.rng), problem.sample_costs(t, ctx.rng)   # full feedback
        cost = np.einsum("isa,sa->i", g, q)
        model.update(states, actions)
        A_eq, b_eq = flow_matrix(model.P, problem.layers)
        y = (q + eta * (r - np.tensordot(lam, g, axes=1))).reshape(-1)
        q = project_occupancy(y, A_eq, b_eq, config.dykstra_iters).reshape(q.shape)
        lam = _common.dual_step(lam, cost, problem.alpha, eta_dual, cap)
        if t % 1000 == 0:
            ctx.check_deadline()
            ctx.progress(t / T)
    return CMDPResult(policies=policies, lambdas=lambdas)
