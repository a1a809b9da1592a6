"""Rewind-and-repeat at best-of-n's KL (Beirami et al., ICML 2025, §6).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. Keep
sampling from π until the sample lies in the top-p mass of the reward order, then output it.
In the continuous model KL = log(1/p) and the win rate is 1 − p/2. On a finite reference the
top-p mass cuts through one outcome; the sample's quantile is then randomised uniformly within
[F⁻(y), F(y)] (accepted if it exceeds 1 − p), i.e.

    π_RR(y) = |[F⁻(y), F(y)] ∩ [1 − p, 1]| / p,

which is the continuous rule read through the quantile transform (as best-of-n is).

Strength: `p` given → that p. `p = None` (default) → p is solved (bisection; the KL decreases in p)
so that the policy's KL equals the exact KL of best-of-n on the same problem (compare win rates
at equal KL: metric `win_rate_advantage`). Its KL is at most −log π(top) (p = π(top)); if
best-of-n's KL exceeds that, p = π(top) is returned.

Fidelity: reconstructed (docs/papers/best-of-n-kl.md reconstructs the definition; the paper may use a budgeted
variant, UNVERIFIED; the randomised boundary on finite references is ours).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.best_of_n import _common
from tasks.best_of_n import BestOfNProblem, BestOfNResult, bon_kl, kl_divergence, win_rate_of

SWITCHED_OFF = ("a comparator of the paper (rewind-and-repeat at best-of-n's KL, §6): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    p: float | None = None   # p, accepted top mass; None: matched to best-of-n's exact KL

    def __post_init__(self) -> None:
        if self.p is not None and not 0 < self.p <= 1:
            raise ValueError(f"p must lie in (0, 1] (or None to match best-of-n's KL), got {self.p}")


def policy_at(problem: BestOfNProblem, p: float) -> np.ndarray:
    """π_RR for top mass p: the part of each outcome's quantile interval inside [1 − p, 1], over p."""
    at_or_above, above = _common.survival(problem)          # S(y), S⁺(y) along the rank order
    inside = np.maximum(np.minimum(at_or_above, p) - above, 0.0)
    policy = np.zeros_like(inside)
    policy[problem.order] = inside / inside.sum()
    return policy


def _continuous(problem: BestOfNProblem, config: Config) -> BestOfNResult:
    p = config.p if config.p is not None else math.exp(-bon_kl(problem))
    return BestOfNResult(kl=-math.log(p), win_rate=1.0 - p / 2, strength=p)


@method(family="best_of_n", config=Config)
def solve(problem: BestOfNProblem, config: Config, ctx: RunContext) -> BestOfNResult:
    if problem.continuous:
        return _continuous(problem, config)
    top = float(problem.probs[problem.order[_common.top_position(problem)]])
    if config.p is not None:
        p = config.p
    else:
        target = bon_kl(problem)
        kl_of = lambda p: kl_divergence(policy_at(problem, p), problem)  # noqa: E731
        if target <= 0:
            p = 1.0
        elif target >= kl_of(top):
            p = top
        else:
            p = _common.solve_monotone(kl_of, target, top, 1.0)
    policy = policy_at(problem, p)
    return BestOfNResult(kl=kl_divergence(policy, problem), win_rate=win_rate_of(policy, problem), policy=policy,
                  strength=p)
