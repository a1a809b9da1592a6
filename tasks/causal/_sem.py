"""Random DAGs and non-linear additive-noise SEMs, equivalent to gcastle 1.0.x's simulators.

The paper generates data with gcastle (`DAG.erdos_renyi`, `IIDSimulation(method='nonlinear')`,
the experimental protocol); gcastle is not a dependency here, so these are numpy ports of its
NOTEARS-derived code (same distributions, not the same random streams):

- Erdős–Rényi: each lower-triangular entry is an edge with probability 2·n_edges / d², then
  the nodes are randomly permuted (expected edges n_edges·(d−1)/d).
- scale-free: Barabási–Albert growth as igraph's `Barabasi(n=d, m=round(n_edges/d), directed=True)`
  (each new node sends m edges to earlier nodes chosen ∝ in-degree + 1), then a random permutation.
- SEMs, V_i = f_i(V_pa(i)) + z_i with z_i ~ N(0, noise_scale²), roots pure noise:
    mim  tanh(X w1) + cos(X w2) + sin(X w3), each w entry ±U(0.5, 2), redrawn per node;
    mlp  sigmoid(X W1) W2 with 100 hidden units, entries ±U(0.5, 2);
    gp   one draw of a GP prior with kernel exp(−‖x − x'‖²/2) (sklearn's unfitted
         `GaussianProcessRegressor().sample_y`), drawn by Cholesky with a 1e-8 jitter instead of SVD.
"""

from __future__ import annotations

import numpy as np

SEMS = ("mim", "mlp", "gp")
GRAPHS = ("er", "sf")
MLP_HIDDEN = 100
WEIGHT_RANGE = (0.5, 2.0)


def _permute(rng: np.random.Generator, adj: np.ndarray) -> np.ndarray:
    perm = rng.permutation(adj.shape[0])
    return adj[np.ix_(perm, perm)]


def erdos_renyi(rng: np.random.Generator, d: int, n_edges: int) -> np.ndarray:
    """(d, d) binary DAG, A[i, j] = 1: i → j (gcastle `DAG.erdos_renyi`)."""
    prob = min(1.0, 2.0 * n_edges / d**2)
    lower = np.tril(rng.random((d, d)) < prob, k=-1).astype(int)
    return _permute(rng, lower)


def scale_free(rng: np.random.Generator, d: int, n_edges: int) -> np.ndarray:
    """(d, d) binary DAG from directed Barabási–Albert growth (gcastle `DAG.scale_free`)."""
    m = max(1, int(round(n_edges / d)))
    adj = np.zeros((d, d), dtype=int)
    in_degree = np.zeros(d)
    for new in range(1, d):
        k = min(m, new)
        weights = in_degree[:new] + 1.0
        targets = rng.choice(new, size=k, replace=False, p=weights / weights.sum())
        adj[new, targets] = 1
        in_degree[targets] += 1
    return _permute(rng, adj)


def topological_order(adj: np.ndarray) -> list[int]:
    """Kahn's algorithm; ties by smallest index (deterministic)."""
    indeg = adj.sum(axis=0).astype(int)
    ready = sorted(np.flatnonzero(indeg == 0).tolist())
    order = []
    while ready:
        v = ready.pop(0)
        order.append(v)
        for c in np.flatnonzero(adj[v]):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(int(c))
        ready.sort()
    if len(order) != adj.shape[0]:
        raise ValueError("the graph has a cycle")
    return order


def _signed_uniform(rng: np.random.Generator, size) -> np.ndarray:
    w = rng.uniform(*WEIGHT_RANGE, size=size)
    return np.where(rng.random(size) < 0.5, -w, w)


def _gp_sample(rng: np.random.Generator, parents: np.ndarray) -> np.ndarray:
    sq = np.sum(parents**2, axis=1)
    dist2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * parents @ parents.T, 0.0)
    kernel = np.exp(-0.5 * dist2)
    jitter = 1e-8
    while True:
        try:
            chol = np.linalg.cholesky(kernel + jitter * np.eye(len(kernel)))
            break
        except np.linalg.LinAlgError:
            jitter *= 10.0
    return chol @ rng.standard_normal(len(kernel))


def mechanism(rng: np.random.Generator, sem: str, parents: np.ndarray) -> np.ndarray:
    """f_i(parents) for an (n, k) parent matrix, k ≥ 1, with freshly drawn parameters."""
    k = parents.shape[1]
    if sem == "mim":
        w1, w2, w3 = (_signed_uniform(rng, k) for _ in range(3))
        return np.tanh(parents @ w1) + np.cos(parents @ w2) + np.sin(parents @ w3)
    if sem == "mlp":
        w1, w2 = _signed_uniform(rng, (k, MLP_HIDDEN)), _signed_uniform(rng, MLP_HIDDEN)
        return (1.0 / (1.0 + np.exp(-parents @ w1))) @ w2
    if sem == "gp":
        return _gp_sample(rng, parents)
    raise ValueError(f"sem {sem!r} unknown; allowed: {', '.join(SEMS)}")


def simulate(rng: np.random.Generator, adj: np.ndarray, n: int, sem: str, noise_scale: float) -> np.ndarray:
    """(n, d) samples of the ANM on `adj` (gcastle `IIDSimulation(method='nonlinear')`)."""
    d = adj.shape[0]
    data = np.zeros((n, d))
    for v in topological_order(adj):
        parents = np.flatnonzero(adj[:, v])
        noise = rng.normal(scale=noise_scale, size=n)
        data[:, v] = noise if parents.size == 0 else mechanism(rng, sem, data[:, parents]) + noise
    return data


def standardize(data: np.ndarray) -> np.ndarray:
    """Columns to mean 0, standard deviation 1 (the code's `standardization`, population std)."""
    return (data - data.mean(axis=0)) / data.std(axis=0)
