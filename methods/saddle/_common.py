"""Shared pieces of the saddle methods (Borodich, Gasnikov & Kovalev, ICML 2025; the standard baselines).

Not a registered method (leading underscore). Holds:
- `View`: the problem seen as min_u max_v F(u) + ⟨v, K u⟩ − G(v), either as given (u = x,
  K = B) or with the roles of x and y exchanged (u = y, F = g, G = f, K = −Bᵀ: the saddle
  point of f(x) + ⟨y,Bx⟩ − g(y) in (x, y) is the one of g(y) + ⟨x, −Bᵀy⟩ − f(x) in (y, x)),
  with the constants of that orientation; every product goes through the counting oracle.
- the Chebyshev semi-iteration S_n(W)·u for W = K Kᵀ (Salim, Condat, Kovalev & Richtárik 2022,
  OPAPC; Scaman et al. 2017): λ·S_n(λ) = 1 − T_n(ℓ(λ))/T_n(ℓ(0)) lies in [1 − ε_n, 1 + ε_n] on
  the spectrum [μ², L²], with ε_n ≤ 4/15 for n = ⌈L/μ⌉, i.e. W·S_n(W) has spectrum in
  [11/15, 19/15] at the cost of n − 1 products by W.
- the APDG iteration and its parameters (Kovalev, Gasnikov & Richtárik, NeurIPS 2022, arXiv
  2112.15199, Algorithm 1 and the four parameter cases of its Theorem 1), optionally with the
  dual side preconditioned by S (used by bgk_separated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tasks.saddle import Oracle, SaddleProblem, effective_smoothness

Vec = np.ndarray

OUTPUTS = ("f", "iterate")  # APDG's reported sequence: (x_f, y_f) or (x_k, y_k)

# Chebyshev-preconditioned coupling: spectrum bounds of W·S_n(W) for n = ⌈√(L²/μ²)⌉ (see above)
CHEB_LOW, CHEB_HIGH = 11.0 / 15.0, 19.0 / 15.0


def _div(num: float, den: float) -> float:
    """num/den with x/0 = inf for x > 0 and 0/0 = inf (a missing constraint, never binding)."""
    return math.inf if den == 0 else num / den


def operator_lipschitz(problem: SaddleProblem) -> float:
    """L_G ≤ max(L_x, L_y) + L_xy for G(z) = (∇f(x) + Bᵀy, ∇g(y) − Bx)."""
    return max(problem.L_x, problem.L_y) + problem.L_xy


def validate_budget(config) -> None:
    if not isinstance(config.max_calls, int) or config.max_calls < 1:
        raise ValueError(f"max_calls must be a positive integer, got {config.max_calls!r}")


# ---- the problem in one of its two orientations ---------------------------------------------

@dataclass
class View:
    """min_u max_v F(u) + ⟨v, K u⟩ − G(v) with counted oracles and this orientation's constants."""

    grad_F: Callable[[Vec], Vec]
    grad_G: Callable[[Vec], Vec]
    K: Callable[[Vec], Vec]
    KT: Callable[[Vec], Vec]
    u0: Vec
    v0: Vec
    L_F: float
    mu_F: float
    L_G: float
    mu_G: float
    L_K: float
    mu_Kv: float  # √λ_min(K Kᵀ): > 0 iff K has full row rank (the APDG "μ_xy" of this view)
    mu_Ku: float  # √λ_min(Kᵀ K): > 0 iff K has full column rank (the APDG "μ_yx")
    swapped: bool

    def to_xy(self, u: Vec, v: Vec) -> tuple[Vec, Vec]:
        return (v, u) if self.swapped else (u, v)


def view(problem: SaddleProblem, oracle: Oracle, swapped: bool = False) -> View:
    p = problem
    if not swapped:
        return View(oracle.grad_f, oracle.grad_g, oracle.B, oracle.BT, p.x0.copy(), p.y0.copy(),
                    p.L_x, p.mu_x, p.L_y, p.mu_y, p.L_xy, p.mu_xy, p.mu_yx, False)
    return View(oracle.grad_g, oracle.grad_f, lambda y: -oracle.BT(y), lambda x: -oracle.B(x),
                p.y0.copy(), p.x0.copy(), p.L_y, p.mu_y, p.L_x, p.mu_x, p.L_xy, p.mu_yx, p.mu_xy, True)


# ---- Chebyshev acceleration of the coupling ----------------------------------------------------

def chebyshev_degree(low: float, high: float, factor: float = 1.0) -> int:
    """n = ⌈factor·√(high/low)⌉ for a spectrum in [low, high] (factor 1: OPAPC's choice)."""
    return max(1, math.ceil(factor * math.sqrt(high / low) - 1e-12))


def chebyshev_error(low: float, high: float, n: int) -> float:
    """ε_n = 1/T_n((high + low)/(high − low)): λ·S_n(λ) ∈ [1 − ε_n, 1 + ε_n] on [low, high]."""
    if high == low:
        return 0.0
    sigma = (high + low) / (high - low)
    return 1.0 / math.cosh(n * math.acosh(sigma))


def chebyshev_solve(apply_W: Callable[[Vec], Vec], u: Vec, low: float, high: float, n: int) -> Vec:
    """S_n(W)·u: n steps of the Chebyshev semi-iteration for W s = u from s_0 = 0 (n − 1 W-products).

    The residual u − W s_n = p_n(W) u with p_n(λ) = T_n(ℓ(λ))/T_n(ℓ(0)), ℓ(λ) = (high + low − 2λ)/(high − low)
    (Saad, Iterative Methods for Sparse Linear Systems, Alg. 12.1).
    """
    theta = 0.5 * (high + low)
    if high == low or n == 1:
        return u / theta
    delta = 0.5 * (high - low)
    sigma1 = theta / delta
    rho = 1.0 / sigma1
    r = u
    d = u / theta
    s = d
    for _ in range(n - 1):
        r = r - apply_W(d)
        rho_next = 1.0 / (2.0 * sigma1 - rho)
        d = (rho_next * rho) * d + (2.0 * rho_next / delta) * r
        rho = rho_next
        s = s + d
    return s


# ---- APDG (Kovalev, Gasnikov & Richtárik 2022) --------------------------------------------------

@dataclass(frozen=True)
class APDGParams:
    case: str       # a: μ_F, μ_G > 0; b: μ_F > 0, full row rank; c: μ_G > 0, full column rank; d: both ranks
    rho: float      # guaranteed contraction 1 − ρ per iteration (Theorem 1)
    theta: float
    eta_u: float
    eta_v: float
    tau_u: float
    tau_v: float
    sigma_u: float
    sigma_v: float
    alpha_u: float
    alpha_v: float
    beta_u: float
    beta_v: float


def apdg_parameters(L_x: float, mu_x: float, L_y: float, mu_y: float, L_xy: float, mu_xy: float,
                    mu_yx: float, beta_factor: float = 0.5) -> APDGParams:
    """APDG's parameters for whichever of its four cases gives the fastest guaranteed rate.

    A μ-strongly convex function is also 0-strongly convex, so every case whose assumptions hold
    is valid; the one with the largest ρ is used, with the μ's it does not use set to 0. An
    affine f or g (L = 0) gets the effective smoothness of tasks.saddle.effective_smoothness.
    β = min(1/(2L), beta_factor/(η L_xy²)) (beta_factor = 1/2 in APDG's Theorem 1).
    """
    L_x, L_y = effective_smoothness(L_x, L_y, mu_xy, mu_yx)
    candidates = []
    if mu_x > 0 and mu_y > 0:
        candidates.append(("a", mu_x, mu_y, math.sqrt(mu_y / mu_x), math.sqrt(mu_x / (2 * L_x)),
                           math.sqrt(mu_y / (2 * L_y)),
                           1.0 / (4 + 4 * max(math.sqrt(L_x / mu_x), math.sqrt(L_y / mu_y),
                                              L_xy / math.sqrt(mu_x * mu_y)))))
    if mu_x > 0 and mu_xy > 0:
        candidates.append(("b", mu_x, 0.0, math.sqrt(mu_xy**2 / (2 * mu_x * L_x)), math.sqrt(mu_x / (2 * L_x)),
                           min(1.0, math.sqrt(_div(mu_xy**2, 4 * L_x * L_y))),
                           1.0 / (4 + 8 * max(math.sqrt(L_x * L_y) / mu_xy, L_xy / mu_xy * math.sqrt(L_x / mu_x),
                                              L_xy**2 / mu_xy**2))))
    if mu_y > 0 and mu_yx > 0:
        candidates.append(("c", 0.0, mu_y, math.sqrt(2 * mu_y * L_y) / mu_yx,
                           min(1.0, math.sqrt(_div(mu_yx**2, 4 * L_x * L_y))), math.sqrt(mu_y / (2 * L_y)),
                           1.0 / (4 + 8 * max(math.sqrt(L_x * L_y) / mu_yx, L_xy / mu_yx * math.sqrt(L_y / mu_y),
                                              L_xy**2 / mu_yx**2))))
    if mu_xy > 0 and mu_yx > 0:
        candidates.append(("d", 0.0, 0.0, (mu_xy / mu_yx) * math.sqrt(L_y / L_x),
                           min(1.0, math.sqrt(mu_yx**2 / (4 * L_x * L_y))),
                           min(1.0, math.sqrt(mu_xy**2 / (4 * L_x * L_y))),
                           1.0 / (2 + 8 * max(math.sqrt(L_x * L_y) * L_xy / (mu_xy * mu_yx),
                                              L_xy**2 / mu_yx**2, L_xy**2 / mu_xy**2))))
    if not candidates:
        raise ValueError("APDG needs μ_x, μ_y > 0, or μ_x > 0 with μ_xy > 0, or μ_y > 0 with μ_yx > 0, "
                         "or μ_xy, μ_yx > 0")
    case, ax, ay, delta, sx, sy, rho = max(candidates, key=lambda c: c[-1])
    eta_x = min(_div(1.0, 4 * (ax + L_x * sx)), delta / (4 * L_xy))
    eta_y = min(_div(1.0, 4 * (ay + L_y * sy)), 1.0 / (4 * L_xy * delta))
    return APDGParams(
        case=case, rho=rho, theta=1.0 - rho, eta_u=eta_x, eta_v=eta_y,
        tau_u=1.0 / (1.0 / sx + 0.5), tau_v=1.0 / (1.0 / sy + 0.5), sigma_u=sx, sigma_v=sy,
        alpha_u=ax, alpha_v=ay,
        beta_u=min(_div(1.0, 2 * L_y), beta_factor / (eta_x * L_xy**2)),
        beta_v=min(_div(1.0, 2 * L_x), beta_factor / (eta_y * L_xy**2)),
    )


def apdg_loop(v_: View, prm: APDGParams, oracle: Oracle,
              precondition: Callable[[Vec], Vec] | None = None, output: str = "iterate") -> tuple[Vec, Vec]:
    """APDG (Algorithm 1 of arXiv 2112.15199) on the view; `precondition` = S applied on the v side.

    Per iteration, with S = I when precondition is None:
        v_m = v + θ(v − v_prev),  u_g = τ_u u + (1−τ_u) u_f,  v_g = τ_v v + (1−τ_v) v_f
        u⁺ = u + η_u α_u (u_g − u) − η_u [∇F(u_g) + Kᵀ(β_u S(K u − ∇G(v_g)) + v_m)]
        v⁺ = v + η_v α_v (v_g − v) − η_v S[β_v K(Kᵀv + ∇F(u_g)) + ∇G(v_g) − K u⁺]
        u_f⁺ = u_g + σ_u (u⁺ − u),  v_f⁺ = v_g + σ_v (v⁺ − v)
    With S = I this is APDG verbatim. With S = S_n(KKᵀ) it is APDG run in the variable w with
    v = S^{1/2} w, i.e. on the problem with coupling S^{1/2}K and dual function G(S^{1/2}·),
    written back in v (S^{1/2} is never formed). K u_{k+1} is cached for the next iteration:
    4 coupling products + 1 ∇F + 1 ∇G per iteration, plus two S-applications.
    Stops when the oracle says so (target, budget or divergence). Returns (x, y).
    """
    S = precondition if precondition is not None else (lambda w: w)
    u, v = v_.u0.copy(), v_.v0.copy()
    u_f, v_f, v_prev = u.copy(), v.copy(), v.copy()
    Ku = v_.K(u)
    while not oracle.done:
        v_m = v + prm.theta * (v - v_prev)
        u_g = prm.tau_u * u + (1 - prm.tau_u) * u_f
        v_g = prm.tau_v * v + (1 - prm.tau_v) * v_f
        gu, gv = v_.grad_F(u_g), v_.grad_G(v_g)
        u_new = u + prm.eta_u * prm.alpha_u * (u_g - u) - prm.eta_u * (
            gu + v_.KT(prm.beta_u * S(Ku - gv) + v_m))
        KTv = v_.KT(v)
        Ku_new = v_.K(u_new)
        v_new = v + prm.eta_v * prm.alpha_v * (v_g - v) - prm.eta_v * S(
            prm.beta_v * v_.K(KTv + gu) + gv - Ku_new)
        u_f = u_g + prm.sigma_u * (u_new - u)
        v_f = v_g + prm.sigma_v * (v_new - v)
        v_prev, v, u, Ku = v, v_new, u_new, Ku_new
        oracle.record(*(v_.to_xy(u, v) if output == "iterate" else v_.to_xy(u_f, v_f)))
    return v_.to_xy(u, v) if output == "iterate" else v_.to_xy(u_f, v_f)
