"""Target-only lasso: the no-transfer sparse baseline (context of arXiv 2502.08146 §5).

min_β (1/2N)‖y − Xβ‖₂² + α‖β‖₁ on the target sample only (scikit-learn's coordinate-descent
lasso path, no intercept), α on the grid α_max·logspace(0, −3, 20) chosen by validation MSE
(the same validation sample every method of the family tunes on).

Fidelity: faithful as a definition (the plain lasso); grid and selection rule are ours.
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


SWITCHED_OFF = "a baseline (target-only lasso, no transfer): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    n_alpha: int = 20           # number of penalty levels α on the path
    ratio: float = 1e-3         # α_min / α_max of the path


def skip(problem: DROProblem, config: Config) -> str | None:
    return "the lasso is a regression method" if problem.kind != "regression" else None


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    alphas, coefs = _transfer.lasso_fits(problem.x_train, problem.y_train, config.n_alpha, config.ratio)
    coef, alpha = _transfer.choose(problem, alphas, coefs)
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=alpha)
