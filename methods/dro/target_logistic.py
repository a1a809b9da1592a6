"""Target-only penalised logistic regression: the no-transfer classification baseline.

C·Σ log(1 + e^{−y xᵀβ}) + ‖β‖₁ (sparse designs, p = 1) or + ½‖β‖₂² (p = 2) on the target sample
only (scikit-learn liblinear, no intercept), C ∈ logspace(−2, 3, 15) chosen by validation
log-loss. With p = 1 it is the same estimator family as vanilla WDRO for classification
(ℓ1-penalised logistic, Shafieezadeh-Abadeh et al. 2015) with a different grid and solver.

Fidelity: faithful as a definition; grid and selection rule are ours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.dro import _transfer
from tasks.dro import DROProblem, DROResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"n_c": 3}


SWITCHED_OFF = ("a baseline (target-only penalised logistic regression, no transfer): there is no mechanism of the "
                "paper to switch off")


@dataclass(frozen=True)
class Config:
    c_min: float = 1e-2         # smallest inverse penalty C of the grid
    c_max: float = 1e3          # largest C
    n_c: int = 15               # number of grid points (log-spaced)


def skip(problem: DROProblem, config: Config) -> str | None:
    return "logistic regression needs a classification design" if problem.kind != "classification" else None


@method(family="dro", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: DROProblem, config: Config, ctx: RunContext) -> DROResult:
    cs = np.logspace(np.log10(config.c_min), np.log10(config.c_max), config.n_c)
    fits = _transfer.logistic_fits(problem.x_train, problem.y_train, cs, problem.penalty_norm)
    coef, c = _transfer.choose(problem, cs, fits)
    return DROResult(coef=np.asarray(coef, dtype=float), tuning=c)
