"""Shared pieces of the cmdp methods: trajectories, the empirical model, DP on it, the dual step.

Everything here only touches what a bandit-feedback learner may see: the trajectory it sampled
and the reward/cost values at the visited (x, a) pairs (full-feedback methods take the whole
realised vectors through `CMDPProblem.sample_rewards/sample_costs` themselves).
"""

from __future__ import annotations

import numpy as np

from tasks.cmdp import CMDPProblem, occupancy


def uniform_policy(problem: CMDPProblem) -> np.ndarray:
    return np.full((problem.n_states, problem.n_actions), 1.0 / problem.n_actions)


def sample_episode(problem: CMDPProblem, policy: np.ndarray, rng: np.random.Generator) -> tuple[list, list]:
    """One trajectory (x_0, a_0, …, x_{L−1}, a_{L−1}) under π and the true (hidden) P."""
    states, actions = [], []
    x = 0
    u = rng.random(2 * problem.n_layers)
    for k in range(problem.n_layers):
        a = min(int(np.searchsorted(np.cumsum(policy[x]), u[2 * k])), problem.n_actions - 1)
        states.append(x)
        actions.append(a)
        if k + 1 < problem.n_layers:
            x = min(int(np.searchsorted(np.cumsum(problem.P[x, a]), u[2 * k + 1])), problem.n_states - 1)
    return states, actions


class EmpiricalModel:
    """P̂(x'|x,a) = N(x,a,x')/N(x,a); uniform over the next layer while N(x,a) = 0."""

    def __init__(self, problem: CMDPProblem):
        S, A = problem.n_states, problem.n_actions
        self.layers = problem.layers
        self.counts = np.zeros((S, A, S))
        self.prior = np.zeros((S, A, S))
        for sl, nxt in zip(problem.layers, problem.layers[1:]):
            self.prior[sl, :, nxt] = 1.0 / (nxt.stop - nxt.start)
        self.P = self.prior.copy()

    def update(self, states: list, actions: list) -> None:
        for x, a, x_next in zip(states, actions, states[1:]):
            self.counts[x, a, x_next] += 1.0
            self.P[x, a] = self.counts[x, a] / self.counts[x, a].sum()

    def visits(self) -> np.ndarray:
        """N(x, a) of transitions out of (x, a)."""
        return self.counts.sum(axis=2)

    def occupancy(self, policy: np.ndarray) -> np.ndarray:
        return occupancy(self.P, self.layers, policy)

    def q_values(self, policy: np.ndarray, loss: np.ndarray, dilation: float = 1.0) -> np.ndarray:
        """Q(x,a) = loss(x,a) + dilation·Σ_{x'} P̂(x'|x,a) Σ_{a'} π(a'|x') Q(x',a') by backward DP."""
        Q = np.zeros_like(loss)
        V = np.zeros(loss.shape[0])
        for sl in reversed(self.layers):
            Q[sl] = loss[sl] + dilation * (self.P[sl] @ V)
            V[sl] = np.sum(policy[sl] * Q[sl], axis=1)
        return Q


def dual_step(lam: np.ndarray, cost: np.ndarray, alpha: np.ndarray, eta: float, cap: float) -> np.ndarray:
    """Projected OGD on the Lagrangian's dual: λ ← Π_[0, cap](λ + η (ĉ − α))."""
    return np.clip(lam + eta * (cost - alpha), 0.0, cap)


def exp_weights(policy: np.ndarray, scores: np.ndarray, eta: np.ndarray | float, share: float) -> np.ndarray:
    """Per-state OMD with negative entropy (π ∝ π·exp(−η·scores)), then fixed share with uniform."""
    logits = np.log(policy) - eta * scores
    logits -= logits.max(axis=1, keepdims=True)
    new = np.exp(logits)
    new /= new.sum(axis=1, keepdims=True)
    return (1.0 - share) * new + share / policy.shape[1]
