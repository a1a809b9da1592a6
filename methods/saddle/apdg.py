"""APDG: accelerated primal-dual gradient method (Kovalev, Gasnikov & Richtárik, NeurIPS 2022).

arXiv 2112.15199, Algorithm 1 — a baseline of Borodich, Gasnikov & Kovalev (ICML 2025):

    y_m = y + θ(y − y_prev),  x_g = τ_x x + (1−τ_x) x_f,  y_g = τ_y y + (1−τ_y) y_f
    x⁺ = x + η_x α_x (x_g − x) − η_x β_x Bᵀ(Bx − ∇g(y_g)) − η_x (∇f(x_g) + Bᵀ y_m)
    y⁺ = y + η_y α_y (y_g − y) − η_y β_y B(Bᵀy + ∇f(x_g)) − η_y (∇g(y_g) − B x⁺)
    x_f⁺ = x_g + σ_x (x⁺ − x),  y_f⁺ = y_g + σ_y (y⁺ − y)

One ∇f, one ∇g and four coupling products per iteration (B·x⁺ is reused as the next B·x).
Linear convergence in four cases (Theorem 1): μ_x, μ_y > 0 (rate ~ √(L_x/μ_x) + √(L_y/μ_y) +
L_xy/√(μ_x μ_y), optimal); μ_x > 0 with B of full row rank; μ_y > 0 with full column rank;
μ_x = μ_y = 0 with B square nonsingular (rate ~ √(L_x L_y) L_xy/(μ_xy μ_yx) + L_xy²/μ², not
accelerated in the coupling). Parameters: `_common.apdg_parameters`, the case with the
largest guaranteed ρ.

Fidelity: reconstructed. The update is Algorithm 1 as recalled from the paper; the parameter
formulas were cross-checked against a public third-party implementation that cites arXiv
2112.15199v2 pp. 12-18 (two of its case-(c)/(d) formulas are not symmetric to cases (b) and
were corrected by the x↔y symmetry here). β = min(1/(2L), 1/(2ηL_xy²)): the third-party code
has 1/(ηL_xy²); `beta_factor` switches. Affine f or g (L = 0) get the effective smoothness of
tasks.saddle. The iterate reported is (x_k, y_k).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = ("a baseline of the paper (APDG, Kovalev, Gasnikov & Richtárik 2022; the outer scheme of "
                "bgk_separated): there is no mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    max_calls: int = 3_000_000   # budget: ∇f + ∇g + B + Bᵀ calls
    beta_factor: float = 0.5     # β = min(1/(2L), beta_factor/(η L_xy²)); 1/2 in Theorem 1
    output: str = "iterate"      # reported sequence: iterate = (x_k, y_k) (Theorem 1's), f = (x_f, y_f)

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if self.output not in _common.OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(_common.OUTPUTS)}, got {self.output!r}")
        if not self.beta_factor > 0:
            raise ValueError(f"beta_factor must be > 0, got {self.beta_factor}")


def skip(problem: SaddleProblem, config: Config) -> str | None:
    p = problem
    if (p.mu_x > 0 and p.mu_y > 0) or (p.mu_x > 0 and p.mu_xy > 0) or (p.mu_y > 0 and p.mu_yx > 0) \
            or (p.mu_xy > 0 and p.mu_yx > 0):
        return None
    return "APDG's Theorem 1 covers none of this instance's cases (no strong convexity and B rank-deficient)"


@method(family="saddle", config=Config, skip=skip)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    p = problem
    prm = _common.apdg_parameters(p.L_x, p.mu_x, p.L_y, p.mu_y, p.L_xy, p.mu_xy, p.mu_yx, config.beta_factor)
    oracle = p.oracle(ctx, config.max_calls)
    x, y = _common.apdg_loop(_common.view(p, oracle), prm, oracle, output=config.output)
    return oracle.result(x, y)
