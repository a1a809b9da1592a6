"""Regime R4, the paper's new class: f and g smooth but not strongly convex, curvature from B.

Borodich, Gasnikov & Kovalev (ICML 2025, arXiv 2411.14601), abstract (curvature lent by B), our R4:
A and C are PSD with a fraction `zero_fraction` (default half) of their eigenvalues equal to 0,
so μ_x = μ_y = 0; the nonzero ones are geometric in [L/spread, L]. B is square with singular
values geometric in [μ_xy, L_xy], μ_xy > 0. f and g alone give no strong convexity, yet the
saddle point is unique and linear convergence is possible: max_y ⟨y,Bx⟩ − g(y) = g*(Bx) is
μ_xy²/L_y-strongly convex in x, and symmetrically for y, so δ_x = μ_xy²/L_y, δ_y = μ_xy²/L_x,
κ_x = κ_y = L_x L_y/μ_xy², κ_xy = L_xy² L_x L_y/μ_xy⁴ (tasks.saddle docstring).
Random bases and offsets from the run seed; z_0 = 0.

aligned=True (our addition; used for the complexity-scaling claims): with independent random
bases the small singular directions of B almost never fall in the null spaces of A and C, so the
instance is much easier than κ_x says (extragradient's ∇f count then grows like κ_x^0.2). The
aligned instance shares bases (B = V diag(s) Uᵀ, A = U diag(λ_A) Uᵀ, C = V diag(λ_C) Vᵀ) and
pairs the singular values, in ascending order, alternately with (λ_A = 0, λ_C = large) and
(λ_A = large, λ_C = 0), the nonzero curvatures in descending order: the coordinate with s = μ_xy
then has exactly the curvature δ_x = μ_xy²/L_y (and the next one δ_y = μ_xy²/L_x), the structure
of the worst case behind δ.

Fidelity: the generator of docs/papers/bilinear-saddle.md; constants (d = 50, L = 1, spread 10, s ∈ [0.1, 1]) are this
reproduction's choice, the paper has no experiments.
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
    d: int = 50                # d_x = d_y
    L_x: float = 1.0           # λ_max(A)
    L_y: float = 1.0           # λ_max(C)
    spread: float = 10.0       # nonzero eigenvalues of A (C) lie in [L_x/spread, L_x] ([L_y/spread, L_y])
    zero_fraction: float = 0.5  # share of zero eigenvalues of A and of C (μ_x = μ_y = 0 when > 0)
    L_xy: float = 1.0          # σ_max(B)
    mu_xy: float = 0.1         # σ_min(B) > 0
    aligned: bool = False      # True: shared bases, worst-case pairing of curvatures and singular values
    target: float = 1e-8       # ε on ‖z − z*‖²/‖z0 − z*‖²

    def __post_init__(self) -> None:
        if self.d < 2:
            raise ValueError(f"d must be >= 2, got {self.d}")
        if not (self.L_x > 0 and self.L_y > 0 and self.spread >= 1):
            raise ValueError("need L_x > 0, L_y > 0 and spread >= 1")
        if not 0 < self.zero_fraction < 1:
            raise ValueError(f"zero_fraction must lie in (0, 1), got {self.zero_fraction}")
        if not 0 < self.mu_xy <= self.L_xy:
            raise ValueError("need 0 < mu_xy <= L_xy (B nonsingular)")


def aligned_spectra(lam_A: np.ndarray, lam_C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder lam_A, lam_C against ascending singular values: even coordinates get (0, large),
    odd ones (large, 0), the nonzero values in descending order (module docstring)."""
    d = len(lam_A)
    nz_A = np.sort(lam_A[lam_A > 0])[::-1]
    nz_C = np.sort(lam_C[lam_C > 0])[::-1]
    A, C = np.zeros(d), np.zeros(d)
    odd, even = np.arange(1, d, 2), np.arange(0, d, 2)
    if len(nz_A) > len(odd) or len(nz_C) > len(even):
        raise ValueError("aligned=True needs zero_fraction = 0.5 (half of each spectrum zero)")
    A[odd[:len(nz_A)]] = nz_A
    C[even[:len(nz_C)]] = nz_C
    return A, C


@task(family="saddle", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> SaddleProblem:
    d = config.d
    lam_A = spectrum(d, config.L_x / config.spread, config.L_x, config.zero_fraction)
    lam_C = spectrum(d, config.L_y / config.spread, config.L_y, config.zero_fraction)
    if config.aligned:
        lam_A, lam_C = aligned_spectra(lam_A, lam_C)
    return make_problem(
        "coupling_curvature", lam_A=lam_A, lam_C=lam_C,
        s=spectrum(d, config.mu_xy, config.L_xy),
        d_x=d, d_y=d, rng=ctx.rng, target=config.target, shared_bases=config.aligned,
    )
