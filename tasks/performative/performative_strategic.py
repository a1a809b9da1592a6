"""Strategic classification (synthetic stand-in): a multi-dimensional performative task.

Paper: Li, Yemini & Wai, "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for
Stochastic Bias and Remedies", ICML 2025, arXiv 2404.10995. The paper motivates D(θ) with
strategic users reacting to a loan policy; its non-quadratic experiments are not in the accessible
material, so this is a synthetic stand-in in the style of Perdomo et al. (2020):

    x_i = (ξ_i, 1), ξ_i ~ N(0, I_{d−1}) (last feature: a constant intercept),
    y_i = ±1 with P(y_i = 1) = σ(w*ᵀξ_i + b*),  ‖w*‖ = label_scale, b* = label_bias
    D(θ): uniform over {(x_i − S θ, y_i)}, S = β·diag(1 on the first `strategic_dims` features)
    ℓ(θ; (x, y)) = log(1 + exp(−y θᵀx)) + (λ/2)‖θ‖²
    ∇ℓ(θ; (x̃, y)) = −y σ(−y θᵀx̃) x̃ + λθ

All data come from `world_seed` (fixed across run seeds); θ_0 = 0.
Ground truth: θ_PS by repeated risk minimisation θ_{k+1} = argmin_θ f(θ, θ_k) on the full data
(scipy trust-exact with exact gradient and Hessian, polished by two Newton steps) until
‖θ_{k+1} − θ_k‖ < 1e-10; θ_∞(c) as the root of the clipped mean field
θ ↦ (1/m)Σ_i clip_c(∇ℓ(θ; z_i(θ))) (scipy root from θ_PS, residual checked).

Deviations (documented constants; values for the defaults):
- μ is the measured local modulus λ_min(∇²_θ f(θ_PS, θ_PS)) = 0.234 (≥ λ, the worst case), so
  that it is comparable with μ̃; with μ = λ the "Non-Opt" rule would take a larger step than "Opt".
- μ̃ is measured, not μ − Lβ: λ_min of the symmetric part of the Jacobian of the mean field
  F(θ) = E_{D(θ)} ∇ℓ(θ; Z) at θ_PS, J = (1/m)Σ [w x̃(x̃ − Sθ)ᵀ + y σ(−u) S] + λI with
  u = y θᵀx̃, w = σ(u)σ(−u); μ̃ = 0.192. The worst-case μ − Lβ = −1.19 is vacuous here.
- L is local: the stored value is the bound max_i [σ(−u_i) + w_i ‖x̃_i‖ ‖θ_PS‖] ≥
  max_i ‖∂_z ∇_θ ℓ(θ_PS; z_i)‖ (stored: 1.42), not a sup over X; so shifted_modulus ≠ mu − L·beta.
- G = max_i ‖x_i‖ + (β + λ)·radius, an upper bound on sup ‖∇ℓ‖ over X and the shifted data.
Defaults (λ = 0.1, β = 1, ‖w*‖ = 1, b* = −0.5, d = 10, 5 strategic features, m = 2000) make
clipping at c = 1 bind (62 % of the per-sample gradient norms at θ_PS exceed 1), give a clipping
bias ‖θ_∞(1) − θ_PS‖² = 0.077 and move θ_PS by ‖θ_PS − θ_{β=0}‖² = 0.029 from the static optimum.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from bench.context import RunContext
from bench.registry import task
from tasks.performative import PerformativeProblem

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"dim": 3, "strategic_dims": 1, "m": 100}


@dataclass(frozen=True)
class Config:
    dim: int = 10              # d, features including the constant intercept feature
    strategic_dims: int = 5    # features agents shift: x_s ← x_s − βθ_s
    m: int = 2000              # m, data points
    beta: float = 1.0          # β, strength of the strategic response
    lam: float = 0.1           # λ, ridge weight (worst-case strong convexity)
    label_scale: float = 1.0   # ‖w*‖, signal of the true logistic model
    label_bias: float = -0.5   # b*, intercept of the true logistic model
    radius: float = 5.0        # X = {‖θ‖ ≤ radius}; θ_PS and θ_∞(1) have norm ≈ 0.6–0.9
    world_seed: int = 0        # seed of the one-time draw of (x_i, y_i)

    def __post_init__(self) -> None:
        if self.dim < 2 or not 0 <= self.strategic_dims <= self.dim - 1:
            raise ValueError(f"need dim >= 2 and 0 <= strategic_dims <= dim − 1, got dim={self.dim}, "
                             f"strategic_dims={self.strategic_dims}")
        if self.m < 1 or not self.lam > 0 or self.beta < 0 or not self.radius > 0:
            raise ValueError(f"need m >= 1, lam > 0, beta >= 0, radius > 0; got m={self.m}, lam={self.lam}, "
                             f"beta={self.beta}, radius={self.radius}")


def _sigmoid(u: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * u))  # stable for any u


def _data(config: Config) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(config.world_seed)
    x = np.ones((config.m, config.dim))
    x[:, :-1] = rng.standard_normal((config.m, config.dim - 1))    # (m, d), last column = 1
    w = rng.standard_normal(config.dim - 1)
    w *= config.label_scale / np.linalg.norm(w)
    p = _sigmoid(x[:, :-1] @ w + config.label_bias)
    y = np.where(rng.random(config.m) < p, 1.0, -1.0)                # (m,)
    return x, y


def _repeated_risk_minimisation(x, y, shift, lam, max_rounds: int = 300) -> np.ndarray | None:
    """θ_{k+1} = argmin_θ (1/m)Σ log(1 + exp(−y θᵀ(x − Sθ_k))) + (λ/2)‖θ‖², to ‖Δθ‖ < 1e-10;
    None if it has not converged after max_rounds (RRM contracts only for small enough β)."""
    m, d = x.shape
    theta = np.zeros(d)
    for _ in range(max_rounds):
        xt = x - shift * theta  # data deployed against θ_k

        def risk(t):
            u = y * (xt @ t)
            grad = xt.T @ (-y * _sigmoid(-u)) / m + lam * t
            return np.mean(np.logaddexp(0.0, -u)) + 0.5 * lam * t @ t, grad

        def hess(t):
            u = y * (xt @ t)
            return (xt.T * (_sigmoid(u) * _sigmoid(-u))) @ xt / m + lam * np.eye(d)

        new = scipy.optimize.minimize(risk, theta, jac=True, hess=hess, method="trust-exact",
                                      options={"gtol": 1e-13}).x
        # trust-exact stops once f stops changing in floating point (‖∇f‖ ~ 1e-9); two exact
        # Newton steps take the gradient of this strongly convex risk to machine precision
        for _ in range(2):
            new = new - np.linalg.solve(hess(new), risk(new)[1])
        done = np.linalg.norm(new - theta) < 1e-10
        theta = new
        if done:
            return theta
    return None


@task(family="performative", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PerformativeProblem:
    """The instance; ctx is unused (the data come from config.world_seed, not the run seed)."""
    x, y = _data(config)
    m, d, lam = config.m, config.dim, config.lam
    mask = np.zeros(d)
    mask[: config.strategic_dims] = 1.0
    shift = config.beta * mask          # (d,) S as a vector: x̃ = x − shift ⊙ θ
    y_list = y.tolist()

    def all_gradients(theta: np.ndarray) -> np.ndarray:
        xt = x - shift * theta                                          # (m, d)
        return (-y * _sigmoid(-y * (xt @ theta)))[:, None] * xt + lam * theta

    def mean_gradient(theta: np.ndarray, c: float | None) -> np.ndarray:
        g = all_gradients(theta)
        if c is not None:
            norms = np.sqrt(np.einsum("ij,ij->i", g, g))
            g = g * np.minimum(1.0, c / np.maximum(norms, 1e-300))[:, None]
        return g.mean(axis=0)

    def sample_gradient(theta: np.ndarray, i: int) -> np.ndarray:
        z = x[i] - shift * theta                    # i-th point moved by the deployed θ
        u = y_list[i] * float(z @ theta)
        s = 1.0 / (1.0 + math.exp(u)) if u < 700 else 0.0   # σ(−u)
        return (-y_list[i] * s) * z + lam * theta

    theta_ps = _repeated_risk_minimisation(x, y, shift, lam)
    if theta_ps is None:
        raise ValueError(f"beta={config.beta}, lam={lam}: repeated risk minimisation does not converge, "
                         "so no performative-stable point is computed; use a smaller beta or a larger lam")
    if np.linalg.norm(theta_ps) > config.radius:
        raise ValueError(f"‖θ_PS‖ = {np.linalg.norm(theta_ps):.3g} exceeds radius={config.radius}; "
                         "increase radius")

    xt = x - shift * theta_ps
    u = y * (xt @ theta_ps)
    w = _sigmoid(u) * _sigmoid(-u)
    hessian = (xt.T * w) @ xt / m + lam * np.eye(d)
    jacobian = hessian - np.outer(xt.T @ w / m, shift * theta_ps) + np.mean(y * _sigmoid(-u)) * np.diag(shift)
    mu = float(np.linalg.eigvalsh(hessian)[0])
    shifted_modulus = float(np.linalg.eigvalsh(0.5 * (jacobian + jacobian.T))[0])
    lipschitz = float(np.max(_sigmoid(-u) + w * np.linalg.norm(xt, axis=1) * np.linalg.norm(theta_ps)))

    @functools.lru_cache(maxsize=16)
    def _fixed_point(c: float) -> tuple[float, ...]:
        sol = scipy.optimize.root(lambda t: mean_gradient(t, c), theta_ps, method="hybr", options={"xtol": 1e-13})
        residual = float(np.linalg.norm(mean_gradient(sol.x, c)))
        if residual > 1e-9:
            raise RuntimeError(f"clipped mean field root for c={c} not found (residual {residual:.2e}): {sol.message}")
        return tuple(sol.x.tolist())

    def clipped_fixed_point(c: float) -> np.ndarray:
        if not c > 0:
            raise ValueError(f"clip threshold c must be > 0, got {c}")
        return np.array(_fixed_point(float(c)))

    return PerformativeProblem(
        dim=d,
        num_samples=m,
        theta0=np.zeros(d),
        radius=config.radius,
        mu=mu,
        lipschitz=lipschitz,
        beta=config.beta,
        shifted_modulus=shifted_modulus,
        gradient_bound=float(np.max(np.linalg.norm(x, axis=1))) + (config.beta + lam) * config.radius,
        theta_ps=theta_ps,
        sample_gradient=sample_gradient,
        mean_gradient=mean_gradient,
        clipped_fixed_point=clipped_fixed_point,
    )
