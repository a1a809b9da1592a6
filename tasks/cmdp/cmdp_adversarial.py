"""Adversarial regime: piecewise-stationary means switching between two draws (our CPU world).

Paper: Stradi et al., ICML 2025, arXiv 2410.02269. Same layered CMDP as `cmdp_stochastic`,
but the reward and cost means alternate between two independent draws (r̄_A, ḡ_A) and
(r̄_B, ḡ_B) every T/n_switches episodes (T/10 by default; an oblivious
adversary). The benchmark OPT and ρ are those of the time-averaged means (the paper's adversarial benchmark), and
α = min_q Ḡ_avg q + ρ. The paper's guarantee: V_T = Õ(√T) and Σ_t r_tᵀq_t ≥ ρ/(ρ+L)·T·OPT − Õ(√T).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.cmdp import CMDPProblem, _model
from tasks.cmdp.cmdp_stochastic import assemble

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"T": 200}


@dataclass(frozen=True)
class Config:
    T: int = 10_000          # T, episodes
    n_layers: int = 4        # L, decision steps per episode (H)
    width: int = 3           # |X_k| for k = 1..L-1
    n_actions: int = 3       # |A|
    m: int = 1               # m, number of constraints
    rho: float = 0.3         # ρ of the time-averaged problem, set through α
    n_switches: int = 10     # number of phases; the means switch every T/n_switches episodes
    world_seed: int = 0      # seed of P and both mean draws (fixed across run seeds)

    def __post_init__(self) -> None:
        if self.T < 2 or self.n_layers < 1 or self.width < 1 or self.n_actions < 2 or self.m < 1:
            raise ValueError(f"need T ≥ 2, n_layers ≥ 1, width ≥ 1, n_actions ≥ 2, m ≥ 1; got {self}")
        if not self.rho > 0:
            raise ValueError(f"rho must be > 0 (Slater's condition), got {self.rho}")
        if not 1 <= self.n_switches <= self.T:
            raise ValueError(f"n_switches must lie in [1, T], got {self.n_switches}")


@task(family="cmdp", config=Config, version=2, smallest=SMALLEST)  # 2: reports the horizon (rates fitted across T)
def build(config: Config, ctx: RunContext) -> CMDPProblem:
    """The instance; ctx is unused (the CMDP comes from config.world_seed)."""
    rng = np.random.default_rng(config.world_seed)
    layers = _model.layer_slices(config.n_layers, config.width)
    S = layers[-1].stop
    P = _model.random_kernel(rng, layers, config.n_actions)
    r_a, g_a = _model.random_means(rng, S, config.n_actions, config.m)
    r_b, g_b = _model.random_means(rng, S, config.n_actions, config.m)
    phase = (np.arange(config.T) * config.n_switches // config.T) % 2   # A, B, A, B, ...
    return assemble(config, np.stack([r_a, r_b]), np.stack([g_a, g_b]), P, layers, phase)
