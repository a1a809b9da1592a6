"""Vanilla Wasserstein DRO, the baseline KG-WDRO modifies (§2 of the paper; Blanchet, Kang & Murthy).

Cost ‖x − u‖_q^r + ∞·|y − v| on the target sample alone; classical equivalences:
  regression (Blanchet, Kang & Murthy 2019)        min_β ( sqrt(MSE_N(β)) + √δ‖β‖_p )²
      (p = 1: square-root lasso; p = 2: square-root ridge)
  classification (Shafieezadeh-Abadeh, Kuhn & Esfahani 2015)  min_β (1/N)Σ log(1 + e^{−y_i xᵢᵀβ}) + δ‖β‖_p
It shrinks towards 0, the conservativeness KG-WDRO targets. Same solver and δ selection as
KG-WDRO (methods/dro/_common.py with Θ empty), same p as the design.

Fidelity: faithful to the classical equivalences (they are textbook results); as used in
arXiv 2502.08146 §5 the δ grid (logspace(−4, 1, 20)) is UNVERIFIED; no intercept.
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


SWITCHED_OFF = ("a baseline of the paper (vanilla Wasserstein DRO, the estimator KG-WDRO modifies): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    delta_min: float = 1e-4       # smallest radius δ of the validation grid (UNVERIFIED; docs/papers/kg-wdro.md)
    delta_max: float = 10.0       # largest radius δ of the grid
    n_delta: int = 20             # number of grid points (log-spaced)
    delta: float | None = None    # δ, a fixed radius (skips the validation search)
    p: int | None = None          # p of ‖β‖_p; None: the design's


@method(family="dro", config=Config, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    no_knowledge = np.zeros((problem.dim, 0))
    coef, delta = _common.fit_wdro(problem, no_knowledge, config)
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=delta)
