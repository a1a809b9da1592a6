"""Extragradient (Korpelevich 1976), a baseline of Borodich et al. (ICML 2025).

With G(z) = (∇f(x) + Bᵀy, ∇g(y) − Bx) and L_G = max(L_x, L_y) + L_xy:

    w = z − η G(z),   z⁺ = z − η G(w),   η = step_scale / (2 L_G)   (standard: η = 1/(2L_G)).

Two calls of each oracle (∇f, ∇g, B, Bᵀ) per iteration. Linear in the SC-SC case, in the pure
bilinear case with B of full rank (rate ∝ (μ_xy/L_xy)²) and — the check of interest here — in
the paper's class where f and g are not strongly convex and B supplies the curvature.

Fidelity: faithful (the standard update and step).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = "a baseline of the paper (extragradient): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    max_calls: int = 4_000_000   # budget: ∇f + ∇g + B + Bᵀ calls
    step_scale: float = 1.0      # η = step_scale / (2 L_G)

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if not self.step_scale > 0:
            raise ValueError(f"step_scale must be > 0, got {self.step_scale}")


@method(family="saddle", config=Config)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    eta = config.step_scale / (2.0 * _common.operator_lipschitz(problem))
    oracle = problem.oracle(ctx, config.max_calls)
    x, y = problem.x0.copy(), problem.y0.copy()
    while not oracle.done:
        wx = x - eta * (oracle.grad_f(x) + oracle.BT(y))
        wy = y - eta * (oracle.grad_g(y) - oracle.B(x))
        x = x - eta * (oracle.grad_f(wx) + oracle.BT(wy))
        y = y - eta * (oracle.grad_g(wy) - oracle.B(wx))
        oracle.record(x, y)
    return oracle.result(x, y)
