"""The paper's estimator: exact expectation, Monte-Carlo average, concentration, curves."""

import numpy as np
import pytest

from methods.best_of_n import bon_estimator
from tasks.best_of_n import expected_estimator, kl_formula

from ._util import continuous, problem, random_references, run


def test_exact_expectation_by_default():
    prob = problem(np.ones(10), 16)
    result, scores, _ = run(bon_estimator, prob)
    assert result.samples == 0 and result.kl_std_error is None and result.win_rate is None
    assert result.kl == pytest.approx(1.7561, abs=1e-4)            # §4's estimator, exactly: L = 10, n = 16
    assert scores["error_to_exact"] == pytest.approx(1.7561 - 1.7331, abs=2e-4)
    assert "win_rate" not in scores


@pytest.mark.parametrize("probs, n", [(np.ones(10), 16), (np.ones(100), 256), ([0.05, 0.9, 0.05], 8),
                                      (np.r_[np.ones(99) * (1 - 1e-4) / 99, 1e-4], 3000)])
def test_monte_carlo_mean_is_unbiased(probs, n):
    prob = problem(probs, n)
    expectation = expected_estimator(prob)
    result, _, _ = run(bon_estimator, prob, seed=1, samples=20_000)
    assert result.samples == 20_000 and result.kl_std_error is not None
    assert abs(result.kl - expectation) <= 5 * result.kl_std_error + 1e-12


def test_concentration_with_few_samples():
    """M = 100 ≈ O(log n · log 1/δ) samples: within 0.1 nats of the true KL in ≥ 95% of runs (L = 100, n = 256)."""
    prob = problem(np.ones(100), 256)
    hits = [run(bon_estimator, prob, seed=s, samples=100)[1]["abs_error_to_exact"] < 0.1 for s in range(100)]
    assert np.mean(hits) >= 0.95


def test_seeded_and_logged():
    prob = problem(np.random.default_rng(0).dirichlet(np.ones(30)), 50)  # D̂ varies with π(y)
    a, _, ctx = run(bon_estimator, prob, seed=3, samples=500)
    b, _, _ = run(bon_estimator, prob, seed=3, samples=500)
    c, _, _ = run(bon_estimator, prob, seed=4, samples=500)
    assert a.kl == b.kl and a.kl != c.kl
    curve = ctx.curves["kl_estimate"]
    assert curve[-1][0] == 500 and curve[-1][1] == pytest.approx(a.kl)
    assert [s for s, _ in curve] == sorted({s for s, _ in curve})


def test_continuous_reference_is_the_formula():
    result, scores, _ = run(bon_estimator, continuous(100), samples=50)
    assert result.kl == pytest.approx(kl_formula(100), abs=1e-14) and result.kl_std_error == 0.0
    assert scores["abs_error_to_exact"] < 1e-14


def test_expectation_upper_bounds_kl_on_random_references():
    for probs, rewards in random_references(300, seed=5):
        for n in (2, 8, 64, 1000):
            _, scores, _ = run(bon_estimator, problem(probs, n, rewards))
            assert scores["error_to_exact"] >= -1e-12


def test_config_validation():
    with pytest.raises(ValueError):
        bon_estimator.Config(samples=-1)
