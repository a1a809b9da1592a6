"""Performative prediction: the data distribution D(θ) reacts to the deployed model θ.

Contract of the family (Li, Yemini & Wai, ICML 2025, arXiv 2404.10995):
a task builds a `Problem` with the sampling oracle and the ground truth (θ_PS, and the clipped
mean-field fixed point θ_∞(c) that a clipped method without error feedback converges to);
a method returns a `Result` with its last iterate and iterates recorded on a log-spaced grid.
`score` is the only judge: every method is measured against the same θ_PS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bench.spec import Metric


@dataclass(frozen=True, eq=False)
class Problem:
    dim: int                      # d, dimension of θ
    num_samples: int              # m, points in the finite dataset behind D(θ)
    theta0: np.ndarray            # (d,) initial model θ_0
    radius: float                 # X = {θ : ‖θ‖₂ ≤ radius}, the projection set
    mu: float                     # μ, strong convexity of f(·, θ₂)
    lipschitz: float              # L, Lipschitz constant of ∇ℓ(θ; ·) in z
    beta: float                   # β, sensitivity of D(θ) (W1 shift per unit of θ)
    shifted_modulus: float        # μ̃ = μ − Lβ, the modulus the performative dynamics contract with
    gradient_bound: float         # G, sup of ‖∇ℓ(θ; z)‖ over X and the data (DP sensitivity of SGD)
    theta_ps: np.ndarray          # (d,) performative-stable point: E_{Z∼D(θ_PS)} ∇ℓ(θ_PS; Z) = 0
    sample_gradient: Callable[[np.ndarray, int], np.ndarray]
    """∇ℓ(θ; z_i(θ)): gradient at θ on the i-th point of D(θ) (the point shifted by θ)."""
    mean_gradient: Callable[[np.ndarray, float | None], np.ndarray]
    """E_{Z∼D(θ)} clip_c(∇ℓ(θ; Z)) over the m points; c=None means no clipping."""
    clipped_fixed_point: Callable[[float], np.ndarray]
    """θ_∞(c): root of the clipped mean field, where PCSGD settles (exact ground truth)."""
    scalar_gradient: Callable[[float, int], float] | None = None
    """Optional fast path when dim == 1: sample_gradient on Python floats (θ a float, returns a
    float). Per-step numpy calls on shape-(1,) arrays cost ~1 µs each, which dominates a 1e5-step
    scalar run; None means methods use sample_gradient."""

    def project(self, theta: np.ndarray) -> np.ndarray:
        norm = float(np.sqrt(theta @ theta))
        return theta if norm <= self.radius else theta * (self.radius / norm)


@dataclass(frozen=True, eq=False)
class Result:
    theta: np.ndarray             # (d,) last iterate θ_T
    steps: np.ndarray             # (K,) iteration numbers t at which iterates were recorded
    iterates: np.ndarray          # (K, d) θ_t at those steps
    clip_threshold: float | None  # c of the biased mean field the method settles at; None: unbiased


METRICS = {
    "final_gap": Metric(False, "", True, "‖θ_T − θ_PS‖², squared distance to the performative-stable point",
                        bounds=(0.0, None)),
    "predicted_gap": Metric(False, "", False, "‖θ_∞ − θ_PS‖², the bias theory predicts for this method",
                            bounds=(0.0, None)),
    "limit_gap": Metric(False, "", False, "‖θ_T − θ_∞‖², distance to the predicted limit", bounds=(0.0, None)),
    "limit_rel_error": Metric(False, "", False, "|final_gap − predicted_gap| / predicted_gap (biased methods)",
                              bounds=(0.0, None)),
    "stationarity": Metric(False, "", False, "‖E_{D(θ_T)} ∇ℓ(θ_T; Z)‖², performative stationarity at θ_T",
                           bounds=(0.0, None)),
    "shifted_modulus": Metric(True, "", False, "μ̃ = μ − Lβ of the instance (for bias-amplification rates)"),
}


def predicted_limit(problem: Problem, result: Result) -> np.ndarray:
    if result.clip_threshold is None:
        return problem.theta_ps
    return problem.clipped_fixed_point(result.clip_threshold)


def _sq(v: np.ndarray) -> float:
    return float(np.dot(v, v))


def score(problem: Problem, result: Result) -> dict[str, float]:
    theta_inf = predicted_limit(problem, result)
    final_gap = _sq(result.theta - problem.theta_ps)
    predicted_gap = _sq(theta_inf - problem.theta_ps)
    scores = {
        "final_gap": final_gap,
        "predicted_gap": predicted_gap,
        "limit_gap": _sq(result.theta - theta_inf),
        "stationarity": _sq(problem.mean_gradient(result.theta, None)),
        "shifted_modulus": float(problem.shifted_modulus),
    }
    if predicted_gap > 0:
        scores["limit_rel_error"] = abs(final_gap - predicted_gap) / predicted_gap
    return scores


def trace(problem: Problem, result: Result) -> dict[str, list[tuple[int, float]]]:
    """Curve `gap`: ‖θ_t − θ_PS‖² at the recorded steps."""
    gaps = np.sum((result.iterates - problem.theta_ps) ** 2, axis=1)
    return {"gap": [(int(t), float(g)) for t, g in zip(result.steps, gaps)]}
