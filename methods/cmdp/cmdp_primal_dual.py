"""Stochastic-only optimistic primal–dual policy optimisation (Efroni, Mannor & Pirotta 2020).

Paper: baseline for Stradi et al., ICML 2025, arXiv 2410.02269 (a "stochastic-only
primal–dual" comparator); the algorithm is from Efroni, Mannor & Pirotta, "Exploration-
Exploitation in Constrained MDPs", arXiv 2003.02189, §5 (OptPrimalDual-CMDP):

    r̂, ĝ: empirical means of the bandit observations;  b(x,a) = bonus_scale·√(L·log(S A T)/max(1, n(x,a)))
    optimistic r̃ = min(1, r̂ + b),  g̃ = max(0, ĝ − b)
    Q^r, Q^g of π_t on P̂_t (backward DP);   π_{t+1}(·|x) ∝ π_t(·|x)·exp(η (Q^r − λ_t Q^g)(x,·))
    λ_{t+1} = max(0, λ_t + η_λ (V^g(x_0) − α))          (no upper cap: needs stochastic constraints)

It relies on estimated *means*, so adversarial (switching) rewards and costs break its guarantee.
Fidelity: approximate — the transition bonus is folded into the reward/cost bonus (no separate
confidence set on P), and η = eta_scale/√T, η_λ = dual_scale/(L√T) are our constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.cmdp import _common
from tasks.cmdp import CMDPProblem, CMDPResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE: dict = {}


SWITCHED_OFF = ("a baseline of the paper (OptPrimalDual-CMDP, Efroni, Mannor & Pirotta 2020, stochastic only): "
                "there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    eta_scale: float = 5.0      # η·√T, mirror-descent step (Efroni et al.: √(2 log A/(H² T)); ours)
    dual_scale: float = 10.0    # η_λ·L·√T, dual step (ours)
    bonus_scale: float = 0.1    # multiplier of the Hoeffding bonus (ours)

    def __post_init__(self) -> None:
        if not (self.eta_scale > 0 and self.dual_scale > 0 and self.bonus_scale >= 0):
            raise ValueError(f"need eta_scale > 0, dual_scale > 0, bonus_scale ≥ 0; got {self}")


@method(family="cmdp", config=Config, smoke=SMOKE)
def solve(problem: CMDPProblem, config: Config, ctx: RunContext) -> CMDPResult:
    T, m, L = problem.T, problem.m, problem.n_layers
    pi, model = _common.uniform_policy(problem), _common.EmpiricalModel(problem)
    n = np.zeros_like(pi)
    r_sum, g_sum = np.zeros_like(pi), np.zeros((m, *pi.shape))
    lam = np.zeros(m)
    eta, eta_dual = config.eta_scale / np.sqrt(T), config.dual_scale / (L * np.sqrt(T))
    log_term = L * np.log(problem.n_states * problem.n_actions * T)
    policies, lambdas = np.empty((T, *pi.shape)), np.empty((T, m))
    for t in range(T):
        policies[t], lambdas[t] = pi, lam
        states, actions = _common.sample_episode(problem, pi, ctx.rng)
        r, g = problem.sample_rewards(t, ctx.rng), problem.sample_costs(t, ctx.rng)
        # optimistic estimates from the episodes before t, then record this episode's feedback
        b = config.bonus_scale * np.sqrt(log_term / np.maximum(1.0, n))
        r_tilde = np.minimum(1.0, r_sum / np.maximum(1.0, n) + b)
        g_tilde = np.maximum(0.0, g_sum / np.maximum(1.0, n) - b)
        Q_r = model.q_values(pi, r_tilde)
        Q_g = np.stack([model.q_values(pi, g_tilde[i]) for i in range(m)])        # (m, S, A)
        v_g = np.array([np.sum(pi[0] * Q_g[i, 0]) for i in range(m)])           # V^g(x_0)
        pi = _common.exp_weights(pi, -(Q_r - np.tensordot(lam, Q_g, axes=1)), eta, 0.0)
        lam = np.maximum(0.0, lam + eta_dual * (v_g - problem.alpha))
        for x, a in zip(states, actions):
            n[x, a] += 1.0
            r_sum[x, a] += r[x, a]
            g_sum[:, x, a] += g[:, x, a]
        model.update(states, actions)
        if t % 1000 == 0:
            ctx.check_deadline()
            ctx.progress(t / T)
    return CMDPResult(policies=policies, lambdas=lambdas)
