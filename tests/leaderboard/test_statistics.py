"""The claims' t and noncentral-t laws, computed without importing scipy.stats (leaderboard/claims/statistics.py),
give scipy.stats's numbers bit for bit: every verdict, interval and p-value rests on them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from leaderboard.claims import statistics as S

DFS = [1.0, 2.0, 3.0, 4.0, 7.0, 19.0, 29.0, 99.0, 9_999.0, np.inf]
XS = [-np.inf, -40.0, -7.3, -2.0, -1e-9, -0.0, 0.0, 1e-12, 0.4, 1.96, 3.1, 12.5, 60.0, np.inf, np.nan]


def same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


@pytest.mark.parametrize("df", DFS)
def test_t_matches_scipy_stats(df):
    for x in XS:
        assert same(S._t_cdf(x, df), float(stats.t.cdf(x, df))), (x, df)
        assert same(S._t_sf(x, df), float(stats.t.sf(x, df))), (x, df)
    for q in (0.5, 0.9, 0.975, 0.99, 0.9975, 0.999):
        assert same(S._t_ppf(q, df), float(stats.t.ppf(q, df))), (q, df)


@pytest.mark.parametrize("df", [1.0, 2.0, 4.0, 9.0, 49.0, 499.0, 9_999.0])
def test_noncentral_t_matches_scipy_stats(df):
    crit = float(stats.t.ppf(0.975, df))
    for nc in (0.0, 0.01, 0.5, 1.3, 2.8, 7.0, 25.0, 80.0, 400.0):
        for x in (crit, -crit, 0.0, 1.0, -3.0):
            assert same(S._nct_sf(x, df, nc), float(stats.nct.sf(x, df, nc))), (x, df, nc)
            assert same(S._nct_cdf(x, df, nc), float(stats.nct.cdf(x, df, nc))), (x, df, nc)


def test_the_t_interval_does_not_import_scipy_stats():
    """An interval, p-values and the seeds an underpowered claim needs, in a fresh process: scipy.stats (about a
    second to import) stays out."""
    code = ("import sys; from leaderboard.claims.statistics import Condition, estimate, seeds_needed\n"
            "e = estimate([1.0, 1.4, 0.7, 1.1]); c = Condition('x', e, 0.9, 1)\n"
            "e.interval(); c.p_holds(); c.p_fails(); seeds_needed(c)\n"
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
