"""Direct transfer: each city's region embeddings trained alone on L_mob, the source ridge reused on the target.

The "no alignment" stand-in of docs/papers/core-urban.md (baseline (a)): CoRE's per-city
encoder (free table → 2 GAT layers, PReLU) trained with the intra-city mobility loss only,

    L_mob,c = −Σ_{M_ij > 0} M_ij log softmax_j(h_i·h_j),   c ∈ {source, target}, separately,

then ridge (α = 1) fitted on the source embeddings and labels and applied to the target's. Nothing
ties the two embedding spaces together, which is what CoRE's alignment losses add.

Fidelity: reconstructed (the paper's baseline list was not available; this is CoRE without
L_align and L_rec, each city with its own PReLU, as our plan proposes).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.urban._training import mobility_only, separate_embeddings
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SMOKE = {"epochs": 3, "dim": 16, "heads": 2}


SWITCHED_OFF = ("a baseline (CoRE's encoders trained apart on L_mob, no alignment): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    dim: int = 128               # d, region embedding width (as CoRE)
    layers: int = 2              # GAT layers
    heads: int = 8               # attention heads
    epochs: int = 600            # full-batch epochs per city
    lr: float = 1e-3             # Adam learning rate
    ridge_alpha: float = 1.0     # α of the downstream Ridge

    def __post_init__(self) -> None:
        if min(self.dim, self.layers, self.heads, self.epochs) < 1 or not self.lr > 0 or self.ridge_alpha < 0:
            raise ValueError(f"need dim, layers, heads, epochs >= 1, lr > 0, ridge_alpha >= 0; got {self}")


@method(family="urban", config=Config, smoke=SMOKE)
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    h_s, h_t = separate_embeddings(problem, mobility_only(config), ctx)
    return TwoCityResult(predictions=ridge_transfer(h_s, problem.source.labels, h_t, config.ridge_alpha))
