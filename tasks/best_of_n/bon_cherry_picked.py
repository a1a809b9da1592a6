"""Cherry-picked reference: the best outputs are rare (Beirami et al., ICML 2025, §3).

Paper: "Theoretical Guarantees on the Best-of-n Alignment Policy", arXiv 2401.01879. The top_k
highest-reward outputs carry probability top_prob each (1e-4 by default) and the other L − top_k
share the rest uniformly; rewards r(y_k) = k are distinct. As n crosses 1/(top_k·top_prob) best-of-n
moves its mass onto the rare top outputs and the KL jumps (a staircase in n), while
log n − (n−1)/n is off by a wide margin in between (the true KL first saturates near
log(L − top_k)).

Fidelity: reconstructed. The paper's exact cherry-picked distributions are not accessible
(UNVERIFIED); this is the construction of docs/papers/best-of-n-kl.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.best_of_n import BestOfNProblem


@dataclass(frozen=True)
class Config:
    L: int = 100            # L, number of outputs
    top_k: int = 1          # how many of the highest-reward outputs are rare
    top_prob: float = 1e-4  # π of each rare top output (UNVERIFIED; our example)
    n: int = 16             # n, draws of best-of-n

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not 1 <= self.top_k < self.L:
            raise ValueError(f"need 1 <= top_k < L, got top_k={self.top_k}, L={self.L}")
        if not (self.top_prob > 0 and self.top_k * self.top_prob < 1):
            raise ValueError("need top_prob > 0 and top_k·top_prob < 1, "
                             f"got top_prob={self.top_prob}, top_k={self.top_k}")


@task(family="best_of_n", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> BestOfNProblem:
    """The instance is deterministic; ctx is unused."""
    bulk = config.L - config.top_k
    probs = np.full(config.L, (1.0 - config.top_k * config.top_prob) / bulk)
    probs[bulk:] = config.top_prob          # the top_k highest rewards are the last indices
    return BestOfNProblem(n=config.n, probs=probs, rewards=np.arange(config.L, dtype=float))
