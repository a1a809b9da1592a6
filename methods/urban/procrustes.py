"""Procrustes: per-city L_mob embeddings, then an orthogonal map of the target space onto the source's.

docs/papers/core-urban.md, baseline (b): the direct-transfer embeddings H_s, H_t (each
city's encoder trained alone on L_mob) aligned post hoc. With no region correspondence the map is
found by Wasserstein–Procrustes (Grave et al., AISTATS 2019), initialised by entropic
Gromov–Wasserstein (methods/urban/_align.py):

    X = (H_s − μ_s)/σ_s,  Y = (H_t − μ_t)/σ_t,   min_{W ∈ O(d), T ∈ Π} Σ_ij T_ij ‖x_i W − y_j‖²,
    H_t ↦ σ_s (Y Wᵀ) + μ_s,   then ridge (α = 1) from the source as in CoRE's protocol.

Fidelity: reconstructed (the paper's baselines were not available; we take orthogonal
Procrustes as a likely alignment add-on). Means and RMS scales are matched as well as the rotation.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.urban._align import standardise, wasserstein_procrustes
from methods.urban._training import mobility_only, separate_embeddings
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SMOKE = {"epochs": 3, "dim": 16, "heads": 2, "subsample": 20, "rounds": 2}


SWITCHED_OFF = ("a baseline (L_mob embeddings aligned post hoc by Wasserstein–Procrustes): there is no mechanism of "
                "the paper to switch off")


@dataclass(frozen=True)
class Config:
    dim: int = 128               # d, region embedding width (as CoRE)
    layers: int = 2              # GAT layers
    heads: int = 8               # attention heads
    epochs: int = 600            # full-batch epochs per city
    lr: float = 1e-3             # Adam learning rate
    subsample: int = 300         # regions per city used to fit W (GW and OT are O(n²) per step)
    gw_eps: float = 5e-3         # ε of the entropic Gromov–Wasserstein initialisation
    ot_eps: float = 2e-2         # ε of the Sinkhorn couplings (relative to the mean cost)
    rounds: int = 10             # alternations OT coupling ↔ Procrustes
    ridge_alpha: float = 1.0     # α of the downstream Ridge

    def __post_init__(self) -> None:
        if min(self.dim, self.layers, self.heads, self.epochs, self.subsample) < 1 or self.rounds < 0:
            raise ValueError(f"need dim, layers, heads, epochs, subsample >= 1 and rounds >= 0; got {self}")
        if not (self.lr > 0 and self.gw_eps > 0 and self.ot_eps > 0) or self.ridge_alpha < 0:
            raise ValueError(f"need lr, gw_eps, ot_eps > 0 and ridge_alpha >= 0; got {self}")


def align_target(h_s, h_t, config: Config, ctx: RunContext):
    """The target embeddings expressed in the source space: σ_s (Y Wᵀ) + μ_s."""
    x, mu_s, sd_s = standardise(h_s)
    y, _, _ = standardise(h_t)
    w = wasserstein_procrustes(x, y, ctx.rng, subsample=config.subsample, gw_eps=config.gw_eps,
                               ot_eps=config.ot_eps, rounds=config.rounds)          # x W ≈ y
    return sd_s * (y @ w.T) + mu_s


@method(family="urban", config=Config, smoke=SMOKE)
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    h_s, h_t = separate_embeddings(problem, mobility_only(config), ctx)
    h_t_aligned = align_target(h_s, h_t, config, ctx)
    return TwoCityResult(predictions=ridge_transfer(h_s, problem.source.labels, h_t_aligned, config.ridge_alpha))
