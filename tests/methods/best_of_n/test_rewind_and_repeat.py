"""Rewind-and-repeat: continuous closed forms, the finite-reference rule, and best-of-n vs it at equal KL."""

import math

import numpy as np
import pytest

from methods.best_of_n import bon_exact
from methods.best_of_n import rewind_and_repeat as rr
from tasks.best_of_n import kl_divergence, kl_formula

from ._util import continuous, problem, run

# win rate at equal KL = log n − (n−1)/n, continuous model: the paper's §7 trade-off, from its closed forms
TABLE = {2: 0.5878, 4: 0.7354, 16: 0.9202, 64: 0.9791, 256: 0.9947}


@pytest.mark.parametrize("n", sorted(TABLE))
def test_spec_table_and_below_best_of_n(n):
    result, scores, _ = run(rr, continuous(n))
    assert result.kl == pytest.approx(kl_formula(n), abs=1e-12)
    assert result.win_rate == pytest.approx(TABLE[n], abs=1e-4)
    assert result.strength == pytest.approx(math.exp(-kl_formula(n)))
    assert scores["win_rate_advantage"] < 0


def test_given_p_continuous_and_on_a_fine_uniform_reference():
    for p in (0.9, 0.3, 0.01):
        result, _, _ = run(rr, continuous(4), p=p)
        assert (result.kl, result.win_rate) == pytest.approx((math.log(1 / p), 1 - p / 2))
        fine, _, _ = run(rr, problem(np.ones(100_000), 4), p=p)
        assert fine.kl == pytest.approx(math.log(1 / p), abs=1e-4)
        assert fine.win_rate == pytest.approx(1 - p / 2, abs=1e-4)


def test_finite_rule_cuts_the_boundary_outcome():
    prob = problem([0.5, 0.3, 0.2], 2)
    result, _, _ = run(rr, prob, p=0.4)     # top 0.2 whole, 0.2 of the middle's 0.3
    np.testing.assert_allclose(result.policy, [0.0, 0.5, 0.5], atol=1e-15)
    result, _, _ = run(rr, prob, p=0.1)     # inside the top outcome: the point mass
    np.testing.assert_allclose(result.policy, [0.0, 0.0, 1.0], atol=1e-15)


def test_kl_decreases_in_p_and_is_matched():
    prob = problem(np.random.default_rng(0).dirichlet(np.full(30, 0.3)), 16)
    kls = [kl_divergence(rr.policy_at(prob, p), prob) for p in np.linspace(0.001, 1, 500)]
    assert np.all(np.diff(kls) <= 1e-12)
    _, scores, _ = run(rr, prob)
    assert scores["abs_error_to_exact"] < 1e-9


@pytest.mark.parametrize("L, n", [(2, 2), (10, 4), (10, 16), (100, 64), (1000, 256)])
def test_best_of_n_wins_on_uniform_references(L, n):
    _, scores, _ = run(rr, problem(np.ones(L), n))
    assert scores["win_rate_advantage"] <= 1e-12


def test_best_of_n_can_lose_on_a_spiky_reference():
    """Finding: the §6 ordering is not universal on finite references. With a heavy bottom outcome,
    π = (0.9, 0.05, 0.05) by increasing reward and n = 16, rewind-and-repeat at best-of-n's KL
    (1.4746) wins 0.86519 against best-of-n's 0.86498."""
    prob = problem([0.9, 0.05, 0.05], 16)
    bon, _, _ = run(bon_exact, prob)
    result, scores, _ = run(rr, prob)
    assert result.kl == pytest.approx(bon.kl, abs=1e-12)
    assert bon.win_rate == pytest.approx(0.86498, abs=1e-5)
    assert result.win_rate == pytest.approx(0.86519, abs=1e-5)
    assert scores["win_rate_advantage"] > 1e-4


def test_config_validation():
    for p in (0.0, 1.5):
        with pytest.raises(ValueError):
            rr.Config(p=p)
