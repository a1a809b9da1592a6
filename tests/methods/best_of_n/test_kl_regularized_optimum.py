"""KL-regularised optimum: closed forms vs quadrature, the §7 values, and optimality on finite references."""

import math

import numpy as np
import pytest

from methods.best_of_n import _common, bon_exact
from methods.best_of_n import kl_regularized_optimum as klrl
from tasks.best_of_n import bon_kl, bon_win_rate, kl_divergence, kl_formula, mid_quantiles, win_rate_of

from ._util import continuous, problem, random_references, run

# win rate at equal KL = log n − (n−1)/n, continuous model: the paper's §7 trade-off, from its closed forms
TABLE = {2: 0.6759, 4: 0.8040, 16: 0.9413, 64: 0.9846, 256: 0.9961}


def quadrature(a):
    """(KL, W) of p ∝ exp(a u) on [0, 1] on a 2e5 grid, weights exp(a(u − 1)) (in log space: no overflow)."""
    u = np.linspace(0.0, 1.0, 200_001)
    w = np.exp(a * (u - 1.0))
    density = w / np.trapezoid(w, u)
    return np.trapezoid(density * np.log(density), u), np.trapezoid(density * u, u)


@pytest.mark.parametrize("a", [1e-5, 1e-3, 0.5, 3.0, 30.0, 300.0])
def test_continuous_closed_form_matches_quadrature(a):
    kl, win = _common.continuous_tilt(a)
    kl_q, win_q = quadrature(a)
    assert kl == pytest.approx(kl_q, abs=2e-7 + 1e-6 * kl_q)
    assert win == pytest.approx(win_q, abs=1e-8)


def test_small_a_series_is_continuous_with_the_closed_form():
    below, above = _common.continuous_tilt(1e-3 * (1 - 1e-9)), _common.continuous_tilt(1e-3 * (1 + 1e-9))
    assert below[0] == pytest.approx(above[0], rel=1e-6) and below[1] == pytest.approx(above[1], abs=1e-12)


@pytest.mark.parametrize("n", sorted(TABLE))
def test_spec_table(n):
    result, scores, _ = run(klrl, continuous(n))
    assert result.kl == pytest.approx(kl_formula(n), abs=1e-12)
    assert result.win_rate == pytest.approx(TABLE[n], abs=1e-4)
    assert result.win_rate >= n / (n + 1)
    if n >= 4:
        assert scores["win_rate_advantage"] <= 0.01


def test_given_beta():
    result, _, _ = run(klrl, continuous(4), beta=0.25)
    assert (result.kl, result.win_rate) == pytest.approx(_common.continuous_tilt(4.0)) and result.strength == 0.25
    prob = problem([0.5, 0.5], 4)
    result, _, _ = run(klrl, prob, beta=0.5)
    w = np.array([0.5 * math.exp(0.25 / 0.5), 0.5 * math.exp(0.75 / 0.5)])
    np.testing.assert_allclose(result.policy, w / w.sum(), rtol=1e-14)


def test_matched_to_best_of_n_and_dominates_it_on_random_references():
    for probs, rewards in random_references(150, seed=11):
        for n in (2, 16, 200):
            prob = problem(probs, n, rewards)
            result, scores, _ = run(klrl, prob)
            assert scores["abs_error_to_exact"] < 1e-9 or result.strength == 0.0
            assert scores["win_rate_advantage"] >= -1e-12


def test_no_policy_beats_the_tilt_at_its_kl():
    """Random policies with KL ≤ the tilt's never have a higher win rate (W − β·KL is maximised)."""
    rng = np.random.default_rng(0)
    prob = problem(rng.dirichlet(np.ones(12)), 8)
    result, _, _ = run(klrl, prob)
    budget, best = kl_divergence(result.policy, prob), win_rate_of(result.policy, prob)
    checked = 0
    for _ in range(3000):
        logits = rng.normal(size=12) * rng.uniform(0.1, 5) + rng.uniform(0, 8) * mid_quantiles(prob)
        candidate = prob.probs * np.exp(logits - logits.max())
        candidate /= candidate.sum()
        if kl_divergence(candidate, prob) <= budget:
            checked += 1
            assert win_rate_of(candidate, prob) <= best + 1e-12
    assert checked > 100
    bon = run(bon_exact, prob)[0]
    assert bon.win_rate <= best + 1e-12


def test_point_mass_when_best_of_n_is_one():
    # n = 10^4 on two outcomes: π_n is the top outcome to machine precision, KL = log 2 = the maximum
    prob = problem([0.5, 0.5], 10_000)
    result, scores, _ = run(klrl, prob)
    np.testing.assert_array_equal(result.policy, [0.0, 1.0])
    assert result.strength == 0.0 and scores["win_rate"] == pytest.approx(0.75)
    assert bon_win_rate(prob) == pytest.approx(0.75) and bon_kl(prob) == pytest.approx(math.log(2))


def test_best_of_one_is_the_reference():
    prob = problem([0.2, 0.3, 0.5], 1)
    result, _, _ = run(klrl, prob)
    np.testing.assert_allclose(result.policy, prob.probs)
    assert result.strength is None and result.win_rate == pytest.approx(0.5)


def test_config_validation():
    with pytest.raises(ValueError):
        klrl.Config(beta=0.0)
