"""Random references, with or without reward ties (Beirami et al., ICML 2025, Theorems 3.1 and 5.3).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. Theorem 3.1
(KL(π_n‖π) ≤ log n − (n−1)/n) and Theorem 5.3 (win rate ≤ n/(n+1)) hold for every reference;
this task draws one: π ~ Dirichlet(α·1_L) and rewards either i.i.d. N(0, 1) (distinct almost
surely, `reward_levels = 0`) or uniform over `reward_levels` integer levels, so that ties occur.
Ties are broken by the fixed total order of the family (reward, then index; after Assumption 2.1), on which
the formulas hold. Small α gives spiky references (large atoms, where the formula is far off).

Randomness: with `world_seed = None` the reference comes from the run seed (the task's own random
stream), so seeds 0..S−1 are S different references; an integer `world_seed` fixes it.

Fidelity: faithful to the theorems' setting; the Dirichlet family is our choice (the paper states
the bounds for all references). Outcomes of zero probability (Dirichlet underflow at tiny α) are
kept and get π_n = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.best_of_n import BestOfNProblem


@dataclass(frozen=True)
class Config:
    L: int = 50                     # L, number of outcomes
    n: int = 16                     # n, draws of best-of-n
    alpha: float = 1.0              # α of the symmetric Dirichlet the reference is drawn from
    reward_levels: int = 0          # 0: distinct N(0,1) rewards; k > 0: rewards uniform over k levels (ties)
    world_seed: int | None = None   # None: the reference comes from the run seed

    def __post_init__(self) -> None:
        if self.L < 1:
            raise ValueError(f"L must be >= 1, got {self.L}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")
        if self.reward_levels < 0:
            raise ValueError(f"reward_levels must be >= 0 (0 = distinct rewards), got {self.reward_levels}")


@task(family="best_of_n", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> BestOfNProblem:
    rng = ctx.rng if config.world_seed is None else np.random.default_rng(config.world_seed)
    probs = rng.dirichlet(np.full(config.L, config.alpha))
    if not (np.all(np.isfinite(probs)) and probs.sum() > 0):  # all gamma draws underflowed (α ≪ 1)
        probs = np.eye(config.L)[rng.integers(config.L)]
    if config.reward_levels == 0:
        rewards = rng.standard_normal(config.L)
    else:
        rewards = rng.integers(config.reward_levels, size=config.L).astype(float)
    return BestOfNProblem(n=config.n, probs=probs / probs.sum(), rewards=rewards)
