"""Causal discovery from observational data: recover a DAG (and a causal order) from samples.

Contract of the family (Li, Qian, Wang, Li, Zhang & Zhou, "Strong and Weak Identifiability of
Optimization-based Causal Discovery in Non-linear Additive Noise Models", ICML 2025, PMLR
267:35753-35768; docs/papers/gene-causal.md):

A task builds a `CausalProblem`: an (n, d) data matrix, the true DAG as a binary adjacency matrix
(A[i, j] = 1 means i → j) and the variable names. A method returns a `CausalResult`: its estimated
adjacency in the same convention and, when it produces one, a causal order (roots first).

`score` is the only judge; it reads graphs as gcastle's `MetricsDAG` does (the paper's metric code):
- an edge with A[i, j] = A[j, i] = 1 is an *undirected* CPDAG edge (PC and GES return CPDAGs).
  For SHD it counts as correct when the true skeleton has that edge (no reversal is charged);
  for precision / recall / F1 it counts as the two directed edges i → j and j → i, one of which is
  then a false positive.
- SHD = extra skeleton edges + missing skeleton edges + directed edges pointing the wrong way.
- F1 = 2PR/(P + R) over directed edges (P = TP / predicted, R = TP / true); 0 when P + R = 0.
- rev (Rev(G, π) of §4, Theorem 4.3): the number of ancestor-descendant pairs of the true DAG that the
  method's order places the wrong way round; rev_rate divides by the number of such pairs.
  Only for methods that return an order.
- sid: the structural intervention distance (Peters & Bühlmann 2015), for DAG estimates with
  d ≤ SID_MAX_NODES (a CPDAG has an SID interval; it is left out then).
- runtime_s: the method's own wall time for `solve` (measured by the method, data building excluded).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from bench.spec import Metric

# what the family's methods may use of its worlds, beyond the problem and result types (they import no private
# task module: tests/test_layers.py)
from tasks.causal._sem import topological_order as topological_order

SID_MAX_NODES = 30


@dataclass(frozen=True, eq=False)
class CausalProblem:
    data: np.ndarray                # (n, d) observations, one column per variable
    adjacency: np.ndarray           # (d, d) true DAG, A[i, j] = 1: i → j
    names: tuple[str, ...]          # d variable names
    standardized: bool = False      # whether the columns were scaled to mean 0, std 1

    def __post_init__(self) -> None:
        data, adj = np.asarray(self.data, dtype=float), np.asarray(self.adjacency)
        if data.ndim != 2 or adj.shape != (data.shape[1], data.shape[1]):
            raise ValueError(f"data must be (n, d) and adjacency (d, d); got {data.shape} and {adj.shape}")
        if len(self.names) != data.shape[1]:
            raise ValueError(f"{len(self.names)} names for {data.shape[1]} variables")
        if not is_dag(adj):
            raise ValueError("the true adjacency must be a binary DAG")
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "adjacency", adj.astype(int))

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    @property
    def d(self) -> int:
        return int(self.data.shape[1])


@dataclass(frozen=True, eq=False)
class CausalResult:
    adjacency: np.ndarray               # (d, d) binary estimate; A[i,j] = A[j,i] = 1 is an undirected edge
    order: np.ndarray | None = None     # (d,) causal order, roots first, if the method produces one
    runtime_s: float | None = None      # wall time of the method's search (seconds)


METRICS = {
    "f1": Metric(True, "", True, "F1 of directed edges (gcastle MetricsDAG; an undirected edge counts both ways)",
                 bounds=(0.0, 1.0)),
    "shd": Metric(False, "edges", False, "structural Hamming distance "
                  "(gcastle: reversals count once, undirected-on-true-edge 0)", bounds=(0.0, None)),
    "precision": Metric(True, "", False, "true directed edges / predicted directed edges", bounds=(0.0, 1.0)),
    "recall": Metric(True, "", False, "true directed edges found / true edges", bounds=(0.0, 1.0)),
    "sid": Metric(False, "pairs", False, "structural intervention distance (DAG estimates, small d)",
                  bounds=(0.0, None)),
    "rev": Metric(False, "pairs", False, "Rev(G, π): ancestor-descendant pairs the order reverses (order methods)",
                  bounds=(0.0, None)),
    "rev_rate": Metric(False, "", False, "rev / number of ancestor-descendant pairs of the true DAG",
                       bounds=(0.0, 1.0)),
    "n_edges": Metric(False, "edges", False, "number of edges in the estimate (undirected counted once)",
                      bounds=(0.0, None)),
    "runtime_s": Metric(False, "s", False, "wall time of the method's solve", bounds=(0.0, None)),
}


# ---- graph helpers -------------------------------------------------------------------------------

def is_dag(adj: np.ndarray) -> bool:
    adj = np.asarray(adj)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or not np.isin(adj, (0, 1)).all() or np.any(np.diag(adj)):
        return False
    return nx.is_directed_acyclic_graph(nx.DiGraph(adj))


def ancestors_matrix(adj: np.ndarray) -> np.ndarray:
    """(d, d) boolean R with R[a, b] = a is a proper ancestor of b (transitive closure)."""
    reach = np.asarray(adj, dtype=bool)
    for k in range(reach.shape[0]):  # Floyd-Warshall closure
        reach = reach | (reach[:, [k]] & reach[[k], :])
    return reach


def reversals(adj: np.ndarray, order: np.ndarray) -> int:
    """Rev(G, π): pairs (a, b), a an ancestor of b in G, that π puts b before a."""
    order = np.asarray(order, dtype=int)
    d = adj.shape[0]
    if sorted(order.tolist()) != list(range(d)):
        raise ValueError(f"order must be a permutation of 0..{d - 1}, got {order.tolist()}")
    position = np.empty(d, dtype=int)
    position[order] = np.arange(d)
    anc = ancestors_matrix(adj)
    return int(np.sum(anc & (position[:, None] > position[None, :])))


def shd_and_counts(est: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """gcastle MetricsDAG's SHD, precision, recall and F1 (module docstring for the conventions)."""
    est, true = np.asarray(est, dtype=int), np.asarray(true, dtype=int)
    undirected = (est == 1) & (est.T == 1)
    directed = (est == 1) & ~undirected
    skel_true = (true + true.T) > 0
    skel_est = (est + est.T) > 0
    lower = np.tril(np.ones_like(est, dtype=bool), k=-1)
    extra = int(np.sum(skel_est & ~skel_true & lower))
    missing = int(np.sum(skel_true & ~skel_est & lower))
    reversed_ = int(np.sum(directed & (true.T == 1) & (true == 0)))
    tp = int(np.sum((est == 1) & (true == 1)))  # undirected edges appear in est both ways
    predicted, actual = int(est.sum()), int(true.sum())
    precision = tp / predicted if predicted else 0.0
    recall = tp / actual if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"shd": float(extra + missing + reversed_), "precision": precision, "recall": recall, "f1": f1,
            "n_edges": float(np.sum(skel_est & lower))}


def _valid_adjustment(graph: nx.DiGraph, i: int, j: int, z: set[int], desc: list[set[int]]) -> bool:
    """Is z a valid adjustment set for the effect of i on j in the DAG (Shpitser et al. 2010)?"""
    on_causal = {w for w in desc[i] if w == j or j in desc[w]}    # nodes ≠ i on directed i ⇝ j paths
    forbidden = set().union(*(desc[w] | {w} for w in on_causal)) if on_causal else set()
    if z & forbidden:
        return False
    backdoor = graph.copy()
    backdoor.remove_edges_from([(i, c) for c in list(graph.successors(i)) if c in on_causal])
    return nx.is_d_separator(backdoor, {i}, {j}, z)


def sid(est: np.ndarray, true: np.ndarray) -> int:
    """Structural intervention distance of a DAG estimate (Peters & Bühlmann 2015, Prop. 8).

    For every ordered pair (i, j), i ≠ j: the estimate predicts p(x_j | do(x_i)) by adjusting
    for its parents of i; a pair counts when that is wrong for some distribution of the true DAG.
    If j is an estimated parent of i the prediction is "no effect", wrong iff j descends from i.
    """
    graph = nx.DiGraph(np.asarray(true, dtype=int))
    d = true.shape[0]
    desc = [nx.descendants(graph, v) for v in range(d)]
    count = 0
    for i in range(d):
        parents = set(np.flatnonzero(est[:, i]).tolist())
        for j in range(d):
            if j == i:
                continue
            if j in parents:
                count += j in desc[i]
            else:
                count += not _valid_adjustment(graph, i, j, parents, desc)
    return count


# ---- the judge -----------------------------------------------------------------------------------

def score(problem: CausalProblem, result: CausalResult) -> dict[str, float]:
    est = np.asarray(result.adjacency)
    if est.shape != problem.adjacency.shape or not np.isin(est, (0, 1)).all() or np.any(np.diag(est)):
        raise ValueError(f"CausalResult.adjacency must be a binary ({problem.d}, {problem.d}) matrix with a zero "
                         "diagonal")
    true = problem.adjacency
    scores = shd_and_counts(est, true)
    has_undirected = bool(np.any((est == 1) & (est.T == 1)))
    if not has_undirected and problem.d <= SID_MAX_NODES and is_dag(est):
        scores["sid"] = float(sid(est, true))
    if result.order is not None:
        rev = reversals(true, result.order)
        pairs = int(ancestors_matrix(true).sum())
        scores["rev"] = float(rev)
        scores["rev_rate"] = rev / pairs if pairs else 0.0
    if result.runtime_s is not None:
        scores["runtime_s"] = float(result.runtime_s)
    return scores
