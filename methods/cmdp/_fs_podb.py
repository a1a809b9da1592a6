"""FS-PODB primal learner: fixed-share policy optimisation with dilated bonus (bandit feedback).

Reconstructed (docs/papers/cmdp-bobw.md): per-state exponential weights on importance-weighted Q-estimates of the
Lagrangian loss, computed by backward DP on the empirical model, minus a dilated exploration
bonus (Luo, Wei & Lee 2021, "Policy optimization in adversarial MDPs: improved exploration via
dilated bonuses"), then fixed-share mixing with the uniform policy (Herbster & Warmuth 1998).
"""

from __future__ import annotations

import numpy as np

from methods.cmdp import _common


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
