"""Uniform references: the spec's §7 table to 1e-4, saturation at log L, the binary counterexample."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from tasks.best_of_n import bon_kl, bon_pmf, bon_win_rate, expected_estimator, kl_formula, win_rate_bound
from tasks.best_of_n.bon_uniform import Config, build

NS = (2, 16, 64, 256, 1024)
# (true KL, the paper's formula log n − (n−1)/n (§3), its estimator's expectation (§4)) per L, for n in NS: the
# closed forms evaluated exactly
TABLE = {
    10: [(0.1893, 0.1931, 0.1931), (1.7331, 1.8351, 1.7561), (2.2935, 3.1745, 2.2946),
         (2.3026, 4.5491, 2.3026), (2.3026, 5.9324, 2.3026)],
    100: [(0.1931, 0.1931, 0.1931), (1.8340, 1.8351, 1.8349), (3.1576, 3.1745, 3.1667),
          (4.3137, 4.5491, 4.3320), (4.6048, 5.9324, 4.6048)],
    1000: [(0.1931, 0.1931, 0.1931), (1.8351, 1.8351, 1.8351), (3.1743, 3.1745, 3.1745),
           (4.5464, 4.5491, 4.5485), (5.8899, 5.9324, 5.9052)],
}


def make(L, n):
    return build(Config(L=L, n=n), RunContext(seed=0).for_task())


@pytest.mark.parametrize("L", sorted(TABLE))
@pytest.mark.parametrize("column", range(len(NS)))
def test_spec_table_to_1e_4(L, column):
    n = NS[column]
    exact, formula, estimator = TABLE[L][column]
    problem = make(L, n)
    assert bon_kl(problem) == pytest.approx(exact, abs=1e-4)
    assert kl_formula(n) == pytest.approx(formula, abs=1e-4)
    assert expected_estimator(problem) == pytest.approx(estimator, abs=1e-4)


@pytest.mark.parametrize("L", [2, 10, 100, 1000, 10_000])
def test_pmf_is_the_closed_form_for_uniform(L):
    n = 7
    k = np.arange(1, L + 1, dtype=float)
    np.testing.assert_allclose(bon_pmf(make(L, n)), ((k / L) ** n - ((k - 1) / L) ** n), rtol=1e-10, atol=1e-300)


def test_kl_saturates_at_log_L_while_the_formula_grows():
    for L in (10, 100, 1000, 10_000):
        kls = [bon_kl(make(L, n)) for n in np.unique(np.logspace(0, 5, 40).astype(int))]
        assert np.all(np.diff(kls) >= -1e-12)                      # increasing in n
        assert max(kls) <= math.log(L) + 1e-12                     # never above log L
        assert kls[-1] == pytest.approx(math.log(L), abs=1e-3 if L < 10_000 else 0.02)
    assert bon_kl(make(10, 1024)) == pytest.approx(math.log(10), abs=1e-12)


@pytest.mark.parametrize("n, kl, formula", [(2, 0.1308, 0.1931), (10, 0.6854, 1.4026), (100, 0.6931, 3.6152)])
def test_binary_counterexample(n, kl, formula):
    problem = make(2, n)
    assert bon_kl(problem) == pytest.approx(kl, abs=1e-4)
    assert kl_formula(n) == pytest.approx(formula, abs=1e-4)
    # π_n = (1/2^n, 1 − 1/2^n) exactly
    q = 0.5**n
    assert bon_kl(problem) == pytest.approx(q * math.log(2 * q) + (1 - q) * math.log(2 * (1 - q)), abs=1e-14)


@pytest.mark.parametrize("n, win", [(3, 0.7475), (10, 0.9009), (100, 0.9500)])
def test_win_rate_values_for_L10(n, win):
    assert bon_win_rate(make(10, n)) == pytest.approx(win, abs=1e-4)
    assert bon_win_rate(make(10, n)) <= win_rate_bound(n)


def test_win_rate_L1000_equals_the_bound_to_four_decimals():
    for n in (1, 2, 5, 10, 50, 100):
        assert round(bon_win_rate(make(1000, n)), 4) == round(n / (n + 1), 4)


def test_config_validation():
    with pytest.raises(ValueError):
        Config(L=0)
    with pytest.raises(ValueError):
        Config(n=0)
