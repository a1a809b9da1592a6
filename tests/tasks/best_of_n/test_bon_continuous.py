"""Continuous reference: the limits the formula and n/(n+1) are exact for."""

import pytest

from bench.context import RunContext
from tasks.best_of_n import bon_kl, bon_win_rate, kl_formula
from tasks.best_of_n.bon_continuous import Config, build
from tasks.best_of_n.bon_uniform import Config as UniformConfig
from tasks.best_of_n.bon_uniform import build as build_uniform


def test_closed_forms():
    for n in (1, 2, 16, 1000):
        problem = build(Config(n=n), RunContext(seed=0).for_task())
        assert problem.continuous and problem.size == 0
        assert bon_kl(problem) == kl_formula(n)
        assert bon_win_rate(problem) == n / (n + 1)


def test_is_the_limit_of_fine_uniform_references():
    # G_n ≤ 2n(n−1)/L and n/(n+1) − W ≤ (n−1)/(2L) for the uniform reference
    n, L = 16, 200_000
    fine = build_uniform(UniformConfig(L=L, n=n), RunContext(seed=0).for_task())
    coarse = build(Config(n=n), RunContext(seed=0).for_task())
    assert bon_kl(fine) == pytest.approx(bon_kl(coarse), abs=2 * n * (n - 1) / L)
    assert bon_win_rate(fine) == pytest.approx(bon_win_rate(coarse), abs=(n - 1) / (2 * L))


def test_config_validation():
    with pytest.raises(ValueError):
        Config(n=0)
