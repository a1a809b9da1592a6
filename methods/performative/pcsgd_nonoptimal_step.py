"""PCSGD with the shift-unaware constant step ("Non-Opt") of Li, Yemini & Wai (ICML 2025).

Paper: "Clipped SGD Algorithms for Performative Prediction: Tight Bounds for Stochastic Bias and
Remedies", arXiv 2404.10995, remedy 1: the "Non-Opt" curves of the paper's ε and β sweeps use
the same constant-step rule as `pcsgd_optimal_step` with the strong-convexity modulus μ in place
of μ̃ = μ − Lβ, i.e. γ = log(μ²TD²/c1)/(μT), clamped to (0, 1/μ]. When β > 0 this step is too
small for the true contraction rate μ̃ and the transient from θ_0 is not forgotten by T.

Fidelity: reconstructed; the same UNVERIFIED Δ(·) derivation as `pcsgd_optimal_step`
(D = diameter of X, c1 = c² + dσ², log floored at 1). DP: σ = c·sqrt(T log(1/δ))/(mε).
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import method
from methods.performative import _common
from tasks.performative import PerformativeProblem, PerformativeResult

# a short run, for the conformance suite (tests/test_conformance.py)
SMOKE = {"T": 500}


SWITCHED_OFF = ("a baseline of the paper (remedy 1's Non-Opt curve: the constant step built on μ, which the "
                "shift-aware step improves on): there is no mechanism of the paper to switch off")


# the same settings as the "Opt" rule: only the modulus the step is built on differs
Config = _common.ConstantStepConfig


def skip(problem: PerformativeProblem, config: Config) -> str | None:
    if problem.mu <= 0:
        return f"needs strong convexity μ > 0, the instance has μ = {problem.mu:.4g}"
    return None


@method(family="performative", config=Config, skip=skip, smoke=SMOKE)
def solve(problem: PerformativeProblem, config: Config, ctx: RunContext) -> PerformativeResult:
    return _common.constant_step_pcsgd(problem, config, problem.mu, ctx)
