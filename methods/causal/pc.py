"""PC (Spirtes, Glymour & Scheines 2000) from causal-learn: skeleton by CI tests, then Meek orientation.

The GENE paper's baseline is PC-ANM (PC, then ANM orientation of the remaining edges; Table 1). Here
causal-learn's `pc` (stable, uc_rule 0) returns a CPDAG; its undirected edges are scored as gcastle does
(tasks/causal). CI test: Fisher-z by default (fast, linear-Gaussian); `ci_test: kci` is the kernel test
that suits non-linear data (O(n³) per test: use small n).

Fidelity: approximate (PC instead of PC-ANM: no ANM orientation of undirected edges).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from causallearn.search.ConstraintBased.PC import pc

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult

CI_TESTS = ("fisherz", "kci", "rcit", "fastkci")


SWITCHED_OFF = ("a baseline of the paper (PC; the paper's PC-ANM without the ANM orientation): there is no mechanism "
                "of the paper to switch off")


@dataclass(frozen=True)
class Config:
    alpha: float = 0.05           # significance level of the CI tests
    ci_test: str = "fisherz"      # causal-learn CI test

    def __post_init__(self) -> None:
        if self.ci_test not in CI_TESTS:
            raise ValueError(f"ci_test {self.ci_test!r} unknown; allowed: {', '.join(CI_TESTS)}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    graph = pc(problem.data, alpha=config.alpha, indep_test=config.ci_test, stable=True, show_progress=False)
    return CausalResult(adjacency=_common.from_causallearn(graph.G.graph), runtime_s=time.perf_counter() - t0)
