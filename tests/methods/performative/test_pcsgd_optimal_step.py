"""PCSGD with the μ̃-aware constant step ("Opt", the paper's remedy 1): the step rule and its advantage."""

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.context import RunContext
from bench.registry import Registry
from methods.performative import _common, pcsgd_nonoptimal_step, pcsgd_optimal_step
from tasks.performative import performative as quadratic
from tasks.performative import score


def make(**overrides):
    return quadratic.build(quadratic.Config(**overrides), RunContext(seed=0).for_task())


def test_step_rule_against_a_hand_computation():
    # μ̃ = 0.9, T = 1e5, D = 40, c1 = 1 + 0.1² = 1.01:
    # log(0.81 · 1e5 · 1600 / 1.01) = log(1.28317e8) = 18.6700 → γ* = 18.6700 / 9e4 = 2.07445e-4
    assert _common.optimal_constant_step(0.9, 100_000, 40.0, 1.01) == pytest.approx(2.074446e-4, rel=1e-6)
    # the same γ* minimises the constant-step Theorem-1 bound e^{−μ̃γT}D² + (c1/μ̃)γ
    bound = lambda g: math.exp(-0.9 * g * 1e5) * 1600 + (1.01 / 0.9) * g  # noqa: E731
    grid = np.linspace(1e-4, 4e-4, 3001)
    assert grid[np.argmin([bound(g) for g in grid])] == pytest.approx(2.074446e-4, abs=2e-7)
    # no interior minimum (μ̃²TD² ≤ e·c1): log floored at 1; and γ never exceeds 1/μ̃
    assert _common.optimal_constant_step(0.01, 10, 1.0, 1.0) == pytest.approx(1 / (0.01 * 10))
    assert _common.optimal_constant_step(1.0, 1, 40.0, 1.0) == 1.0


def test_opt_beats_non_opt_when_the_shift_eats_most_of_the_modulus():
    # a = 1, b = 2, β = 0.9: μ = 1 but μ̃ = 0.1. Non-Opt's γ = 1.9e-4 (sized for μ) contracts the
    # transient only by exp(−κγT) ≈ 0.22 (κ = (1 − p̄)(1 − aβ) = 0.08, the slope of the clipped
    # field on the way from θ_0 = 5 to θ_∞ = −2.39), so θ_T stops 1.6 short of θ_∞; Opt's
    # γ* = 1.4e-3 forgets θ_0 (e^{−11}). With a = 10 (μ̃/μ ≥ 0.5), or a = 1, b = 10, β = 0.5, both
    # steps forget θ_0 by T = 1e5 and the two rules give the same gap within noise.
    problem = make(a=1.0, b=2.0, beta=0.9)
    for seed in range(3):
        opt = score(problem, pcsgd_optimal_step.solve(problem, pcsgd_optimal_step.Config(), RunContext(seed)))
        non = score(problem, pcsgd_nonoptimal_step.solve(problem, pcsgd_nonoptimal_step.Config(), RunContext(seed)))
        assert opt["final_gap"] < 0.5 * non["final_gap"]  # measured 2.1–2.5 vs 9.5
        assert opt["limit_rel_error"] < 0.2                 # Opt reaches the clipped limit θ_∞


def test_uses_the_clipping_threshold_and_reports_it():
    problem = make()
    result = pcsgd_optimal_step.solve(problem, pcsgd_optimal_step.Config(T=20_000, c=2.0), RunContext(seed=0))
    assert result.clip_threshold == 2.0
    assert abs(result.theta[0] - problem.clipped_fixed_point(2.0)[0]) < 0.05


def test_skips_instances_without_a_contracting_shift():
    problem = make()
    spec = Registry.discover(plugins=False).method("pcsgd_optimal_step")
    assert spec.solve is pcsgd_optimal_step.solve
    assert spec.skip(problem, pcsgd_optimal_step.Config()) is None
    reason = spec.skip(replace(problem, shifted_modulus=-0.2), pcsgd_optimal_step.Config())
    assert reason is not None and "μ̃" in reason
