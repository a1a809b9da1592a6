"""Optimistic gradient descent-ascent (OGDA; Popov 1980), a baseline of Borodich et al. (ICML 2025).

The standard update, with G(z) = (∇f(x) + Bᵀy, ∇g(y) − Bx) and L_G = max(L_x, L_y) + L_xy:

    z_{k+1} = z_k − 2η G(z_k) + η G(z_{k−1}),   η = step_scale / (4 L_G),   G(z_{−1}) = G(z_0).

One call of each oracle per iteration (G(z_k) is kept for the next step).

Fidelity: faithful (the standard update and step); the initialisation G(z_{−1}) = G(z_0) makes the
first step plain GDA, the usual convention.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = "a baseline of the paper (optimistic GDA): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    max_calls: int = 4_000_000   # budget: ∇f + ∇g + B + Bᵀ calls
    step_scale: float = 1.0      # η = step_scale / (4 L_G)

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if not self.step_scale > 0:
            raise ValueError(f"step_scale must be > 0, got {self.step_scale}")


@method(family="saddle", config=Config)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    eta = config.step_scale / (4.0 * _common.operator_lipschitz(problem))
    oracle = problem.oracle(ctx, config.max_calls)
    x, y = problem.x0.copy(), problem.y0.copy()
    prev_x = prev_y = None
    while not oracle.done:
        gx = oracle.grad_f(x) + oracle.BT(y)
        gy = oracle.grad_g(y) - oracle.B(x)
        if prev_x is None:
            prev_x, prev_y = gx, gy
        x = x - 2.0 * eta * gx + eta * prev_x
        y = y - 2.0 * eta * gy + eta * prev_y
        prev_x, prev_y = gx, gy
        oracle.record(x, y)
    return oracle.result(x, y)
