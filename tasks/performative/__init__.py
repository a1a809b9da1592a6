"""Performative prediction: the data distribution D(θ) reacts to the deployed model θ.

Contract of the family (Li, Yemini & Wai, ICML 2025, arXiv 2404.10995):
a task builds a `PerformativeProblem` with the sampling oracle and the ground truth (θ_PS, and the clipped
mean-field fixed point θ_∞(c) that a clipped method without error feedback converges to);
a method draws its gradients through `problem.sampler()` (one `Sampler` per run: every draw is counted by task code)
and records its iterates there, on a grid of its choice; each record is stamped with the number of gradients drawn
so far. It returns a `PerformativeResult` with its last iterate, a copy of the sampler's record, and `declared`: the
clip threshold c whose fixed point θ_∞(c) its iterates settle at, as {"c": value} under its Config field `c` (nothing
for an unbiased method). The harness checks that declaration against the cell's config (bench.observe.check_declared).
`score` is the only judge: every method is measured against the same θ_PS, and the curve `gap` reads the sampler's
record (its x-axis is the samples the method drew, observed; a PerformativeResult whose copy differs is a Misreport).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from bench.observe import Meter, Misreport
from bench.spec import Metric


@dataclass(frozen=True, eq=False)
class PerformativeProblem:
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
    """∇ℓ(θ; z_i(θ)): gradient at θ on the i-th point of D(θ) (the point shifted by θ). Methods draw it through
    `sampler()`, which counts the draws."""
    mean_gradient: Callable[[np.ndarray, float | None], np.ndarray]
    """E_{Z∼D(θ)} clip_c(∇ℓ(θ; Z)) over the m points; c=None means no clipping."""
    clipped_fixed_point: Callable[[float], np.ndarray]
    """θ_∞(c): root of the clipped mean field, where PCSGD settles (exact ground truth)."""
    scalar_gradient: Callable[[float, int], float] | None = None
    """Optional fast path when dim == 1: sample_gradient on Python floats (θ a float, returns a
    float). Per-step numpy calls on shape-(1,) arrays cost ~1 µs each, which dominates a 1e5-step
    scalar run; None means methods use sample_gradient. Drawn through `sampler()` as well."""
    meter: Meter = field(init=False, repr=False)  # keeps the samplers handed out, for trace to read their records

    def __post_init__(self) -> None:
        object.__setattr__(self, "meter", Meter())

    def sampler(self) -> "Sampler":
        """A fresh counting sampling oracle (and recorder of iterates) for one run."""
        return self.meter.issue(Sampler(self))

    def project(self, theta: np.ndarray) -> np.ndarray:
        norm = float(np.sqrt(theta @ theta))
        return theta if norm <= self.radius else theta * (self.radius / norm)


class Sampler:
    """The sampling oracle of one run, task code: ∇ℓ(θ; z_i(θ)) on the i-th point of D(θ), every draw counted
    (`samples`), and the record of the iterates the method deploys, each stamped with the draws made before it.

    `gradient` takes and returns (d,) arrays; `scalar_gradient` (dim 1 with the problem's fast path only) floats.
    The curve `gap` puts each recorded iterate at its stamp: the number of samples the method drew from D(θ) to
    reach it, counted here, not an iteration number the method states.
    """

    def __init__(self, problem: PerformativeProblem) -> None:
        self._vector, self._scalar = problem.sample_gradient, problem.scalar_gradient
        self.samples = 0
        self.steps: list[int] = []             # the stamps: samples drawn when each iterate was recorded
        self.iterates: list[np.ndarray] = []   # (d,) each

    @property
    def has_scalar_path(self) -> bool:
        return self._scalar is not None

    def gradient(self, theta: np.ndarray, i: int) -> np.ndarray:
        self.samples += 1
        return self._vector(theta, i)

    def scalar_gradient(self, theta: float, i: int) -> float:
        self.samples += 1
        return self._scalar(theta, i)

    def record(self, theta: Any) -> None:
        """Keep θ (a float or a (d,) array) at the current count."""
        self.steps.append(self.samples)
        self.iterates.append(np.array(theta, dtype=float).reshape(-1))

    def record_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(K,) stamps and (K, d) iterates, as recorded."""
        return np.array(self.steps, dtype=np.int64), np.stack(self.iterates)


@dataclass(frozen=True, eq=False)
class PerformativeResult:
    theta: np.ndarray             # (d,) last iterate θ_T
    steps: np.ndarray             # (K,) the sampler's stamps: samples drawn when each iterate was recorded (a copy)
    iterates: np.ndarray          # (K, d) the iterates the sampler recorded (a copy)
    declared: Mapping[str, Any] | None = field(default_factory=dict)
    """{"c": c}: the clip threshold (its Config field c) whose biased fixed point θ_∞(c) the iterates settle at;
    empty for an unbiased method. Checked by the harness against the cell's config (bench.observe.check_declared)."""

    @property
    def clip_threshold(self) -> float | None:
        """The declared c, None when the method is unbiased (nothing declared, or c = ∞: clipping never binds)."""
        c = (self.declared or {}).get("c")
        return None if c is None or math.isinf(c) else float(c)


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


def predicted_limit(problem: PerformativeProblem, result: PerformativeResult) -> np.ndarray:
    """θ_∞(c) for the c the result declares (the harness has checked it is the config's), θ_PS when unbiased."""
    if result.clip_threshold is None:
        return problem.theta_ps
    return problem.clipped_fixed_point(result.clip_threshold)


def _sq(v: np.ndarray) -> float:
    return float(np.dot(v, v))


def score(problem: PerformativeProblem, result: PerformativeResult) -> dict[str, float]:
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


def observed_record(problem: PerformativeProblem, result: PerformativeResult) -> tuple[np.ndarray, np.ndarray]:
    """(stamps, iterates) of the sampler this problem handed out whose record the result carries (task code's
    counts); Misreport when no issued sampler recorded those iterates, when the result reports other steps than the
    sampler's stamps, or when, in a solve the harness delimited, samples were drawn on another sampler (draws the
    curve's x-axis would not count)."""
    samplers = [s for s in problem.meter.issued if isinstance(s, Sampler)]
    claimed = np.asarray(result.iterates, dtype=float)
    for sampler in reversed(samplers):
        if sampler.iterates:
            steps, iterates = sampler.record_arrays()
            if iterates.shape == claimed.shape and np.array_equal(iterates, claimed, equal_nan=True):
                break
    else:
        raise Misreport(f"the result's {len(claimed)} iterates are not the record of any of the {len(samplers)} "
                        "sampler(s) this problem handed out: their steps would be the method's word")
    if not np.array_equal(np.asarray(result.steps), steps):
        raise Misreport(f"the result reports its iterates at steps {np.asarray(result.steps)[:5].tolist()}…; the "
                        f"sampler stamped them at {steps[:5].tolist()}… samples drawn")
    if problem.meter.reading().delimited:
        hidden = sum(s.samples for s in samplers if s is not sampler)
        if hidden:
            raise Misreport(f"the solve drew {hidden} samples on other samplers than the one whose record the result "
                            "carries")
    return steps, iterates


def trace(problem: PerformativeProblem, result: PerformativeResult) -> dict[str, list[tuple[int, float]]]:
    """Curve `gap`: ‖θ_t − θ_PS‖² of the recorded iterates against the samples drawn when each was recorded (the
    sampler's record, `observed_record`)."""
    steps, iterates = observed_record(problem, result)
    gaps = np.sum((iterates - problem.theta_ps) ** 2, axis=1)
    return {"gap": [(int(t), float(g)) for t, g in zip(steps, gaps)]}
