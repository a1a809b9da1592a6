"""GES (Chickering 2002) from causal-learn: greedy equivalence search over CPDAGs by a local score.

The GENE paper's baseline is GSF (GES with the generalised score of Huang et al. 2018; Table 1): that is
`score_func: local_score_CV_general` or `local_score_marginal_general` (kernel scores, O(n³): small n
only). The default is the BIC score (linear Gaussian), which runs at the paper's sizes. Undirected CPDAG
edges are scored as gcastle does (tasks/causal).

Fidelity: approximate with the default BIC score; faithful to GSF with a generalised score.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from causallearn.search.ScoreBased.GES import ges

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult

SCORES = ("local_score_BIC", "local_score_CV_general", "local_score_marginal_general")


SWITCHED_OFF = ("a baseline of the paper (GES; the paper's GSF is GES with a generalised score): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    score_func: str = "local_score_BIC"   # causal-learn local score (GSF: local_score_CV_general)

    def __post_init__(self) -> None:
        if self.score_func not in SCORES:
            raise ValueError(f"score_func {self.score_func!r} unknown; allowed: {', '.join(SCORES)}")


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    record = ges(problem.data, score_func=config.score_func)
    return CausalResult(adjacency=_common.from_causallearn(record["G"].graph), runtime_s=time.perf_counter() - t0)
