"""Regime R3, pure bilinear saddle (Borodich et al., ICML 2025).

f(x) = −aᵀx and g(y) = −cᵀy affine (A = C = 0), B square nonsingular with singular values
geometric in [μ_xy, L_xy]: min_x max_y ⟨y, Bx⟩ − aᵀx + cᵀy. The optimal B-product count is
(L_xy/μ_xy)·log(1/ε) (Ibrahim et al. 2020; the abstract's case (iii)). Random bases and offsets from the
run seed; z_0 = 0.

Fidelity: the generator of docs/papers/bilinear-saddle.md; constants are this reproduction's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.saddle import SaddleProblem, make_problem, spectrum

SMALLEST = {"d": 8, "target": 1e-4}


@dataclass(frozen=True)
class Config:
    d: int = 50            # d_x = d_y
    L_xy: float = 1.0      # σ_max(B)
    mu_xy: float = 0.1     # σ_min(B) > 0
    target: float = 1e-8   # ε on ‖z − z*‖²/‖z0 − z*‖²

    def __post_init__(self) -> None:
        if self.d < 2:
            raise ValueError(f"d must be >= 2, got {self.d}")
        if not 0 < self.mu_xy <= self.L_xy:
            raise ValueError("need 0 < mu_xy <= L_xy (B nonsingular)")


@task(family="saddle", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> SaddleProblem:
    d = config.d
    return make_problem(
        "bilinear",
        lam_A=np.zeros(d), lam_C=np.zeros(d),
        s=spectrum(d, config.mu_xy, config.L_xy),
        d_x=d, d_y=d, rng=ctx.rng, target=config.target,
    )
