"""Clone-robust weighted MLE: Bradley–Terry terms weighted by the alternatives' Voronoi volumes (paper Eq. 2).

Procaccia, Schiffer & Zhang, "Clone-Robust AI Alignment", ICML 2025, arXiv 2501.09254
(paper Eq. 2; Monte-Carlo Voronoi weights):

    w_M(y) = vol{s ∈ S : y is the nearest element of M to s} / vol(S)
    r̂_w = argmin_r − Σ_{a ≠ b} w_a w_b p_D(a ≻ b) log σ(r_a − r_b) + (λ/2) Σ_a w_a r_a²

A clone shares its original's Voronoi cell, so the pair terms it adds carry the weight its
original loses: the objective, hence r̂_w, moves by O(ε) (exactly 0 for an exact duplicate).
The weights are Monte-Carlo volumes with `samples` uniform points of S (ties split equally); the
same points measure both datasets (common random numbers), so an exact duplicate halves its
original's count exactly.

Fidelity: reconstructed (the objective and weights from a secondary summary of the paper). Tabular
rewards instead of the paper's 2-layer MLP on PCA'd embeddings; λ = 0.01 (not in the available
text); S is the task's box (the paper: the unit cube, or a box scaled to the data).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._bt import fit_bt, voronoi_weights
from tasks.reward_learning import ClonesProblem, ClonesResult

SMOKE = {"samples": 20_000}


# Voronoi weighting off: with w ≡ 1 the objective of Eq. 2 is Eq. 1's (methods/reward_learning/_bt.py), the standard
# BT MLE with the same λ: mle, bit for bit (tests/methods/reward_learning/test_switched_off.py)
SWITCHED_OFF = {"w ≡ 1 (unweighted MLE)": ("mle", {})}


@dataclass(frozen=True)
class Config:
    lam: float = 0.01          # λ, L2 coefficient (weighted by w) on the rewards
    samples: int = 200_000     # N, Monte-Carlo points for the Voronoi volumes (≥ 2·10^5 for d ≤ 8)

    def __post_init__(self) -> None:
        if not self.lam > 0 or self.samples < 1:
            raise ValueError(f"lam must be > 0 and samples >= 1, got lam={self.lam}, samples={self.samples}")


@method(family="reward_learning", config=Config, accepts=ClonesProblem, smoke=SMOKE)
def solve(problem: ClonesProblem, config: Config, ctx: RunContext) -> ClonesResult:
    w, w_clones = voronoi_weights([problem.points, problem.clone_points], problem.box, config.samples, ctx.rng)
    return ClonesResult(reward=fit_bt(problem.win, w, config.lam),
                        clone_reward=fit_bt(problem.clone_win, w_clones, config.lam),
                        weights=w, clone_weights=w_clones, lam=config.lam)
