"""Uniform reference over L outcomes with distinct rewards (Beirami et al., ICML 2025, §3).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. π is uniform
over an alphabet of size L, and the rewards r(y_k) = k are distinct, so π_n(y_k) = (k^n − (k−1)^n)/L^n.
The true KL saturates at log L once n ≳ L while log n − (n−1)/n keeps growing; L = 2 is the
two-equiprobable-outputs counterexample of §3 (KL → log 2).

Fidelity: faithful (the reference is fully specified by L). The paper's grid is L ∈ {10, 10², 10³,
10⁴} and log-spaced n up to ~10⁴; the table of docs/papers/best-of-n-kl.md is at n ∈ {2, 16, 64, 256, 1024}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.best_of_n import BestOfNProblem


@dataclass(frozen=True)
class Config:
    L: int = 10      # L, alphabet size (paper: 10, 1e2, 1e3, 1e4)
    n: int = 16      # n, draws of best-of-n

    def __post_init__(self) -> None:
        if self.L < 1:
            raise ValueError(f"L must be >= 1, got {self.L}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")


@task(family="best_of_n", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> BestOfNProblem:
    """The instance is deterministic; ctx is unused."""
    return BestOfNProblem(n=config.n, probs=np.full(config.L, 1.0 / config.L), rewards=np.arange(config.L, dtype=float))
