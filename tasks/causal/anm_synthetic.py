"""Synthetic non-linear ANM graphs as GENE's experiments generate them (Li et al., ICML 2025, §5.1).

Paper: "Strong and Weak Identifiability of Optimization-based Causal Discovery in Non-linear
Additive Noise Models" (PMLR 267:35753-35768), code ECNU-ILOG/GENE `Datagenerator.py`: a gcastle
Erdős–Rényi DAG with d·density edges, then `IIDSimulation(n=3000, method='nonlinear',
sem_type∈{mim, mlp, gp}, noise_scale=1)`; d ∈ {10, 20}, density ∈ {1, 2, 4}, 10 graphs per setting.
MIM and GP are strongly identifiable, MLP weakly (§5.1). `standardize` scales every column to mean
0 and std 1 afterwards (§5.1.2, Fig. 4). The scale-free graph (`graph: sf`) is an extra setting.

Fidelity: faithful to the generating distributions (numpy ports of gcastle's simulators, see
tasks/causal/_sem.py); the random streams differ from gcastle's, so graph k here is not the
paper's graph k.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.causal import CausalProblem, _sem

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"d": 4, "density": 1, "n": 200}


@dataclass(frozen=True)
class Config:
    graph: str = "er"           # random DAG: er (the paper's) or sf (scale-free)
    d: int = 10                 # d, number of nodes (paper: 10, 20)
    density: int = 2            # expected edges per node; n_edges = d·density (paper: 1, 2, 4)
    sem: str = "mim"            # mechanism: mim, gp (strongly identifiable), mlp (weakly)
    n: int = 3000               # sample size (paper: 3000)
    noise_scale: float = 1.0    # std of the Gaussian noise z_i (paper: 1)
    standardize: bool = False   # scale every column to mean 0, std 1 (paper §5.1.2)

    def __post_init__(self) -> None:
        if self.graph not in _sem.GRAPHS:
            raise ValueError(f"graph {self.graph!r} unknown; allowed: {', '.join(_sem.GRAPHS)}")
        if self.sem not in _sem.SEMS:
            raise ValueError(f"sem {self.sem!r} unknown; allowed: {', '.join(_sem.SEMS)}")
        if self.d < 2 or self.density < 1 or self.n < 10 or self.noise_scale <= 0:
            raise ValueError(f"need d >= 2, density >= 1, n >= 10 and noise_scale > 0; got d={self.d}, "
                             f"density={self.density}, n={self.n}, noise_scale={self.noise_scale}")


@task(family="causal", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> CausalProblem:
    make_graph = _sem.erdos_renyi if config.graph == "er" else _sem.scale_free
    adj = make_graph(ctx.rng, config.d, config.d * config.density)
    data = _sem.simulate(ctx.rng, adj, config.n, config.sem, config.noise_scale)
    if config.standardize:
        data = _sem.standardize(data)
    return CausalProblem(data=data, adjacency=adj, names=tuple(f"X{i + 1}" for i in range(config.d)),
                   standardized=config.standardize)
