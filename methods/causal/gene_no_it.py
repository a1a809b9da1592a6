"""GENE without the independence term (α = 0): the R²-only ablation of Fig. 5 (Li et al., ICML 2025).

Paper §5.1.4 / Fig. 5: dropping IT from Eq. 6 leaves strongly identifiable data (MIM, GP) unchanged or
slightly better and makes weakly identifiable data (MLP) clearly worse, since goodness of fit alone
cannot orient weak mechanisms (Theorem 3.3). Same order search and least pruning as `gene`; the fitness
is Σ R² (the χ² tests are still run and cached, but carry weight 0).

Fidelity: faithful (the paper's ablation); the `gene` deviations apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.causal import _gene_common
from tasks.causal import CausalProblem, CausalResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"epochs": 5, "max_sweeps": 1}


SWITCHED_OFF = "the paper's ablation (GENE with α = 0, no independence term): the mechanism is already off"


@dataclass(frozen=True)
class Config(_gene_common.PruningConfig):
    alpha: float = 0.0             # α = 0: no independence term (the ablation)


@method(family="causal", config=Config, smoke=SMOKE)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    return _gene_common.solve_pruned(problem, config, ctx)
