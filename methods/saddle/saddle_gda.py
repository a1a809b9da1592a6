"""Simultaneous gradient descent-ascent (GDA), a baseline of Borodich et al. (ICML 2025).

With z = (x, y) and the monotone operator G(z) = (∇f(x) + Bᵀy, ∇g(y) − Bx):

    z⁺ = z − η G(z),   η = step_scale · m / L_G²,   L_G = max(L_x, L_y) + L_xy.

One ∇f, one ∇g, one B and one Bᵀ call per iteration. GDA is linear when G is m-strongly
monotone (m = min(μ_x, μ_y) > 0); it diverges on the pure bilinear game (G skew), which `skip`
therefore declines (calling solve directly shows the divergence). Without strong
monotonicity (regimes R2, R4) there is no classical step rule: m = min(δ_x, δ_y), the effective
curvature of tasks.saddle, is used there (this reproduction's choice, UNVERIFIED; GDA converges on
these quadratics for small enough η because every eigenvalue of G's Jacobian then has a positive
real part, at a rate that the measurement reports).

Fidelity: faithful to the standard simultaneous update; the step rule outside the SC-SC case is ours.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = "a baseline of the paper (simultaneous GDA): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    max_calls: int = 2_000_000   # budget: ∇f + ∇g + B + Bᵀ calls
    step_scale: float = 1.0      # η = step_scale · m / L_G²

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if not self.step_scale > 0:
            raise ValueError(f"step_scale must be > 0, got {self.step_scale}")


def skip(problem: SaddleProblem, config: Config) -> str | None:
    if problem.L_x == 0 and problem.L_y == 0:
        return "GDA diverges on the pure bilinear game (f, g affine: G is skew, |1 − iησ| > 1 for every η)"
    return None


def step_size(problem: SaddleProblem, config: Config) -> float:
    p = problem
    m = min(p.mu_x, p.mu_y)
    if m <= 0:
        m = min(p.delta_x, p.delta_y)
    return config.step_scale * m / _common.operator_lipschitz(p) ** 2


@method(family="saddle", config=Config, skip=skip)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    eta = step_size(problem, config)
    oracle = problem.oracle(ctx, config.max_calls)
    x, y = problem.x0.copy(), problem.y0.copy()
    while not oracle.done:
        gx = oracle.grad_f(x) + oracle.BT(y)
        gy = oracle.grad_g(y) - oracle.B(x)
        x, y = x - eta * gx, y - eta * gy
        oracle.record(x, y)
    return oracle.result(x, y)
