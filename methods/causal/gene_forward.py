"""GENE as released: the same order search, then the code's forward parent selection (ECNU-ILOG/GENE).

Paper: Li et al., ICML 2025, §4 (Eq. 6, Algorithm 1); code `GENE.py`: `order_search` followed by
`parent_search`, which for each node repeatedly adds the predecessor giving the highest R² while the
gain is at least 0.02 (the paper's least pruning, `parent_search_pruning`, is commented out there).
Shares methods/causal/_gene_common.py with `gene`; only the parent rule differs.

Fidelity: faithful to the code's parent rule; the order fitness follows Eq. 6 by default
(penalty_offset = 1; set 0 for the code's division by the number of predecessors). Same
regressor deviations as `gene` (hidden 20, 500 epochs; batched, cached fits).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from bench.context import RunContext
from bench.registry import method
from methods.causal import _gene_common
from tasks.causal import CausalProblem, CausalResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"epochs": 5, "max_sweeps": 1}


# The independence term off: α = 0 in Eq. 6 (_gene_common.order_fitness: IT weighs 0), the R²-only order search of the
# paper's Fig. 5 ablation, with the released code's forward parent selection unchanged
SWITCHED_OFF = {"α = 0 (no independence term)": {"alpha": 0.0}}


@dataclass(frozen=True)
class Config(_gene_common.GeneConfig):
    threshold: float = 0.02        # minimal R² gain to add a parent (code: 0.02)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threshold < 0:
            raise ValueError(f"threshold must be >= 0, got {self.threshold}")


@method(family="causal", config=Config, smoke=SMOKE)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    select = partial(_gene_common.forward_selection, threshold=config.threshold)
    return _gene_common.run_gene(problem, config, ctx, select)
