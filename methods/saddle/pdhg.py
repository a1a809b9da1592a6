"""Linearised PDHG / Condat–Vũ, a baseline of Borodich et al. (ICML 2025).

    x⁺ = x − τ(∇f(x) + Bᵀy),   x̄ = 2x⁺ − x,   y⁺ = y + σ(B x̄ − ∇g(y)),
    τ = step_scale / (2L_x + 2L_xy),   σ = step_scale / (2L_y + 2L_xy)   (safe defaults).

One call of each oracle per iteration. With step_scale = 1, (1/τ − L_x/2)(1/σ − L_y/2) ≥ 4L_xy²
> L_xy², Condat's condition for the smooth parts on both sides.

Fidelity: faithful (the standard update and steps).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = ("a baseline of the paper (linearised PDHG / Condat–Vũ): there is no mechanism of the paper to "
                "switch off")


@dataclass(frozen=True)
class Config:
    max_calls: int = 4_000_000   # budget: ∇f + ∇g + B + Bᵀ calls
    step_scale: float = 1.0      # multiplies both τ and σ

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if not self.step_scale > 0:
            raise ValueError(f"step_scale must be > 0, got {self.step_scale}")


@method(family="saddle", config=Config)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    p = problem
    tau = config.step_scale / (2 * p.L_x + 2 * p.L_xy)
    sigma = config.step_scale / (2 * p.L_y + 2 * p.L_xy)
    oracle = p.oracle(ctx, config.max_calls)
    x, y = p.x0.copy(), p.y0.copy()
    while not oracle.done:
        x_new = x - tau * (oracle.grad_f(x) + oracle.BT(y))
        y = y + sigma * (oracle.B(2.0 * x_new - x) - oracle.grad_g(y))
        x = x_new
        oracle.record(x, y)
    return oracle.result(x, y)
