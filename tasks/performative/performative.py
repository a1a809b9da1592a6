"""Scalar quadratic with Bernoulli data: the documented experiment of Li, Yemini & Wai (ICML 2025).

Paper: "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for Stochastic Bias and
Remedies", arXiv 2404.10995; instance from the authors' ICML-2024 workshop poster and project page
(its one documented experiment):

    ℓ(θ; z) = (θ + a z)² / 2,        ∇ℓ(θ; z) = θ + a z   (derivative in θ, z held fixed)
    D(θ) = uniform over {b Z̃_i − βθ}_{i=1..m},   Z̃_i ~ Bernoulli(p) drawn once
    ∇ℓ(θ; z_i(θ)) = (1 − aβ)θ + a b Z̃_i

Ground truth: μ = 1, L = |a| (Lipschitz in z), μ̃ = μ − Lβ = 1 − |a|β (must be > 0);
θ_PS = −a b p̄ / (1 − aβ) with p̄ = mean(Z̃) (closed form, root of the mean field); the PCSGD limit
θ_∞(c) solves p̄·clip_c((1−aβ)θ + ab) + (1 − p̄)·clip_c((1−aβ)θ) = 0, a monotone field → bisection.

Fidelity: the loss, D(θ) and the two formulas are the paper's (poster). The constants are UNVERIFIED
hypotheses of ours (docs/papers/clipped-sgd-performative.md): a = 10 is inferred from the plateau
ratio of the paper's plot; b, p, m, θ_0 and X = [−20, 20] are not stated anywhere accessible. With
world_seed = 0 the draw `rng.random(m) < p` gives p̄ = 0.193, θ_PS = −2.144 and θ_∞(1) = −0.266
(β = 0.01), the values measured in our report. The data come from `world_seed`, not the run seed, so
every run seed sees the same dataset (as in the paper, where Z̃ is drawn once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.performative import PerformativeProblem

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"m": 50}


@dataclass(frozen=True)
class Config:
    a: float = 10.0        # a, loss scale in ℓ(θ; z) = (θ + a z)²/2; L = |a| (inferred, UNVERIFIED)
    b: float = 1.0         # b, data scale: z_i(θ) = b Z̃_i − βθ (UNVERIFIED)
    p: float = 0.2         # p, Z̃_i ~ Bernoulli(p) (UNVERIFIED)
    m: int = 1000          # m, number of data points (UNVERIFIED)
    beta: float = 0.01     # β, sensitivity of D(θ); the paper plots β ∈ {0.01, 0.05}
    theta0: float = 5.0    # θ_0, initial model (UNVERIFIED)
    radius: float = 20.0   # X = [−radius, radius], the projection interval (UNVERIFIED)
    world_seed: int = 0    # seed of the one-time draw of Z̃ (fixed across run seeds)

    def __post_init__(self) -> None:
        if self.m < 1:
            raise ValueError(f"m must be >= 1, got {self.m}")
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"p must lie in [0, 1], got {self.p}")
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if not self.radius > 0 or abs(self.theta0) > self.radius:
            raise ValueError(f"need radius > 0 and |theta0| <= radius, got theta0={self.theta0}, "
                             f"radius={self.radius}")


def _clip(x: float, c: float) -> float:
    """clip_c for a scalar: the value limited to [−c, c]."""
    return -c if x < -c else (c if x > c else x)


def _bisect(field, lo: float, hi: float, tol: float = 1e-14) -> float:
    """Root of a nondecreasing `field` with field(lo) ≤ 0 ≤ field(hi), to tol·max(1, |θ|)."""
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if hi - lo <= tol * max(1.0, abs(mid)):
            break
        if field(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@task(family="performative", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PerformativeProblem:
    """The instance; ctx is unused (the data come from config.world_seed, not the run seed)."""
    a, b, beta = config.a, config.b, config.beta
    mu, lipschitz = 1.0, abs(a)
    shifted_modulus = mu - lipschitz * beta  # μ̃ = 1 − |a|β
    if shifted_modulus <= 0:
        raise ValueError(
            f"beta={beta} with a={a} gives μ̃ = 1 − |a|β = {shifted_modulus:.4g} <= 0; "
            f"β must be < 1/|a| = {1 / abs(a):.4g} for a unique performative-stable point"
        )
    z = np.random.default_rng(config.world_seed).random(config.m) < config.p  # (m,) Z̃_i
    p_bar = float(z.mean())
    slope = 1.0 - a * beta                       # ∇ℓ(θ; z_i(θ)) = slope·θ + offset_i
    offsets = a * b * z.astype(float)            # (m,) a b Z̃_i
    offset_list = offsets.tolist()
    theta_ps = -a * b * p_bar / slope            # root of slope·θ + a b p̄
    if abs(theta_ps) > config.radius:
        raise ValueError(f"θ_PS = {theta_ps:.4g} lies outside X = [−{config.radius}, {config.radius}]; "
                         "increase radius")

    def scalar_gradient(theta: float, i: int) -> float:
        return slope * theta + offset_list[i]

    def sample_gradient(theta: np.ndarray, i: int) -> np.ndarray:
        return slope * theta + offsets[i]  # (1,)

    def field(theta: float, c: float | None) -> float:
        """E_{Z∼D(θ)} clip_c(∇ℓ(θ; Z)): Z̃ takes two values, so the mean has two terms."""
        g1, g0 = slope * theta + a * b, slope * theta
        if c is None:
            return p_bar * g1 + (1.0 - p_bar) * g0
        return p_bar * _clip(g1, c) + (1.0 - p_bar) * _clip(g0, c)

    def mean_gradient(theta: np.ndarray, c: float | None) -> np.ndarray:
        return np.array([field(float(theta[0]), c)])

    def clipped_fixed_point(c: float) -> np.ndarray:
        if not c > 0:
            raise ValueError(f"clip threshold c must be > 0, got {c}")
        # each term vanishes at its own root (0 and −ab/slope); the mean field is nondecreasing,
        # so its root lies between them.
        roots = (0.0, -a * b / slope)
        return np.array([_bisect(lambda t: field(t, c), min(roots), max(roots))])

    return PerformativeProblem(
        dim=1,
        num_samples=config.m,
        theta0=np.array([config.theta0]),
        radius=config.radius,
        mu=mu,
        lipschitz=lipschitz,
        beta=beta,
        shifted_modulus=shifted_modulus,
        # G = sup_{|θ| ≤ R, i} |slope·θ + a b Z̃_i| = |slope|·R + max_i |a b Z̃_i|
        gradient_bound=abs(slope) * config.radius + float(np.max(np.abs(offsets))),
        theta_ps=np.array([theta_ps]),
        sample_gradient=sample_gradient,
        mean_gradient=mean_gradient,
        clipped_fixed_point=clipped_fixed_point,
        scalar_gradient=scalar_gradient,
    )
