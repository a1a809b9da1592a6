"""FS-PODB primal learner: fixed-share policy optimisation with dilated bonus (bandit feedback).

Reconstructed (docs/papers/cmdp-bobw.md): per-state exponential weights on importance-weighted Q-estimates of the
Lagrangian loss, computed by backward DP on the empirical model, minus a dilated exploration
bonus (Luo, Wei & Lee 2021, "Policy optimization in adversarial MDPs: improved exploration via
dilated bonuses"), then fixed-share mixing with the uniform policy (Herbster & Warmuth 1998).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from methods.cmdp import _common
from tasks.cmdp import CMDPProblem, CMDPResult


class FsPodb:
    def __init__(self, problem, eta: float, gamma: float, share: float, bonus_scale: float):
        self.pi = _common.uniform_policy(problem)
        self.model = _common.EmpiricalModel(problem)
        self.eta, self.gamma, self.share, self.bonus_scale = eta, gamma, share, bonus_scale
        self.H = problem.n_layers

    def update(self, states: list, actions: list, losses: np.ndarray, scale: float) -> None:
        """One episode: `losses` (L,) the Lagrangian loss at the visited pairs, in [0, scale]."""
        pi, model, gamma = self.pi, self.model, self.gamma
        u = model.occupancy(pi)                                  # (S, A) occupancy under P̂
        loss_hat = np.zeros_like(pi)
        for x, a, loss in zip(states, actions, losses):
            loss_hat[x, a] = loss / (u[x, a] + gamma)            # implicit-exploration IW estimate
        Q = model.q_values(pi, loss_hat)
        u_state = u.sum(axis=1, keepdims=True)                   # (S, 1) q̂(x)
        b = self.bonus_scale * scale * gamma * self.H * np.sum(pi / (u_state * pi + gamma), axis=1)
        B = model.q_values(pi, np.repeat(b[:, None], pi.shape[1], axis=1), dilation=1.0 + 1.0 / self.H)
        self.pi = _common.exp_weights(pi, Q - B, self.eta / scale, self.share)
        model.update(states, actions)


@dataclass(frozen=True)
class Config:
    eta_scale: float = 5.0      # η·√T, primal OMD learning rate (UNVERIFIED; sweep 2, 5, 20)
    gamma_scale: float = 1.0    # γ·√T, implicit exploration (UNVERIFIED)
    bonus_scale: float = 0.0    # β, dilated-bonus multiplier (Luo–Wei–Lee use 3; off: see docstring)
    share_scale: float = 1.0    # σ·T, fixed-share rate (ours: σ ≈ 1/T; UNVERIFIED)
    dual_scale: float = 10.0    # η_λ·L·√T, dual OGD step (UNVERIFIED; sweep 1, 3, 10, 20)

    def __post_init__(self) -> None:
        for name in ("eta_scale", "gamma_scale", "dual_scale"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.bonus_scale < 0 or self.share_scale < 0:
            raise ValueError("bonus_scale and share_scale must be ≥ 0")


def run_primal_dual_po(problem: CMDPProblem, config, ctx: RunContext, constrained: bool) -> CMDPResult:
    T, m, L = problem.T, problem.m, problem.n_layers
    root = np.sqrt(T)
    learner = FsPodb(problem, config.eta_scale / root, config.gamma_scale / root,
                     min(1.0, config.share_scale / T), config.bonus_scale)
    lam, lam_max = np.zeros(m), 0.0
    cap, eta_dual = T ** 0.25, config.dual_scale / (L * root)
    policies, lambdas = np.empty((T, *learner.pi.shape)), np.empty((T, m))
    for t in range(T):
        policies[t], lambdas[t] = learner.pi, lam
        states, actions = _common.sample_episode(problem, learner.pi, ctx.rng)
        r, g = problem.sample_rewards(t, ctx.rng), problem.sample_costs(t, ctx.rng)
        r_vis, g_vis = r[states, actions], g[:, states, actions]          # (L,), (m, L): bandit feedback
        lam_max = max(lam_max, float(np.max(lam)))
        learner.update(states, actions, (1.0 - r_vis) + lam @ g_vis, scale=1.0 + m * lam_max)
        if constrained:
            lam = _common.dual_step(lam, g_vis.sum(axis=1), problem.alpha, eta_dual, cap)
        if t % 1000 == 0:
            ctx.check_deadline()
            ctx.progress(t / T)
    return CMDPResult(policies=policies, lambdas=lambdas if constrained else None)
