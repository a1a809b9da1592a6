"""CoRE: per-city GAT region encoders aligned by latent-manifold and cycle-consistent region-level losses.

Chen, Jia, Li, Jia, Zhao, Dai & Huang, "Cross-City Latent Space Alignment for Consistency Region
Embedding", ICML 2025 (OpenReview u5yUsOm7qv; no arXiv id; code AIMUrban/CoRE,
docs/papers/core-urban.md). As the released `Model/CoRE.py` and `train.py`:

    H_c = GAT_2(PReLU(GAT_1(E_c)))  on the mobility graph of city c (E_c a free table)
    L_mob,c   = −Σ_{M_ij > 0} M_ij log softmax_j(h_i·h_j)                       (intra-city mobility)
    L_align   = mean_a ‖D_s[a] − D_t[a]‖²,  D_c = 1 − S_c S_cᵀ,  S_c = rownorm(Q H_cᵀ), Q ~ N(0, I)
    L_rec     = mean_i ‖(A_st A_ts)[i] − A_s[i]‖² + mean_j ‖(A_ts A_st)[j] − A_t[j]‖²,  A_xy = W_q H_x (W_k H_y)ᵀ/√d
    L         = L_mob,s + L_mob,t + L_rec + L_align,   Adam 1e-3, full batch

then the zero-shot transfer protocol: ridge (α = 1) fitted on the source embeddings and labels,
applied to the target embeddings (negatives clipped to 0 by the judge).

Fidelity: faithful to the released code, down-scaled only through the config (the task's cities
have hundreds of regions; SMOKE runs a few epochs). Deviations: torch_geometric's GATConv is
re-written densely (same defaults: mean-filled self loops, LeakyReLU 0.2, heads averaged, Glorot
init); F.pairwise_distance's 1e-6 offset is dropped; the released code saves embeddings every 50
epochs without a selection rule, here the last epoch's are used; seeding through the run's
generator (the release sets none).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.urban._training import Schedule, train_embeddings
from tasks.urban import TwoCityProblem, TwoCityResult, ridge_transfer

SMOKE = {"epochs": 3, "dim": 16, "probes": 32, "heads": 2}


# Alignment off: with λ_align = λ_rec = 0 the loss is L_mob,s + L_mob,t and nothing couples the cities (_training.
# train_embeddings: each encoder with its own PReLU, no W_q, W_k), CoRE's encoders trained without its latent-manifold
# and cycle-consistency losses; the claims' negative controls run this cell
SWITCHED_OFF = {"no alignment (λ_align = λ_rec = 0)": {"align_weight": 0.0, "rec_weight": 0.0}}


@dataclass(frozen=True)
class Config:
    dim: int = 128               # d, region embedding width (train.py: d_feature = 128)
    layers: int = 2              # GAT layers (gat_layers = 2)
    heads: int = 8               # attention heads per GAT layer (num_heads = 8)
    epochs: int = 600            # full-batch epochs (epochs = 600)
    lr: float = 1e-3             # Adam learning rate
    probes: int = 1000           # m, probe directions Q ∈ R^{m×d} per step (sample_num = 1000)
    align_weight: float = 1.0    # weight of L_align (1 in the release)
    rec_weight: float = 1.0      # weight of L_rec (1 in the release)
    ridge_alpha: float = 1.0     # α of the downstream Ridge (evaluator_cross_city.py)

    def __post_init__(self) -> None:
        if self.dim < 1 or self.layers < 1 or self.heads < 1 or self.epochs < 1 or self.probes < 1:
            raise ValueError(f"dim, layers, heads, epochs, probes must be >= 1; got {self.dim}, {self.layers}, "
                             f"{self.heads}, {self.epochs}, {self.probes}")
        if not self.lr > 0 or self.align_weight < 0 or self.rec_weight < 0 or self.ridge_alpha < 0:
            raise ValueError(f"need lr > 0 and align_weight, rec_weight, ridge_alpha >= 0; got {self.lr}, "
                             f"{self.align_weight}, {self.rec_weight}, {self.ridge_alpha}")


def schedule(config) -> Schedule:
    return Schedule(config.dim, config.layers, config.heads, config.epochs, config.lr, config.probes,
                    config.align_weight, config.rec_weight)


@method(family="urban", config=Config, smoke=SMOKE)
def solve(problem: TwoCityProblem, config: Config, ctx: RunContext) -> TwoCityResult:
    h_s, h_t = train_embeddings([problem.source, problem.target], schedule(config), ctx)
    return TwoCityResult(predictions=ridge_transfer(h_s, problem.source.labels, h_t, config.ridge_alpha))
