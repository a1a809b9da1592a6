"""Projected SGD without clipping: the "SGD" baseline of Li, Yemini & Wai (ICML 2025).

Paper: "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for Stochastic Bias and
Remedies", arXiv 2404.10995, the SGD baseline: θ_{t+1} = Proj_X(θ_t − γ_{t+1}(∇ℓ(θ_t; Z_{t+1}) + ζ_{t+1})),
Z_{t+1} ~ D(θ_t) (greedy deployment), ζ ~ N(0, σ²I). Without clipping its fixed point is θ_PS
(unbiased), but a DP guarantee needs noise calibrated to the unclipped sensitivity G.

Fidelity: reconstructed. Deviations / UNVERIFIED: how the paper set SGD's noise is not in the
accessible material; with `epsilon` set, σ = G·sqrt(T log(1/δ))/(mε) (the poster's DP corollary with
sensitivity G = problem.gradient_bound), which reproduces the paper's non-converging SGD curve.
The step schedule γ_{t+1} = step_scale/(μ̃(t + step_offset)) is our hypothesis
(docs/papers/clipped-sgd-performative.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.performative import _common
from tasks.performative import PerformativeProblem, PerformativeResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"T": 500}


SWITCHED_OFF = ("a baseline of the paper (projected SGD without clipping): there is no mechanism of the paper to "
                "switch off")


@dataclass(frozen=True)
class Config:
    T: int = 100_000           # T, horizon (the paper's x-axis runs to 1e5)
    step_scale: float = 2.0    # a0·μ̃ in γ_{t+1} = a0/(a1 + t), a0 = step_scale/μ̃ (UNVERIFIED)
    step_offset: float = 50.0  # a1 in γ_{t+1} = a0/(a1 + t) (UNVERIFIED)
    sigma: float = 0.1         # σ, std of ζ when epsilon is None (UNVERIFIED)
    epsilon: float | None = None  # ε of (ε, δ)-DP; set → σ = G·sqrt(T log(1/δ))/(mε)
    delta: float = 1e-5        # δ of (ε, δ)-DP

    def __post_init__(self) -> None:
        _common.validate(self)


@method(family="performative", config=Config, skip=_common.skip_unless_contracting, smoke=SMOKE)
def solve(problem: PerformativeProblem, config: Config, ctx: RunContext) -> PerformativeResult:
    sigma = _common.noise_std(config, problem.gradient_bound, problem)  # sensitivity G
    steps = _common.decreasing_steps(config.T, config.step_scale, config.step_offset, problem.shifted_modulus)
    return _common.projected_sgd(problem, steps, math.inf, sigma, ctx)
