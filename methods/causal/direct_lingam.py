"""DirectLiNGAM (Shimizu et al. 2011) from the lingam package: linear non-Gaussian causal order + pruning.

A linear baseline: it finds the order by pairwise independence of linear residuals and prunes with an
adaptive lasso. lingam's `adjacency_matrix_` B has B[i, j] ≠ 0 for j → i; here A = (|Bᵀ| > 0).

Fidelity: faithful (the library's estimator with its defaults); not one of the GENE paper's baselines
(its RESIT is the non-linear relative).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import lingam
import numpy as np

from bench.context import RunContext
from bench.registry import method
from tasks.causal import CausalProblem, CausalResult

SWITCHED_OFF = ("a baseline (DirectLiNGAM, linear; not in the paper's tables): there is no mechanism of the paper to "
                "switch off")


@dataclass(frozen=True)
class Config:
    measure: str = "pwling"       # lingam's independence measure: pwling or kernel

    def __post_init__(self) -> None:
        if self.measure not in ("pwling", "kernel"):
            raise ValueError(f"measure {self.measure!r} unknown; allowed: pwling, kernel")


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    model = lingam.DirectLiNGAM(random_state=int(ctx.rng.integers(2**31)), measure=config.measure)
    model.fit(problem.data)
    adj = (np.abs(model.adjacency_matrix_.T) > 0).astype(int)
    np.fill_diagonal(adj, 0)
    return CausalResult(adjacency=adj, order=np.asarray(model.causal_order_), runtime_s=time.perf_counter() - t0)
