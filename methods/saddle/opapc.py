"""OPAPC: optimal algorithm for strongly convex minimisation under affine constraints.

Salim, Condat, Kovalev & Richtárik (AISTATS 2022, arXiv 2102.11079) — a baseline of Borodich
et al. (ICML 2025) for regime R2 (the abstract's special case (ii)): min_x f(x) s.t. Bx = b, the saddle problem
with g(y) = ⟨b, y⟩ affine (so b = ∇g(y), read with one ∇g call). APAPC (PAPC with Nesterov
acceleration) on the constraint preconditioned by the Chebyshev polynomial S = S_n(BBᵀ),
n = ⌈L_xy/μ_xy⌉, so that the constraint operator Bᵀ S B has its nonzero spectrum in
[11/15, 19/15] (`_common.chebyshev_solve`):

    x_g = τ x + (1−τ) x_f,   g = ∇f(x_g)
    x_½ = (x − η(g − α x_g + Bᵀy)) / (1 + ηα)
    y⁺  = y + θ S (B x_½ − b)
    x⁺  = (x − η(g − α x_g + Bᵀy⁺)) / (1 + ηα)
    x_f⁺ = x_g + (2τ/(2−τ)) (x⁺ − x)

τ = min(1, ½√(χ/κ)), η = 1/(4τL_x), θ = 1/(η·19/15), α = μ_x, with κ = L_x/μ_x and χ = 19/11.
APAPC's dual variable is u = Bᵀy; y itself is carried (u_0 = 0 ⇔ y_0 = 0), and converges to
y* because B has full row rank. One ∇f and 2 + 2(n−1) coupling products per iteration (Bᵀy⁺
is reused as the next Bᵀy). Complexity O(√κ·log 1/ε) ∇f calls and O((L_xy/μ_xy)√κ·log 1/ε)
products, optimal for R2.

Fidelity: reconstructed. The iteration is APAPC as recalled and cross-checked against a public
third-party implementation citing the paper; the Chebyshev constants 11/15, 19/15 and
n = ⌈√χ(BBᵀ)⌉ are those of Salim et al. and Kovalev et al.'s decentralised methods. The
preconditioned dual update S(Bx − b) is the algebraic form of their P(W)-based update. The
reported iterate is (x_k, y_k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.saddle import _common
from tasks.saddle import SaddleProblem, SaddleResult

SWITCHED_OFF = ("a baseline of the paper (OPAPC, Salim et al. 2022, for the affine-constraint regime): there is no "
                "mechanism of the paper to switch off")


@dataclass(frozen=True)
class Config:
    max_calls: int = 10_000_000  # budget: ∇f + ∇g + B + Bᵀ calls
    degree_factor: float = 1.0   # Chebyshev degree n = ⌈degree_factor·L_xy/μ_xy⌉

    def __post_init__(self) -> None:
        _common.validate_budget(self)
        if not self.degree_factor > 0:
            raise ValueError(f"degree_factor must be > 0, got {self.degree_factor}")


def skip(problem: SaddleProblem, config: Config) -> str | None:
    p = problem
    if p.L_y > 0:
        return f"OPAPC solves min f(x) s.t. Bx = b (g affine, L_y = 0); this instance has L_y = {p.L_y:g}"
    if p.mu_x <= 0:
        return "OPAPC needs f strongly convex (μ_x > 0)"
    if p.mu_xy <= 0:
        return "OPAPC needs B of full row rank (μ_xy > 0)"
    return None


@method(family="saddle", config=Config, skip=skip)
def solve(problem: SaddleProblem, config: Config, ctx: RunContext) -> SaddleResult:
    p = problem
    low, high = p.mu_xy**2, p.L_xy**2
    n = _common.chebyshev_degree(low, high, config.degree_factor)
    eps = max(_common.chebyshev_error(low, high, n), 1.0 - _common.CHEB_LOW)
    L_K, mu_K = 1.0 + eps, 1.0 - eps           # spectrum of Bᵀ S B on its range
    kappa, chi = p.L_x / p.mu_x, L_K / mu_K
    tau = min(1.0, 0.5 * math.sqrt(chi / kappa))
    eta = 1.0 / (4.0 * tau * p.L_x)
    theta = 1.0 / (eta * L_K)
    alpha = p.mu_x

    oracle = p.oracle(ctx, config.max_calls)

    def S(w):
        return _common.chebyshev_solve(lambda v: oracle.B(oracle.BT(v)), w, low, high, n)

    b = oracle.grad_g(p.y0)                    # g affine: ∇g ≡ b, the constraint's right-hand side
    x, y = p.x0.copy(), p.y0.copy()
    x_f = x.copy()
    BTy = oracle.BT(y)
    while not oracle.done:
        x_g = tau * x + (1 - tau) * x_f
        g = oracle.grad_f(x_g) - alpha * x_g
        x_half = (x - eta * (g + BTy)) / (1 + eta * alpha)
        y = y + theta * S(oracle.B(x_half) - b)
        BTy = oracle.BT(y)
        x_new = (x - eta * (g + BTy)) / (1 + eta * alpha)
        x_f = x_g + (2 * tau / (2 - tau)) * (x_new - x)
        x = x_new
        oracle.record(x, y)
    return oracle.result(x, y)
