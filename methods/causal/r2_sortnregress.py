"""R²-SortnRegress: order by R² of each variable on all others, then sparse regression (Reisach et al. 2023).

Paper: Reisach, Tami, Seiler, Weichwald & Weichwald, "A Scale-Invariant Sorting Criterion to Find a
Causal Order in Additive Noise Models", NeurIPS 2023; code CausalDisco `r2_sort_regress` (the GENE
paper's R2Sort baseline, Table 1). R² = 1 − 1/diag(corr⁻¹) of the linear regressions; low R² first;
each variable regressed on its predecessors by OLS-weighted LassoLarsIC (BIC).

Fidelity: faithful (a port of CausalDisco's two functions; causaldisco is not a dependency).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult

SWITCHED_OFF = "a baseline of the paper (R²-SortnRegress): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    pass


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    return _common.sort_regress(problem.data, _common.r2_coefficients(problem.data), t0)
