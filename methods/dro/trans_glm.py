"""Trans-GLM (Tian & Feng 2023, JASA, "Transfer learning under high-dimensional generalized linear
models", the oracle two-step algorithm of the R package glmtrans), the classification comparator
of KG-WDRO (arXiv 2502.08146 §5, Simulation 1), logistic family.

Definition implemented (Tian & Feng 2023):
  (1) transferring  ŵ = argmin_w (1/(n_0 + n_S))Σ_{target ∪ sources} log(1 + e^{−y xᵀw}) + λ_w‖w‖₁;
  (2) debiasing     δ̂ = argmin_δ (1/n_0)Σ_target log(1 + e^{−y xᵀ(ŵ + δ)}) + λ_δ‖δ‖₁;  β̂ = ŵ + δ̂.
Step 1 with scikit-learn liblinear (C = 1/((n_0 + n_S)λ_w)), step 2 with cvxpy/Clarabel
(offset xᵀŵ, methods/dro/_common.cvx_path); both λ's chosen by validation log-loss.

Fidelity: reconstructed from our reading of glmtrans (the R code was not run).
Deviations: glmtrans picks λ by 10-fold cv.glmnet; here a validation sample the size of the
training sample (the family's tuning protocol, and 5–10× cheaper); the source-detection step is
not used (oracle: all sources informative); no intercept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.dro import _common, _transfer
from tasks.dro import DROProblem, DROResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"n_lambda": 3}


SWITCHED_OFF = "a baseline of the paper (Trans-GLM, Tian & Feng 2023): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    lambda_min: float = 1e-3    # smallest λ (both steps) of the grid
    lambda_max: float = 1.0     # largest λ
    n_lambda: int = 10          # grid points (log-spaced)


def skip(problem: DROProblem, config: Config) -> str | None:
    return ("Trans-GLM here is the logistic family; needs a classification design"
            if problem.kind != "classification" else None)


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    lambdas = _common.delta_grid(config.lambda_min, config.lambda_max, config.n_lambda)
    x_pool, y_pool = _transfer.pooled(problem)
    cs = 1.0 / (y_pool.size * lambdas)
    w, _ = _transfer.choose(problem, lambdas, _transfer.logistic_fits(x_pool, y_pool, cs, 1))
    x, y = problem.x_train, problem.y_train
    no_knowledge = np.zeros((problem.dim, 0))
    deltas = _common.cvx_path(x, y, no_knowledge, lambdas, 1, "classification", offset=x @ w)
    coef, lam = _transfer.choose(problem, lambdas, [w + d for d in deltas])
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=lam)
