"""Exact best-of-n: the PMF against exact rational arithmetic, and the scored metrics."""

import math
from fractions import Fraction

import numpy as np
import pytest

from methods.best_of_n import bon_exact
from tasks.best_of_n import kl_formula

from ._util import continuous, problem, run


@pytest.mark.parametrize("seed", range(5))
def test_kl_and_win_rate_match_rational_arithmetic(seed):
    """π_n(k) = F_k^n − F_{k−1}^n in exact fractions (n = 40), then KL and W from them."""
    rng = np.random.default_rng(seed)
    weights = [int(w) for w in rng.integers(1, 1000, size=int(rng.integers(2, 12)))]
    total, n = sum(weights), 40
    p = [Fraction(w, total) for w in weights]
    cdf = [sum(p[:k + 1], Fraction(0)) for k in range(len(p))]
    pmf = [cdf[k] ** n - (cdf[k - 1] if k else Fraction(0)) ** n for k in range(len(p))]
    kl = sum(float(q) * (math.log(q) - math.log(pi)) for q, pi in zip(pmf, p, strict=True) if q > 0)
    win = float(sum(q * ((cdf[k] - p[k]) + p[k] / 2) for k, q in enumerate(pmf)))
    result, scores, _ = run(bon_exact, problem(weights, n))
    np.testing.assert_allclose(result.policy, [float(q) for q in pmf], rtol=1e-12, atol=1e-300)
    assert result.kl == pytest.approx(kl, abs=1e-13)
    assert result.win_rate == pytest.approx(win, abs=1e-14)
    assert scores["abs_error_to_exact"] == 0.0 and scores["win_rate_advantage"] == 0.0


def test_continuous_reference():
    result, scores, _ = run(bon_exact, continuous(64))
    assert result.kl == kl_formula(64) and result.win_rate == 64 / 65 and result.policy is None
    assert scores["gap_to_formula_bound"] == 0.0 and scores["win_rate_gap_to_bound"] == 0.0


def test_deterministic():
    prob = problem([0.2, 0.3, 0.5], 7)
    assert run(bon_exact, prob, seed=0)[0].kl == run(bon_exact, prob, seed=9)[0].kl
