"""leaderboard/claims/statistics.py against textbook answers: Student's t interval, Holm's adjustment, power tables."""

import math

import numpy as np
import pytest

from leaderboard.claims.statistics import (
    Condition,
    Decision,
    Estimate,
    estimate,
    holm,
    holm_level,
    seeds_needed,
    slope_estimate,
)


def test_the_t_interval_is_the_textbook_one():
    # 1..5: mean 3, sd √2.5, se √0.5, t(0.975, 4) = 2.7764451
    e = estimate([1, 2, 3, 4, 5])
    lo, hi = e.interval()
    assert (e.value, e.n, e.df) == (3.0, 5, 4.0)
    assert e.sd == pytest.approx(math.sqrt(2.5))
    assert (lo, hi) == pytest.approx((3 - 2.7764451 * math.sqrt(0.5), 3 + 2.7764451 * math.sqrt(0.5)))


def test_the_interval_is_on_one_side_exactly_when_twice_the_one_sided_p_is_below_five_percent():
    rng = np.random.default_rng(0)
    for _ in range(200):
        values = rng.normal(rng.normal(0, 1), rng.uniform(0.1, 2), size=rng.integers(2, 12))
        e, m = estimate(values), float(rng.normal(0, 0.5))
        lo, hi = e.interval()
        assert (lo > m) == (Condition("", e, m, +1).p_holds() < 0.05)
        assert (hi < m) == (Condition("", e, m, +1).p_fails() < 0.05)


def test_holm_adjusts_step_down_and_monotone():
    # sorted 0.005, 0.01, 0.03, 0.04: ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 -> made monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = holm([0.2, float("nan"), 0.01])
    assert adjusted[0] == pytest.approx(0.2) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.02)
    assert holm_level([0.01, 0.04, 0.03, 0.005], 3) == pytest.approx(0.05 / 4)
    assert holm_level([0.01, 0.04, 0.03, 0.005], 1) == pytest.approx(0.05)


@pytest.mark.parametrize("d, n", [(1.0, 10), (0.5, 34), (0.8, 15), (2.0, 5)])
def test_seeds_needed_match_the_power_tables(d, n):
    """One-sample two-sided t-test, α = 0.05, power 0.8 (Cohen 1988's table; G*Power gives the same n)."""
    assert seeds_needed(Condition("", Estimate(d, 5, 1.0, "t", 1 / math.sqrt(5), 4), 0.0, +1)) == n


def test_no_seeds_number_without_an_effect_or_a_spread():
    assert seeds_needed(Condition("", Estimate(1e-5, 5, 1.0, "t", 0.4, 4), 0.0, +1)) is None
    assert seeds_needed(Condition("", estimate([3.0], deterministic=True), 0.0, +1)) is None


def test_one_seed_has_no_interval_unless_the_quantity_is_exact():
    e = estimate([0.7])
    assert all(math.isnan(x) for x in e.interval()) and math.isnan(Condition("", e, 0, 1).p_holds())
    exact = estimate([0.7], deterministic=True)
    assert exact.interval() == (0.7, 0.7) and Condition("", exact, 0.5, 1).p_holds() == 0.0


def test_the_bootstrap_interval_brackets_the_mean_and_is_reproducible():
    values = [0.1, 0.4, 0.35, 0.8, 0.2, 0.55, 0.3, 0.45]
    a, b = estimate(values, "bootstrap"), estimate(values, "bootstrap")
    assert a.interval() == b.interval()
    lo, hi = a.interval()
    t_lo, t_hi = estimate(values).interval()
    assert lo < np.mean(values) < hi and abs(lo - t_lo) < 0.06 and abs(hi - t_hi) < 0.06
    assert Condition("", a, 0.0, +1).p_holds() < 0.01


def test_an_ols_slope_recovers_a_known_line_with_its_standard_error():
    x = np.arange(10.0)
    y = 2.0 * x + np.array([0.1, -0.1] * 5)
    e = slope_estimate(x, y)
    assert e.value == pytest.approx(2.0, abs=0.02) and e.df == 8
    assert Condition("", e, 1.9, +1).p_holds() < 0.001


def test_a_test_holds_when_every_condition_does_and_fails_when_one_surely_fails():
    sure = Condition("a", estimate([1.0, 1.1, 0.9, 1.05]), 0.0, +1)
    unsure = Condition("b", estimate([0.1, -0.2, 0.3, -0.1]), 0.0, +1)
    wrong = Condition("c", estimate([-1.0, -1.1, -0.9, -1.05]), 0.0, +1)
    assert Decision((sure,)).p_holds < 0.05 and Decision((sure, unsure)).p_holds > 0.05
    assert Decision((sure, wrong)).direction == "fails" and Decision((sure, wrong)).p_fails < 0.05
    assert Decision((sure, unsure)).deciding() is unsure and Decision((sure, wrong)).deciding() is wrong
