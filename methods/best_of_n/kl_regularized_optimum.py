"""KL-regularised RL optimum at best-of-n's KL (Beirami et al., ICML 2025, §7).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. The policy
maximising win rate − β·KL(·‖π): with the win-rate reward q(y) = P(y ≻ z) + ½P(y = z), z ~ π
(the mid-quantile F⁻(y) + ½π(y), on the family's tie-broken order), the maximiser of
E[q] − β·KL is the tilt

    π_β(y) ∝ π(y)·exp(q(y)/β),

so it attains the highest win rate of all policies at its KL (W is linear in the policy): the
frontier best-of-n is compared with. In the continuous model (paper §7) q = u and
p_β(u) ∝ exp(u/β) on [0, 1], with closed forms W = 1/(1 − e^{−a}) − 1/a and
KL = a·W − log((e^a − 1)/a), a = 1/β (a quadrature gives the same).

Strength: `beta` given → that β. `beta = None` (default) → β is solved (bisection) so that the
policy's KL equals the exact KL of best-of-n on the same problem, which makes the win rates
comparable at equal KL (metric `win_rate_advantage`). The KL of the tilt is at most
−log π(top) (the point mass on the top outcome, β → 0); if best-of-n's KL exceeds it, the point
mass is returned (β = 0), which has the highest win rate of any policy anyway.

Fidelity: reconstructed (the paper plots the continuous curve; the discrete tilt by the
win-rate reward is our extension to finite references).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.best_of_n import _common
from tasks.best_of_n import BestOfNProblem, BestOfNResult, bon_kl, kl_divergence, mid_quantiles, win_rate_of

SWITCHED_OFF = ("a comparator of the paper (the KL-regularised RL optimum at best-of-n's KL, §7): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    beta: float | None = None   # β; None: matched to best-of-n's exact KL

    def __post_init__(self) -> None:
        if self.beta is not None and not self.beta > 0:
            raise ValueError(f"beta must be > 0 (or None to match best-of-n's KL), got {self.beta}")


def tilt(problem: BestOfNProblem, a: float) -> np.ndarray:
    """π_a(y) ∝ π(y)·exp(a·q(y)) (a = 1/β); a = inf: the point mass on the top outcome."""
    q, probs = mid_quantiles(problem), problem.probs
    support = probs > 0
    policy = np.zeros_like(probs)
    if math.isinf(a):
        policy[problem.order[_common.top_position(problem)]] = 1.0
        return policy
    logw = np.log(probs[support]) + a * q[support]
    w = np.exp(logw - logw.max())
    policy[support] = w / w.sum()
    return policy


def _continuous(problem: BestOfNProblem, config: Config) -> BestOfNResult:
    if config.beta is not None:
        a = 1.0 / config.beta
    else:
        target = bon_kl(problem)
        kl_of = lambda a: _common.continuous_tilt(a)[0]  # noqa: E731
        a = 0.0 if target <= 0 else _common.solve_monotone(kl_of, target, 0.0, _common.grow_bracket(kl_of, target))
    kl, win = _common.continuous_tilt(a)
    return BestOfNResult(kl=kl, win_rate=win, strength=1.0 / a if a > 0 else None)


@method(family="best_of_n", config=Config)
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    if problem.continuous:
        return _continuous(problem, config)
    if config.beta is not None:
        a = 1.0 / config.beta
    else:
        target = bon_kl(problem)
        kl_of = lambda a: kl_divergence(tilt(problem, a), problem)  # noqa: E731
        max_kl = kl_divergence(tilt(problem, math.inf), problem)
        if target <= 0:
            a = 0.0
        elif target >= max_kl:
            a = math.inf
        else:
            hi = _common.grow_bracket(kl_of, target, limit=1e15)
            a = math.inf if kl_of(hi) < target else _common.solve_monotone(kl_of, target, 0.0, hi)
    policy = tilt(problem, a)
    return BestOfNResult(kl=kl_divergence(policy, problem), win_rate=win_rate_of(policy, problem), policy=policy,
                  strength=(0.0 if math.isinf(a) else 1.0 / a) if a > 0 else None)
