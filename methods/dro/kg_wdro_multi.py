"""KG-WDRO, multi-source strong transfer (Wang, Wang, Liu & Si, ICML 2025, arXiv 2502.08146).

Knowledge Θ = [θ_1 … θ_M] (rank < d). Cost c = ‖x − u‖_q^r + ∞·|y − v| + ∞·‖Θᵀ(x − u)‖: no
transport inside the span of the source vectors. Exact reformulations (Theorems 3.3 / 3.6 with Θ):
  regression      min_{β,κ∈ℝ^M} ( sqrt(MSE_N(β)) + √δ‖β − Θκ‖_p )²
  classification  min_{β,κ∈ℝ^M} (1/N)Σ log(1 + e^{−y_i xᵢᵀβ}) + δ‖β − Θκ‖_p
β is shrunk towards the subspace span(Θ) with free weights κ, so any combination θ_S = Θw of the
sources is learned from the target data. Solved through γ = β − Θκ with M unpenalised extra
features Θᵀx (methods/dro/_common.py); δ chosen on the validation sample.

Fidelity: reconstructed (secondary summary; checked against a direct convex solve of the
Wasserstein dual in the tests). Deviations: δ grid logspace(−4, 1, 20) (UNVERIFIED), no
intercept, validation MSE / log-loss, 1e-8 ridge on κ in logistic fits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.dro import _common
from tasks.dro import DROProblem, DROResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"n_delta": 3}


# Knowledge off: with Θ empty (M = 0) the cost has no ∞·‖Θᵀ(x − u)‖ term and _common.fit_wdro solves vanilla WDRO
# (β = γ, no κ): wdro with the same δ grid, bit for bit (tests/methods/dro/test_switched_off.py)
SWITCHED_OFF = {"no knowledge (Θ empty: vanilla WDRO)": ("wdro", {})}


@dataclass(frozen=True)
class Config:
    delta_min: float = 1e-4       # smallest radius δ of the validation grid (UNVERIFIED; docs/papers/kg-wdro.md)
    delta_max: float = 10.0       # largest radius δ of the grid
    n_delta: int = 20             # number of grid points (log-spaced)
    delta: float | None = None    # δ, a fixed radius (skips the validation search)
    p: int | None = None          # p of ‖β − Θκ‖_p; None: the design's


def skip(problem: DROProblem, config: Config) -> str | None:
    return _common.rank_skip(problem.theta)


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    coef, delta = _common.fit_wdro(problem, problem.theta, config)
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=delta)
