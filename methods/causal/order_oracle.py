"""Order oracle: the positive control of the ANM world's order claims (the true causal order, then pruning).

Returns a topological order of the true DAG (roots first; Rev(G, π) = 0 by definition, §4 of Li et al., ICML
2025) and the graph that sort-and-regress's adaptive lasso (OLS-weighted LassoLarsIC, BIC: the pruning of the
R2-SortnRegress baseline, methods/causal/_common.py) selects among each variable's predecessors in that order.
It is the order no search can improve on: the Rev claims of leaderboard/papers/gene-causal.yaml ask how many fewer
reversals than CAM's GENE's order has, which the world can show only if the best fit-based order (CAM's) leaves
reversals to remove, measurably at the claims' ten graphs (`controls:`; docs/papers/gene-causal.md).

`shuffle`: the null. A uniformly random permutation of the variables (the run's method stream) replaces the true
order, with the same pruning; it carries no order information and must not beat CAM.

Fidelity: not a paper's method (a control of our world); reads the true adjacency (`CausalProblem.adjacency`), which
every causal task carries for its score.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult, topological_order

SWITCHED_OFF = ("a reference, not a paper's method (reads the generator's true causal order: the ANM world's "
                "positive control): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    shuffle: bool = False        # the null: a random permutation instead of the true order


@method(family="causal", config=Config,
        reference="reads the generator's true topological order: the world's positive control")
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    order = (ctx.rng.permutation(problem.d) if config.shuffle
             else np.asarray(topological_order(problem.adjacency), dtype=int))
    position = np.empty(problem.d)
    position[order] = np.arange(problem.d)
    return _common.sort_regress(problem.data, position, t0)
