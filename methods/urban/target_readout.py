"""Target readout: the mobility embeddings' positive control (an alignment learned from the target city's labels).

The transfer claims ask whether a representation learned from mobility (CoRE's encoder and L_mob,
docs/papers/core-urban.md) can carry the indicators from one city to the other. That needs, first,
that the representation holds the indicators at all. This method trains the target city's encoder
on L_mob alone (`mobility_only`, as `direct_transfer`) and reads the indicators off the embeddings with
the protocol's ridge (α = 1), fitted on the target's *own* labels: each region is predicted by a
ridge fitted on the other folds (`folds`-fold cross-fitting, so no region sees its own label). It
is the best any alignment of these embeddings to the source city could do with a linear readout.
If its target R² is not above 0 (the criterion of `core-beats-source-mean`), no transfer of these
embeddings can be measured, and the CoRE claims read inconclusive (leaderboard/papers/core-urban.yaml,
`controls:`).

`shuffle`: the null. The embeddings' rows are permuted among the target's regions before the
readout, so the representation keeps its distribution but not its link to the regions; it must
not reach R² > 0.

Fidelity: not a paper's method (a control of our world; it uses target labels, which no transfer
method may).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.urban._training import mobility_only, train_embeddings
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SMOKE = {"epochs": 3, "dim": 16, "heads": 2}


SWITCHED_OFF = ("a reference, not a paper's method (a readout fitted on the target city's own labels: the "
                "embeddings' positive control): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    dim: int = 128               # d, region embedding width (as CoRE)
    layers: int = 2              # GAT layers
    heads: int = 8               # attention heads
    epochs: int = 600            # full-batch epochs on the target city
    lr: float = 1e-3             # Adam learning rate
    ridge_alpha: float = 1.0     # α of the readout Ridge (the protocol's)
    folds: int = 5               # cross-fitting folds over the target's regions
    shuffle: bool = False        # the null: embedding rows permuted among the target's regions

    def __post_init__(self) -> None:
        if min(self.dim, self.layers, self.heads, self.epochs) < 1 or not self.lr > 0 or self.ridge_alpha < 0:
            raise ValueError(f"need dim, layers, heads, epochs >= 1, lr > 0, ridge_alpha >= 0; got {self}")
        if self.folds < 2:
            raise ValueError(f"folds must be >= 2 (cross-fitting), got {self.folds}")


def cross_fitted(embeddings: np.ndarray, labels: np.ndarray, folds: int, alpha: float,
                 rng: np.random.Generator) -> np.ndarray:
    """Each region's prediction from a ridge fitted on the regions of the other folds (random, near-equal folds)."""
    order = rng.permutation(len(embeddings))
    predictions = np.empty_like(labels, dtype=float)
    for held in np.array_split(order, folds):
        fit = np.setdiff1d(order, held)
        predictions[held] = ridge_transfer(embeddings[fit], labels[fit], embeddings[held], alpha)
    return predictions


@method(family="urban", config=Config, smoke=SMOKE,
        reference="fits the readout on the target city's own labels: the mobility embeddings' positive control")
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    if config.folds > problem.target.n:
        raise ValueError(f"folds ({config.folds}) exceeds the target's {problem.target.n} regions")
    (h_t,) = train_embeddings([problem.target], mobility_only(config), ctx, tag="target_")
    if config.shuffle:
        h_t = h_t[ctx.rng.permutation(len(h_t))]
    return TwoCityResult(predictions=cross_fitted(h_t, problem.target.labels, config.folds, config.ridge_alpha,
                                                  ctx.rng))
