"""Simulation 3 of KG-WDRO: multi-source sparse linear regression.

Paper: Wang, Wang, Liu & Si, "Knowledge-Guided Wasserstein Distributionally Robust Optimization",
ICML 2025, arXiv 2502.08146, §5 Simulation 3: three source vectors θ_1, θ_2, θ_3,
a combination θ_S, target β correlated with θ_S, equal vs unequal combination weights,
N ∈ {50, 60, 70}, metric out-of-sample R²; the paper's methods: KG-WDRO multi-source (p = 1),
WDRO, oracle Trans-Lasso.

Instance: x ~ N(0, I_d); on the first `support` coordinates θ_m,j ~ N(0, s²) iid, θ_S = Σ w_m θ_m,
β_j = ρ·θ_S,j/‖w‖₂ + sqrt(1−ρ²)ξ_j, ξ_j ~ N(0, s²) (zero elsewhere); y = xᵀβ + σε.
Weights w = (1/3, 1/3, 1/3) (equal) or (0.7, 0.2, 0.1) (unequal). Validation sample of size N,
test sample of n_test, three source samples of n_source each (model θ_m).
Ground truth: β. Knowledge Θ = [θ_1 θ_2 θ_3] (the true source vectors).

Fidelity: reconstructed. UNVERIFIED (docs/papers/kg-wdro.md): d, the support size, s, σ, the unequal weights,
ρ levels, source sample sizes, true Θ as the knowledge, test size.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.dro import DROProblem, _designs

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"dim": 12, "support": 4, "n_train": 15, "n_test": 400, "n_source": 30}

EQUAL_WEIGHTS = (1 / 3, 1 / 3, 1 / 3)
UNEQUAL_WEIGHTS = (0.7, 0.2, 0.1)


@dataclass(frozen=True)
class Config:
    dim: int = 100            # d, number of covariates (UNVERIFIED)
    support: int = 20         # non-zero coefficients of each θ_m and β (UNVERIFIED)
    rho: float = 0.8          # ρ, correlation of (β_j, θ_S,j) (levels UNVERIFIED)
    signal: float = 0.5       # s, std of the non-zero source coefficients (UNVERIFIED)
    noise: float = 1.0        # σ, noise standard deviation (UNVERIFIED)
    unequal: bool = False     # combination weights w: equal (1/3 each) or unequal (0.7, 0.2, 0.1)
    n_train: int = 50         # N, target sample size (paper: 50, 60, 70)
    n_test: int = 10_000      # test sample size (UNVERIFIED)
    n_source: int = 100       # n_S, sample size of each source for Trans-Lasso (UNVERIFIED)

    def __post_init__(self) -> None:
        _designs.check_sizes(self.n_train, self.n_test, self.n_source)


@task(family="dro", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> DROProblem:
    rng, d = ctx.rng, config.dim
    weights = UNEQUAL_WEIGHTS if config.unequal else EQUAL_WEIGHTS
    beta, theta = _designs.correlated_coefficients(rng, d, config.support, config.rho, config.signal, weights)

    def sample(n, coef):
        x = _designs.covariates(rng, n, None, d)
        return x, _designs.responses(rng, x, coef, "regression", config.noise)

    (xt, yt), (xv, yv), (xe, ye) = (sample(config.n_train, beta), sample(config.n_train, beta),
                                    sample(config.n_test, beta))
    sources = [sample(config.n_source, theta[:, m]) for m in range(theta.shape[1])]
    return DROProblem(kind="regression", penalty_norm=1, x_train=xt, y_train=yt, x_val=xv, y_val=yv,
                   x_test=xe, y_test=ye, theta=theta, x_source=tuple(x for x, _ in sources),
                   y_source=tuple(y for _, y in sources), beta=beta)
