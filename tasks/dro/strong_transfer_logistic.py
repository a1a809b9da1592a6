"""Simulation 1 of KG-WDRO: high-dimensional sparse logistic regression, one source (strong transfer).

Paper: Wang, Wang, Liu & Si, "Knowledge-Guided Wasserstein Distributionally Robust Optimization",
ICML 2025, arXiv 2502.08146, §5 Simulation 1: d = 150, 50 non-zero and 100 zero
coefficients, (β_j, θ_j) bivariate normal with correlation ρ, signal strength s, N ∈ {20, 50, 80},
binary y, metric test accuracy; the paper's methods: KG-WDRO (strong, logistic, p = 1), WDRO, Trans-GLM.

Instance: x ~ N(0, I_d); on the first 50 coordinates θ_j ~ N(0, s²), β_j = ρθ_j + sqrt(1−ρ²)ξ_j,
ξ_j ~ N(0, s²) (zero elsewhere); P(y = 1 | x) = σ(xᵀβ) with y ∈ {±1}. Validation sample of size N,
test sample of n_test, one source sample of n_source from the same model with θ.
Ground truth: β. Knowledge Θ = θ (the true source vector).

Fidelity: reconstructed. UNVERIFIED (docs/papers/kg-wdro.md): the X law, the meaning and values of s (here the
per-coordinate standard deviation), ρ levels, the source sample size, whether KG-WDRO receives
the true θ or an estimate (here the true θ), and the test size (10,000 here).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.dro import DROProblem, _designs

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"dim": 12, "support": 4, "n_test": 400, "n_source": 40}


@dataclass(frozen=True)
class Config:
    dim: int = 150            # d, number of covariates
    support: int = 50         # number of non-zero coefficients of β and θ
    rho: float = 0.8          # ρ, correlation of the (β_j, θ_j) pairs (paper: 6 levels, UNVERIFIED values)
    signal: float = 0.5       # s, std of the non-zero coefficients (paper: 2 levels, UNVERIFIED)
    n_train: int = 20         # N, target sample size (paper: 20, 50, 80)
    n_test: int = 10_000      # test sample size (UNVERIFIED; ours)
    n_source: int = 200       # n_S, source sample size for Trans-GLM (UNVERIFIED)

    def __post_init__(self) -> None:
        _designs.check_sizes(self.n_train, self.n_test, self.n_source)


@task(family="dro", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> DROProblem:
    rng, d = ctx.rng, config.dim
    beta, theta = _designs.correlated_coefficients(rng, d, config.support, config.rho, config.signal, (1.0,))

    def sample(n, coef):
        x = _designs.covariates(rng, n, None, d)
        return x, _designs.responses(rng, x, coef, "classification", 0.0)

    (xt, yt), (xv, yv), (xs, ys), (xe, ye) = (sample(config.n_train, beta), sample(config.n_train, beta),
                                              sample(config.n_source, theta[:, 0]), sample(config.n_test, beta))
    return DROProblem(kind="classification", penalty_norm=1, x_train=xt, y_train=yt, x_val=xv, y_val=yv,
                   x_test=xe, y_test=ye, theta=theta, x_source=(xs,), y_source=(ys,), beta=beta)
