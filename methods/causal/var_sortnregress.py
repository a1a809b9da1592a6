"""Var-SortnRegress: order by marginal variance, then sparse regression (Reisach et al. 2021).

Paper: Reisach, Seiler & Weichwald, "Beware of the Simulated DAG! Causal Discovery Benchmarks May Be
Easy To Game", NeurIPS 2021; code CausalDisco `var_sort_regress`. The varsortability baseline: it
exploits raw-scale simulations (variance grows along the order) and is at chance after standardising.

Fidelity: faithful (a port of CausalDisco; not in the GENE paper's tables, added as the varsortability
reference for the weak-identifiability checks).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult

SWITCHED_OFF = ("a baseline (Var-SortnRegress, the varsortability check): there is no mechanism of the paper to "
                "switch off")


@dataclass(frozen=True)
class Config:
    pass


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    return _common.sort_regress(problem.data, np.var(problem.data, axis=0), t0)
