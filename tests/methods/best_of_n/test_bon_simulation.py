"""Best-of-n by literal simulation agrees with the closed-form PMF (ties broken by the index)."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from methods.best_of_n import _common, bon_simulation
from tasks.best_of_n import bon_pmf_ranked, kl_formula, ranked

from ._util import continuous, problem, run


def test_simulated_outputs_follow_the_pmf_with_ties():
    prob = problem([0.3, 0.1, 0.25, 0.2, 0.15], 3, rewards=[1, 0, 1, 2, 1])   # three-way tie at reward 1
    p, _, cdf = ranked(prob)
    rng = RunContext(seed=0).rng
    cumulative = np.cumsum(p)
    best = bon_simulation._best_of_n(
        lambda shape: _common.sample_ranks(cumulative, int(np.prod(shape)), rng).reshape(shape), 3, 200_000)
    freq = np.bincount(best, minlength=p.size) / best.size
    pmf = bon_pmf_ranked(p, cdf, 3)
    assert np.all(np.abs(freq - pmf) <= 5 * np.sqrt(pmf * (1 - pmf) / best.size) + 1e-12)


@pytest.mark.parametrize("probs, rewards, n", [
    (np.ones(10), None, 16),
    ([0.3, 0.1, 0.25, 0.2, 0.15], [1, 0, 1, 2, 1], 4),
    (np.random.default_rng(3).dirichlet(np.full(40, 0.3)), np.random.default_rng(4).integers(0, 3, 40), 32),
])
def test_monte_carlo_kl_and_win_rate_agree_with_closed_forms(probs, rewards, n):
    result, scores, ctx = run(bon_simulation, problem(probs, n, rewards), seed=2, samples=20_000)
    assert abs(scores["error_to_exact"]) <= 5 * result.kl_std_error + 1e-12
    assert abs(scores["win_rate_advantage"]) <= 5 * 0.5 / math.sqrt(20_000)
    assert ctx.curves["kl_estimate"][-1] == (20_000, pytest.approx(result.kl))


def test_continuous_reference():
    n = 8
    result, scores, _ = run(bon_simulation, continuous(n), samples=20_000)
    assert abs(result.kl - kl_formula(n)) <= 5 * result.kl_std_error
    assert abs(result.win_rate - n / (n + 1)) <= 5 * 0.5 / math.sqrt(20_000)


def test_large_n_is_chunked():
    # 200 trials × n = 50,000 draws = 1e7 draws, in chunks of ≤ 2e6
    result, scores, _ = run(bon_simulation, problem(np.ones(1000), 50_000), samples=200)
    assert scores["win_rate"] > 0.99 and np.isfinite(result.kl)


def test_config_validation():
    with pytest.raises(ValueError):
        bon_simulation.Config(samples=0)
