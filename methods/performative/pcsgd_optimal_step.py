"""PCSGD with the bias-aware optimal constant step ("Opt") of Li, Yemini & Wai (ICML 2025).

Paper: "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for Stochastic Bias and
Remedies", arXiv 2404.10995, remedy 1 (step-size design): PCSGD run over a known horizon T with
the constant step γ* = log(1/Δ(μ̃))/(μ̃T) built on the shift-aware modulus μ̃ = μ − Lβ.

Fidelity: reconstructed. Δ(·) is UNVERIFIED (the poster gives only the shape of γ*). It is
derived here by minimising the Theorem-1 bound with a constant step,
B(γ) = e^{−μ̃γT}·D² + (c1/μ̃)·γ  ⇒  γ* = log(μ̃²·T·D²/c1)/(μ̃T),  i.e. Δ(μ̃) = c1/(μ̃²TD²),
with D = diameter of X (θ_PS is unknown to the algorithm), c1 = c² + dσ² (second moment of the
clipped noisy update; σ is the DP-calibrated one when `epsilon` is set), the log floored at 1
and γ clamped to (0, 1/μ̃] (see `_common.optimal_constant_step`). DP: σ = c·sqrt(T log(1/δ))/(mε).
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import method
from methods.performative import _common
from tasks.performative import PerformativeProblem, PerformativeResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"T": 500}


# Shift-awareness off (remedy 1's mechanism): the constant step built on μ instead of μ̃ = μ − Lβ is the Non-Opt rule,
# the same _common.constant_step_pcsgd with the same Config; nothing else differs (at β = 0, where μ̃ = μ, the two are
# bit for bit equal, tests/methods/performative/test_switched_off.py)
SWITCHED_OFF = {"step built on μ (Non-Opt)": ("pcsgd_nonoptimal_step", {})}


Config = _common.ConstantStepConfig


@method(family="performative", config=Config, skip=_common.skip_unless_contracting, smoke=SMOKE)
def solve(problem: PerformativeProblem, config: Config, ctx: RunContext) -> PerformativeResult:
    return _common.constant_step_pcsgd(problem, config, problem.shifted_modulus, ctx)
