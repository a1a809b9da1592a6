"""Cherry-picked references: rare top outputs make the KL a staircase in n, far from the formula."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from tasks.best_of_n import bon_kl, bon_pmf, expected_estimator, kl_formula
from tasks.best_of_n.bon_cherry_picked import Config, build


def make(**kw):
    return build(Config(**kw), RunContext(seed=0).for_task())


def test_construction():
    problem = make(L=100, top_k=3, top_prob=1e-4)
    assert problem.probs.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(problem.probs[-3:], 1e-4)
    np.testing.assert_allclose(problem.probs[:-3], (1 - 3e-4) / 97)
    assert np.all(problem.order == np.arange(100))  # rewards increase with the index


def test_staircase():
    # L = 100, top output 1e-4: a first plateau near log 99 for 100 ≪ n ≪ 1e4, then the mass
    # moves onto the top output and the KL climbs to −log 1e-4 = 9.2103
    # (measured: 4.40 at n = 300, 4.72 at 1000, 5.22 at 3000)
    kl = {n: bon_kl(make(n=n)) for n in (300, 1000, 3000, 100_000, 1_000_000)}
    assert math.log(99) - 0.2 < kl[300] < kl[1000] < math.log(99) + 0.2
    assert kl[3000] > kl[1000] + 0.4
    assert kl[1_000_000] == pytest.approx(-math.log(1e-4), abs=1e-6)
    assert bon_pmf(make(n=100_000))[-1] == pytest.approx(1 - (1 - 1e-4) ** 100_000, rel=1e-9)


def test_formula_far_off_and_estimator_close():
    for n in (1000, 3000, 10_000):
        problem = make(n=n)
        assert kl_formula(n) - bon_kl(problem) > 0.5
        assert abs(expected_estimator(problem) - bon_kl(problem)) < 0.02


@pytest.mark.parametrize("kw", [dict(top_k=0), dict(L=5, top_k=5), dict(top_prob=0.0), dict(top_k=2, top_prob=0.5),
                                dict(n=0)])
def test_config_validation(kw):
    with pytest.raises(ValueError):
        Config(**kw)
