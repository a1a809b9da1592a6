"""Fig. 1's toy SEMs: weakly vs strongly identifiable mechanisms with one or two parents.

Paper: Li et al., ICML 2025, §3, Fig. 1 and Theorem 3.3. With one parent (a):
  strong  y = x² + N          (x is not a function of y: the reverse regression fits badly)
  weak    y = x³ + x + N      (∂F/∂x = 3x² + 1 ∈ [1, 13] on [−2, 2]: an inverse exists, the
                               reverse regression also fits well; only residual independence tells)
With two parents (b), reconstructed (the figure's exact equations were not available to us):
  strong  z = x² + y² + N
  weak    z = x³ + x + y³ + y + N
Causes x, y ~ U(−2, 2) (or N(0, 1)), N ~ N(0, noise²). Columns are randomly permuted (`shuffle`) so
that a method breaking ties by column index gets no free answer.

Fidelity: faithful for (a); reconstructed for (b).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.causal import CausalProblem, _sem

MECHANISMS = ("weak", "strong")
CAUSES = ("uniform", "normal")

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"n": 200}


@dataclass(frozen=True)
class Config:
    mechanism: str = "weak"      # weak (x³ + x) or strong (x²) identifiability
    parents: int = 1             # 1: bivariate (Fig. 1a), 2: trivariate (Fig. 1b)
    n: int = 1000                # sample size
    cause: str = "uniform"       # law of the causes: U(−2, 2) or N(0, 1)
    noise_scale: float = 1.0     # std of N
    standardize: bool = False    # scale every column to mean 0, std 1
    shuffle: bool = True         # randomly permute the columns

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism {self.mechanism!r} unknown; allowed: {', '.join(MECHANISMS)}")
        if self.cause not in CAUSES:
            raise ValueError(f"cause {self.cause!r} unknown; allowed: {', '.join(CAUSES)}")
        if self.parents not in (1, 2):
            raise ValueError(f"parents must be 1 or 2, got {self.parents}")
        if self.n < 10 or self.noise_scale <= 0:
            raise ValueError(f"need n >= 10 and noise_scale > 0; got n={self.n}, noise_scale={self.noise_scale}")


def effect(causes: np.ndarray, mechanism: str) -> np.ndarray:
    """Σ_k g(x_k) with g(x) = x³ + x (weak) or x² (strong)."""
    g = causes**3 + causes if mechanism == "weak" else causes**2
    return g.sum(axis=1)


@task(family="causal", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> CausalProblem:
    rng, k = ctx.rng, config.parents
    if config.cause == "uniform":
        causes = rng.uniform(-2.0, 2.0, size=(config.n, k))
    else:
        causes = rng.standard_normal((config.n, k))
    target = effect(causes, config.mechanism) + rng.normal(scale=config.noise_scale, size=config.n)
    data = np.column_stack([causes, target])
    adj = np.zeros((k + 1, k + 1), dtype=int)
    adj[:k, k] = 1
    names = ("x", "y", "z")[: k + 1]
    if config.shuffle:
        perm = rng.permutation(k + 1)
        data, adj, names = data[:, perm], adj[np.ix_(perm, perm)], tuple(names[p] for p in perm)
    if config.standardize:
        data = _sem.standardize(data)
    return CausalProblem(data=data, adjacency=adj, names=names, standardized=config.standardize)
