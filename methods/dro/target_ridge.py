"""Target-only ridge: the no-transfer dense baseline (context of arXiv 2502.08146 §5).

min_β ‖y − Xβ‖₂² + α‖β‖₂² on the target sample only (closed form through the SVD, no
intercept), α ∈ logspace(−2, 4, 20) chosen by validation MSE.

Fidelity: faithful as a definition (plain ridge); grid and selection rule are ours.
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


SWITCHED_OFF = "a baseline (target-only ridge, no transfer): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    alpha_min: float = 1e-2     # smallest ridge penalty α of the grid
    alpha_max: float = 1e4      # largest α
    n_alpha: int = 20           # number of grid points (log-spaced)


def skip(problem: DROProblem, config: Config) -> str | None:
    return "ridge is a regression method" if problem.kind != "regression" else None


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    alphas = np.logspace(np.log10(config.alpha_min), np.log10(config.alpha_max), config.n_alpha)
    coef, alpha = _transfer.choose(problem, alphas, _transfer.ridge_fits(problem.x_train, problem.y_train, alphas))
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=alpha)
