"""Regime R1, strongly-convex-strongly-concave quadratic saddle (Borodich et al., ICML 2025).

f(x) = ½xᵀAx − aᵀx with λ(A) geometrically spaced in [μ_x, L_x], g(y) = ½yᵀCy − cᵀy with
λ(C) in [μ_y, L_y], B = P diag(s) Qᵀ square with s in [μ_xy, L_xy] (geometric) or, when
mu_xy = 0, linearly spaced in [0, L_xy] (B singular: μ_xy = μ_yx = 0, the classical SC-SC case
whose optimal complexity is √(L_x/μ_x) + L_xy/√(μ_x μ_y) + √(L_y/μ_y), the abstract's case (i)).
Random bases and offsets a, c ~ N(0, I) come from the run seed (task stream); z_0 = 0.

Fidelity: the generator is the plan of docs/papers/bilinear-saddle.md; the paper (theory only) has no instance.
The constants below are this reproduction's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.saddle import SaddleProblem, make_problem, spectrum

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"d": 8, "target": 1e-4}


@dataclass(frozen=True)
class Config:
    d: int = 50            # d_x = d_y (plan: 50 or 200)
    L_x: float = 1.0       # λ_max(A)
    mu_x: float = 0.01     # λ_min(A) > 0
    L_y: float = 1.0       # λ_max(C)
    mu_y: float = 0.01     # λ_min(C) > 0
    L_xy: float = 1.0      # σ_max(B)
    mu_xy: float = 0.0     # σ_min(B); 0 makes B singular
    target: float = 1e-8   # ε on ‖z − z*‖²/‖z0 − z*‖²

    def __post_init__(self) -> None:
        if self.d < 2:
            raise ValueError(f"d must be >= 2, got {self.d}")
        if not (0 < self.mu_x <= self.L_x and 0 < self.mu_y <= self.L_y):
            raise ValueError("SC-SC needs 0 < mu_x <= L_x and 0 < mu_y <= L_y")
        if not 0 <= self.mu_xy <= self.L_xy or self.L_xy <= 0:
            raise ValueError(f"need 0 <= mu_xy <= L_xy and L_xy > 0, got {self.mu_xy}, {self.L_xy}")


@task(family="saddle", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> SaddleProblem:
    d = config.d
    return make_problem(
        "sc_sc",
        lam_A=spectrum(d, config.mu_x, config.L_x),
        lam_C=spectrum(d, config.mu_y, config.L_y),
        s=spectrum(d, config.mu_xy, config.L_xy),
        d_x=d, d_y=d, rng=ctx.rng, target=config.target,
    )
