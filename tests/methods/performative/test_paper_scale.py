"""Slow tier: the performative claims at the paper's horizon with more seeds (pytest -m slow)."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.performative import dicesgd, pcsgd
from tasks.performative import performative as quadratic
from tasks.performative import performative_strategic as strategic
from tasks.performative import score, trace

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("beta", [0.01, 0.03, 0.05])
def test_dicesgd_rate_with_100_seeds(beta):
    """O(1/t): slope of the 100-seed mean of ‖θ_t − θ_PS‖² over t ∈ [1e3, 1e5] is −1 ± 0.15."""
    problem = quadratic.build(quadratic.Config(beta=beta), RunContext(seed=0).for_task())
    curves = [[g for _, g in trace(problem, dicesgd.solve(problem, dicesgd.Config(), RunContext(seed=s)))["gap"]]
              for s in range(100)]
    steps = dicesgd.solve(problem, dicesgd.Config(T=100_000), RunContext(seed=0)).steps
    window = (steps >= 1e3) & (steps <= 1e5)
    slope = np.polyfit(np.log(steps[window]), np.log(np.mean(curves, axis=0)[window]), 1)[0]
    assert abs(slope + 1) < 0.15, slope


def test_strategic_task_at_the_paper_horizon():
    """d = 10, T = 1e5: PCSGD lands at θ_∞(c) and DiceSGD at θ_PS, over 3 seeds each."""
    problem = strategic.build(strategic.Config(), RunContext(seed=0).for_task())
    biased = [score(problem, pcsgd.solve(problem, pcsgd.Config(), RunContext(seed=s))) for s in range(3)]
    unbiased = [score(problem, dicesgd.solve(problem, dicesgd.Config(), RunContext(seed=s))) for s in range(3)]
    predicted = biased[0]["predicted_gap"]  # ‖θ_∞ − θ_PS‖² ≈ 0.077
    assert all(s["limit_gap"] < 0.01 * predicted for s in biased)
    assert all(s["final_gap"] < 0.01 * predicted for s in unbiased)
