"""Stochastic regime: i.i.d. Bernoulli rewards and costs with fixed means (our CPU world).

Paper: Stradi et al., "Best-of-Both-Worlds Policy Optimization for CMDPs with Bandit Feedback",
ICML 2025, arXiv 2410.02269. The paper's own experiments are not available; this is
our CPU reproduction instance (docs/papers/cmdp-bobw.md): L = 4 decision layers (X_0 = {x_0}, |X_k| = 3), |A| = 3,
P(·|x,a) ~ Dirichlet(1) over the next layer, m = 1, r_t(x,a) ~ Bernoulli(r̄(x,a)),
g_t(x,a) ~ Bernoulli(ḡ(x,a)), r̄ ~ U[0,1], ḡ = (r̄ + U[0,1])/2 (correlated with r̄ so that the
constraint binds: our choice), α = min_q ḡᵀq + ρ so the Slater parameter is exactly ρ.
OPT and ρ by linear programming over occupancy measures (scipy.optimize.linprog, HiGHS).
The instance comes from `world_seed`, not the run seed: every run seed sees the same CMDP.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.cmdp import CMDPProblem, _model

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"T": 200}


@dataclass(frozen=True)
class Config:
    T: int = 10_000          # T, episodes (our plan suggests 2·10⁴; 10⁴ keeps the claims within budget)
    n_layers: int = 4        # L, decision steps per episode (H)
    width: int = 3           # |X_k| for k = 1..L-1
    n_actions: int = 3       # |A|
    m: int = 1               # m, number of constraints
    rho: float = 0.3         # ρ, Slater parameter set through α (our plan: ρ ∈ {0.1, 0.3})
    world_seed: int = 0      # seed of P, r̄, ḡ (fixed across run seeds)

    def __post_init__(self) -> None:
        if self.T < 2 or self.n_layers < 1 or self.width < 1 or self.n_actions < 2 or self.m < 1:
            raise ValueError(f"need T ≥ 2, n_layers ≥ 1, width ≥ 1, n_actions ≥ 2, m ≥ 1; got {self}")
        if not self.rho > 0:
            raise ValueError(f"rho must be > 0 (Slater's condition), got {self.rho}")


def assemble(config, r: np.ndarray, g: np.ndarray, P: np.ndarray, layers, phase: np.ndarray) -> CMDPProblem:
    """CMDPProblem from phase means r (K,S,A), g (K,m,S,A) and the episode→phase map."""
    r_avg = np.mean(r[phase], axis=0)                         # time-averaged means r̄, Ḡ
    g_avg = np.mean(g[phase], axis=0)
    alpha = _model.thresholds_for_rho(P, layers, g_avg, config.rho)
    opt, q_opt = _model.solve_lp(P, layers, r_avg, g_avg, alpha)
    return CMDPProblem(n_layers=config.n_layers, layers=layers, n_actions=config.n_actions, P=P,
                   r_means=r, g_means=g, phase=phase, alpha=alpha, T=config.T, opt=opt, q_opt=q_opt,
                   rho=_model.slater_rho(P, layers, g_avg, alpha), adversarial=len(r) > 1)


@task(family="cmdp", config=Config, version=2, smallest=SMALLEST)  # 2: reports the horizon (rates fitted across T)
def build(config: Config, ctx: RunContext) -> CMDPProblem:
    """The instance; ctx is unused (the CMDP comes from config.world_seed)."""
    rng = np.random.default_rng(config.world_seed)
    layers = _model.layer_slices(config.n_layers, config.width)
    S = layers[-1].stop
    P = _model.random_kernel(rng, layers, config.n_actions)
    r, g = _model.random_means(rng, S, config.n_actions, config.m)
    return assemble(config, r[None], g[None], P, layers, np.zeros(config.T, dtype=int))
