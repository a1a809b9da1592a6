"""Simulation 2 of KG-WDRO: high-dimensional linear regression with correlated covariates, one source.

Paper: Wang, Wang, Liu & Si, "Knowledge-Guided Wasserstein Distributionally Robust Optimization",
ICML 2025, arXiv 2502.08146, §5 Simulation 2: d = 100, covariate correlation 0.3,
N ∈ {50, 70, 90}, metric out-of-sample R²; the paper's methods: KG-WDRO strong and weak (p = 2),
WDRO, Trans-Ridge. This is the design where the weak-transfer estimator (Theorem 3.5) is used.

Instance: x ~ N(0, Σ) with AR(1) Σ_jk = 0.3^|j−k|; dense coefficients (every coordinate active):
θ_j ~ N(0, s²), β_j = ρθ_j + sqrt(1−ρ²)ξ_j, ξ_j ~ N(0, s²); y = xᵀβ + σε, ε ~ N(0, 1).
Validation sample of size N, test sample of n_test, one source sample of n_source (model θ).
Ground truth: β. Knowledge Θ = θ (the true source vector).

Fidelity: reconstructed. UNVERIFIED (docs/papers/kg-wdro.md): AR(1) rather than equicorrelation, dense
coefficients (inferred from the ridge-type comparators), s, σ, ρ levels, source sample size,
true θ as the knowledge, test size.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.dro import DROProblem, _designs

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"dim": 10, "n_train": 12, "n_test": 400, "n_source": 40}


@dataclass(frozen=True)
class Config:
    dim: int = 100            # d, number of covariates
    x_corr: float = 0.3       # covariate correlation (AR(1) parameter; structure UNVERIFIED)
    rho: float = 0.8          # ρ, correlation of the (β_j, θ_j) pairs (levels UNVERIFIED)
    signal: float = 0.2       # s, std of the coefficients (UNVERIFIED)
    noise: float = 1.0        # σ, noise standard deviation (UNVERIFIED)
    n_train: int = 50         # N, target sample size (paper: 50, 70, 90)
    n_test: int = 10_000      # test sample size (UNVERIFIED)
    n_source: int = 200       # n_S, source sample size for Trans-Ridge (UNVERIFIED)

    def __post_init__(self) -> None:
        _designs.check_sizes(self.n_train, self.n_test, self.n_source)
        if not -1.0 < self.x_corr < 1.0:
            raise ValueError(f"x_corr must lie in (-1, 1), got {self.x_corr}")


@task(family="dro", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> DROProblem:
    rng, d = ctx.rng, config.dim
    beta, theta = _designs.correlated_coefficients(rng, d, d, config.rho, config.signal, (1.0,))
    factor = _designs.ar1_factor(d, config.x_corr)

    def sample(n, coef):
        x = _designs.covariates(rng, n, factor, d)
        return x, _designs.responses(rng, x, coef, "regression", config.noise)

    (xt, yt), (xv, yv), (xs, ys), (xe, ye) = (sample(config.n_train, beta), sample(config.n_train, beta),
                                              sample(config.n_source, theta[:, 0]), sample(config.n_test, beta))
    return DROProblem(kind="regression", penalty_norm=2, x_train=xt, y_train=yt, x_val=xv, y_val=yv,
                   x_test=xe, y_test=ye, theta=theta, x_source=(xs,), y_source=(ys,), beta=beta)
