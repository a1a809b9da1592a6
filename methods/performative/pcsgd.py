"""PCSGD: projected clipped SGD with greedy deployment (Li, Yemini & Wai, ICML 2025).

Paper: "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for Stochastic Bias and
Remedies", arXiv 2404.10995, Algorithm PCSGD (poster and project page):

    Z_{t+1} ~ D(θ_t),  ζ_{t+1} ~ N(0, σ²I)
    θ_{t+1} = Proj_X(θ_t − γ_{t+1}·(clip_c(∇ℓ(θ_t; Z_{t+1})) + ζ_{t+1})),  clip_c(g) = min{1, c/‖g‖}·g

With decreasing steps it converges at O(1/t) to the biased limit θ_∞(c), the root of the clipped
mean field E_{Z∼D(θ)} clip_c(∇ℓ(θ; Z)) = 0 (Theorems 1–2); the PerformativeResult declares {"c": c} (its Config
field) so the scorer knows which limit to expect, and the harness checks the declaration against the cell's config.

Fidelity: the update is the paper's (poster: with ζ; the project-page box omits it, i.e. σ = 0).
UNVERIFIED (our hypotheses, docs/papers/clipped-sgd-performative.md): the schedule
γ_{t+1} = step_scale/(μ̃(t + step_offset)) with 2 and 50, c = 1, σ = 0.1. With `epsilon` set,
σ = c·sqrt(T log(1/δ))/(mε) (the poster's DP corollary, stated for ε ≤ T/m²; applied here for any ε).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.performative import _common
from tasks.performative import PerformativeProblem, PerformativeResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"T": 500}


# Clipping off: with c = 10⁶ above every gradient on X (|∇ℓ| ≤ 28 on the paper's instance) clip_c is the identity in
# _common.clip, so the update is unclipped projected SGD (the iterates equal sgd's bit for bit,
# tests/methods/performative/test_switched_off.py); the positive controls clipping-bias-detectable-* run this cell
SWITCHED_OFF = {"c = 10⁶ (clipping never binds)": {"c": 1000000.0}}


@dataclass(frozen=True)
class Config:
    T: int = 100_000           # T, horizon (the paper's x-axis runs to 1e5)
    c: float = 1.0             # c, clipping threshold (UNVERIFIED)
    step_scale: float = 2.0    # a0·μ̃ in γ_{t+1} = a0/(a1 + t), a0 = step_scale/μ̃ (UNVERIFIED)
    step_offset: float = 50.0  # a1 in γ_{t+1} = a0/(a1 + t) (UNVERIFIED)
    sigma: float = 0.1         # σ, std of ζ when epsilon is None (UNVERIFIED)
    epsilon: float | None = None  # ε of (ε, δ)-DP; set → σ = c·sqrt(T log(1/δ))/(mε)
    delta: float = 1e-5        # δ of (ε, δ)-DP

    def __post_init__(self) -> None:
        _common.validate(self)


@method(family="performative", config=Config, skip=_common.skip_unless_contracting, smoke=SMOKE)
def solve(problem: PerformativeProblem, config: Config, ctx: RunContext) -> PerformativeResult:
    sigma = _common.noise_std(config, config.c, problem)  # sensitivity of a clipped gradient: c
    steps = _common.decreasing_steps(config.T, config.step_scale, config.step_offset, problem.shifted_modulus)
    return _common.projected_sgd(problem, steps, config.c, sigma, ctx)
