"""Continuous reference: every outcome has vanishing probability (Beirami et al., ICML 2025, §3, §7).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. Outcomes are
identified with their reward quantile u ~ Uniform(0, 1) under π; best-of-n is the law of the
maximum of n uniforms, density n·u^{n−1}, so KL(π_n‖π) = log n − (n−1)/n exactly (the limit in
which Theorem 3.1's bound is attained) and the win rate is n/(n+1) (Theorem 5.3, attained). This is
the model of the §7 win-rate-vs-KL trade-off (best-of-n vs KL-regularised optimum vs
rewind-and-repeat, paper §7).

Fidelity: faithful (closed forms). The BestOfNProblem carries no outcome arrays (probs = None).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.best_of_n import BestOfNProblem


@dataclass(frozen=True)
class Config:
    n: int = 16      # n, draws of best-of-n (the §7 curves run n up to ~1000)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")


@task(family="best_of_n", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> BestOfNProblem:
    """The continuous reference; ctx is unused."""
    return BestOfNProblem(n=config.n, probs=None, rewards=None)
