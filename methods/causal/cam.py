"""CAM: causal additive models by greedy order search and pruning (Bühlmann, Peters & Ernest 2014).

Paper: "CAM: Causal additive models, high-dimensional order search and penalized regression", Annals
of Statistics 42(6), 2014; R package CAM (the GENE paper runs it through cdt, Table 1, Fig. 6).
1. IncEdge: start from the empty graph; the score of adding i → j is the drop of log Var(residual of
   the additive model of x_j on its parents); repeatedly add the best edge that keeps the graph acyclic
   and respects maxNumParents = min(d − 1, round(n/20)) while some gain is positive.
2. The order is a topological order of that graph.
3. Pruning: for every node, each parent's additive term is tested and parents with p > 0.001 removed
   (R CAM's selGam with cutOffPVal 0.001).
Additive models: cubic B-splines with 10 basis functions per parent (R: numBasisFcts = 10), fitted by
least squares.

Fidelity: approximate. mgcv's penalised GAMs with GCV smoothing and its smooth-term p-values are
replaced by unpenalised regression splines and nested-model F-tests; no preliminary neighbourhood
selection (R CAM's default variableSel = FALSE).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import f as f_dist

from bench.context import RunContext
from bench.registry import method
from methods.causal import _common
from tasks.causal import CausalProblem, CausalResult, ancestors_matrix, topological_order

SWITCHED_OFF = "a baseline of the paper (CAM): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    n_basis: int = 10             # basis functions per additive term (R CAM: numBasisFcts = 10)
    cutoff: float = 0.001         # pruning p-value cut-off (R CAM: cutOffPVal = 0.001)
    pruning: bool = True          # run the pruning step (R CAM: TRUE; cdt's wrapper: FALSE)

    def __post_init__(self) -> None:
        if self.n_basis < 4 or not 0 < self.cutoff < 1:
            raise ValueError(f"need n_basis >= 4 and 0 < cutoff < 1; got {self.n_basis}, {self.cutoff}")


def _log_var(bases, data, v, parents) -> float:
    rss, _ = _common.additive_rss(bases, data[:, v], sorted(parents))
    return float(np.log(rss / len(data)))


def inc_edge(data: np.ndarray, bases: list[np.ndarray], max_parents: int) -> np.ndarray:
    d = data.shape[1]
    adj = np.zeros((d, d), dtype=int)
    current = [_log_var(bases, data, v, []) for v in range(d)]
    gain = np.array([[current[j] - _log_var(bases, data, j, [i]) if i != j else -np.inf for j in range(d)]
                     for i in range(d)])
    while True:
        blocked = ancestors_matrix(adj).T | (adj == 1) | np.eye(d, dtype=bool)   # j ⇝ i forbids i → j
        blocked |= (adj.sum(axis=0) >= max_parents)[None, :]
        masked = np.where(blocked, -np.inf, gain)
        i, j = np.unravel_index(np.argmax(masked), masked.shape)
        if not masked[i, j] > 0:
            return adj
        adj[i, j] = 1
        parents = set(np.flatnonzero(adj[:, j]).tolist())
        current[j] = _log_var(bases, data, j, parents)
        for k in range(d):
            if k != j and k not in parents:
                gain[k, j] = current[j] - _log_var(bases, data, j, parents | {k})


def prune(data: np.ndarray, bases: list[np.ndarray], adj: np.ndarray, cutoff: float) -> np.ndarray:
    out = adj.copy()
    n = len(data)
    for j in range(adj.shape[0]):
        parents = np.flatnonzero(adj[:, j]).tolist()
        if not parents:
            continue
        rss_full, p_full = _common.additive_rss(bases, data[:, j], parents)
        for k in parents:
            rss_red, p_red = _common.additive_rss(bases, data[:, j], [p for p in parents if p != k])
            stat = ((rss_red - rss_full) / (p_full - p_red)) / (rss_full / (n - p_full))
            if f_dist.sf(stat, p_full - p_red, n - p_full) > cutoff:
                out[k, j] = 0
    return out


@method(family="causal", config=Config)
def solve(problem: CausalProblem, config: Config, ctx: RunContext) -> CausalResult:
    t0 = time.perf_counter()
    bases = _common.spline_bases(problem.data, config.n_basis)
    max_parents = max(1, min(problem.d - 1, round(problem.n / 20)))
    adj = inc_edge(problem.data, bases, max_parents)
    order = np.asarray(topological_order(adj))
    if config.pruning:
        adj = prune(problem.data, bases, adj, config.cutoff)
    return CausalResult(adjacency=adj, order=order, runtime_s=time.perf_counter() - t0)
