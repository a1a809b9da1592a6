"""Trans-Ridge: the two-step transfer estimator with ℓ2 penalties, the comparator of KG-WDRO's
ridge-type simulation (arXiv 2502.08146 §5, Simulation 2).

Definition implemented: the ridge analogue of the Li, Cai & Li (2022) two-step estimator, the
reading docs/papers/kg-wdro.md finds most likely (the secondary summary attributes Trans-Ridge to "Li et al."):
  (1) ŵ = argmin_w ‖y_pool − X_pool w‖² + α_w‖w‖²  on target ∪ all sources;
  (2) δ̂ = argmin_δ ‖y_0 − X_0ŵ − X_0δ‖² + α_δ‖δ‖²;   β̂ = ŵ + δ̂.
α_w by efficient leave-one-out CV on the pooled sample (scikit-learn RidgeCV) over
logspace(−2, 4, 20); α_δ over the same grid by validation MSE of ŵ + δ̂.

Fidelity: approximate — the paper's exact definition of Trans-Ridge is UNVERIFIED (alternatives:
distance-based ‖β − θ̂‖² shrinkage, angle-based transfer); grids and selection rules are ours;
no intercept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.dro import _transfer
from tasks.dro import DROProblem, DROResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"n_alpha": 4}


SWITCHED_OFF = ("a baseline of the paper (Trans-Ridge, the two-step ridge transfer estimator): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    alpha_min: float = 1e-2     # smallest ridge penalty of both steps' grids
    alpha_max: float = 1e4      # largest
    n_alpha: int = 20           # grid points (log-spaced)


def skip(problem: DROProblem, config: Config) -> str | None:
    return "Trans-Ridge is a regression method" if problem.kind != "regression" else None


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    # imported on use: the leaderboard imports method modules for their Configs only
    from sklearn.linear_model import RidgeCV

    alphas = np.logspace(np.log10(config.alpha_min), np.log10(config.alpha_max), config.n_alpha)
    x_pool, y_pool = _transfer.pooled(problem)
    w = RidgeCV(alphas=alphas, fit_intercept=False).fit(x_pool, y_pool).coef_.copy()
    x, y = problem.x_train, problem.y_train
    deltas = _transfer.ridge_fits(x, y - x @ w, alphas)
    coef, alpha = _transfer.choose(problem, alphas, [w + d for d in deltas])
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=alpha)
