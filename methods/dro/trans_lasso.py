"""Oracle Trans-Lasso (Li, Cai & Li 2022, JRSS-B, "Transfer learning for high-dimensional linear
regression: prediction, estimation and minimax optimality", Algorithm 1, oracle version), the
multi-source comparator of KG-WDRO (arXiv 2502.08146 §5, Simulation 3).

Definition implemented (the two-step oracle estimator of Li, Cai & Li 2022):
  (1) ŵ = argmin_w (1/(2(n_0 + n_S)))‖y_pool − X_pool w‖² + λ_w‖w‖₁  on target ∪ all sources
      ("oracle": every given source is known to be informative);
  (2) δ̂ = argmin_δ (1/(2n_0))‖y_0 − X_0ŵ − X_0δ‖² + λ_δ‖δ‖₁;   β̂ = ŵ + δ̂.
λ_w by 5-fold cross-validation on the pooled sample (scikit-learn LassoCV, 20 levels); λ_δ on the
path α_max·logspace(0, −3, 20) by validation MSE of ŵ + δ̂ (the family's tuning protocol).

Fidelity: reconstructed from Li, Cai & Li's published algorithm (their R code was
not consulted). Deviations: CV folds/grid; λ_δ by a validation sample instead of CV; no intercept;
the Q-aggregation step of the non-oracle Trans-Lasso is not needed (oracle).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.dro import _transfer
from tasks.dro import DROProblem, DROResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"n_alpha": 4, "folds": 3}


SWITCHED_OFF = ("a baseline of the paper (oracle Trans-Lasso, Li, Cai & Li 2022): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    n_alpha: int = 20           # penalty levels in each step's lasso path
    ratio: float = 1e-3         # α_min / α_max of the paths
    folds: int = 5              # cross-validation folds of step 1 (λ_w)


def skip(problem: DROProblem, config: Config) -> str | None:
    return "Trans-Lasso is a regression method" if problem.kind != "regression" else None


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    # imported on use: the leaderboard imports method modules for their Configs only
    from sklearn.linear_model import LassoCV

    x_pool, y_pool = _transfer.pooled(problem)
    folds = np.arange(y_pool.size) % config.folds
    ctx.rng.shuffle(folds)
    step1 = LassoCV(alphas=config.n_alpha, eps=config.ratio,
                    cv=[(np.flatnonzero(folds != k), np.flatnonzero(folds == k))
                        for k in range(config.folds)],
                    fit_intercept=False, max_iter=50_000, tol=1e-7).fit(x_pool, y_pool)
    w = step1.coef_.copy()
    x, y = problem.x_train, problem.y_train
    alphas, deltas = _transfer.lasso_fits(x, y - x @ w, config.n_alpha, config.ratio)
    coef, alpha = _transfer.choose(problem, alphas, [w + d for d in deltas])
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=alpha)
