"""Regime R2, linearly constrained minimisation as a saddle (Borodich et al., ICML 2025).

min_x f(x) s.t. Bx = −c, written as min_x max_y f(x) + ⟨y, Bx⟩ − g(y) with g(y) = −cᵀy affine
(C = 0, L_y = μ_y = 0). λ(A) geometrically spaced in [μ_x, L_x]; B is d_y × d_x with d_y < d_x
and full row rank, singular values geometric in [μ_xy, L_xy] (so μ_yx = 0). The optimal
complexities are √(L_x/μ_x)·log(1/ε) ∇f calls and (L_xy/μ_xy)·√(L_x/μ_x)·log(1/ε) B-products
(OPAPC, Salim et al. 2022; the abstract's case (ii)), which is √κ_xy with δ_x = μ_x, δ_y = μ_xy²/L_x.
Random bases and offsets from the run seed; z_0 = 0.

Fidelity: the generator of docs/papers/bilinear-saddle.md; constants are this reproduction's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.saddle import SaddleProblem, make_problem, spectrum

SMALLEST = {"d_x": 8, "d_y": 4, "target": 1e-4}


@dataclass(frozen=True)
class Config:
    d_x: int = 50          # primal dimension
    d_y: int = 25          # number of constraints, < d_x
    L_x: float = 1.0       # λ_max(A)
    mu_x: float = 0.01     # λ_min(A) > 0
    L_xy: float = 1.0      # σ_max(B)
    mu_xy: float = 0.1     # σ_min(B) > 0 (full row rank)
    target: float = 1e-8   # ε on ‖z − z*‖²/‖z0 − z*‖²

    def __post_init__(self) -> None:
        if not 1 <= self.d_y < self.d_x:
            raise ValueError(f"need 1 <= d_y < d_x, got d_x={self.d_x}, d_y={self.d_y}")
        if not 0 < self.mu_x <= self.L_x:
            raise ValueError("need 0 < mu_x <= L_x (f strongly convex)")
        if not 0 < self.mu_xy <= self.L_xy:
            raise ValueError("need 0 < mu_xy <= L_xy (B of full row rank)")


@task(family="saddle", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> SaddleProblem:
    return make_problem(
        "constrained",
        lam_A=spectrum(config.d_x, config.mu_x, config.L_x),
        lam_C=np.zeros(config.d_y),
        s=spectrum(config.d_y, config.mu_xy, config.L_xy),
        d_x=config.d_x, d_y=config.d_y, rng=ctx.rng, target=config.target,
    )
