"""Regularised Bradley–Terry MLE, one free reward per alternative (paper Eq. 1; the baseline).

Procaccia, Schiffer & Zhang, "Clone-Robust AI Alignment", ICML 2025, arXiv 2501.09254
(paper Eq. 1):

    r̂ = argmin_r − Σ_{a ≠ b} p_D(a ≻ b) log σ(r_a − r_b) + (λ/2) Σ_a r_a²

over the ordered pairs of the dataset's alternatives, fitted on the original data and on the data
with clones. Every clone adds a full copy of its original's comparison row, which is why this
estimator is not clone-robust (the paper's negative result).

Fidelity: faithful to the objective. Tabular (one free value per alternative) rather than the
paper's 2-layer MLP on embeddings; λ is not given in the available text
(our check value 0.01 is used, docs/papers/rlhf-clones.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.reward_learning._bt import fit_bt
from tasks.reward_learning import ClonesProblem, ClonesResult

SWITCHED_OFF = ("a baseline of the paper (the standard Bradley–Terry MLE, Eq. 1): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    lam: float = 0.01    # λ, L2 coefficient on the rewards (not in the available text; we use 1e-3 … 1e-1)

    def __post_init__(self) -> None:
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0, got {self.lam}")


@method(family="reward_learning", config=Config, accepts=ClonesProblem)
def solve(problem: ClonesProblem, config: Config, ctx: RunContext) -> ClonesResult:
    ones, clone_ones = np.ones(len(problem.points)), np.ones(len(problem.clone_points))
    return ClonesResult(reward=fit_bt(problem.win, ones, config.lam),
                        clone_reward=fit_bt(problem.clone_win, clone_ones, config.lam),
                        weights=ones, clone_weights=clone_ones, lam=config.lam)
