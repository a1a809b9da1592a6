"""The family contract (tasks/best_of_n/__init__.py): PMF, KL, win rate, estimator, score.

Ground truth here is brute force (every n-tuple of draws, the tie-break rule applied literally),
closed forms and quadrature, never the code under test.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.integrate import quad

from tasks.best_of_n import (
    METRICS,
    BestOfNProblem,
    BestOfNResult,
    bon_kl,
    bon_pmf,
    bon_win_rate,
    collision_probability,
    estimator_term,
    expected_estimator,
    kl_formula,
    mid_quantiles,
    score,
    win_rate_bound,
)


def brute_force(probs, rewards, n):
    """π_n and the win rate by enumerating all K^n draws; ties: the later index wins (the paper assumes distinct
    rewards, its Assumption 2.1; a fixed order breaks ties)."""
    K = len(probs)
    key = lambda i: (rewards[i], i)  # noqa: E731 - the fixed total order
    pmf = np.zeros(K)
    for draws in itertools.product(range(K), repeat=n):
        pmf[max(draws, key=key)] += math.prod(probs[i] for i in draws)
    win = sum(pmf[i] * probs[j] * (1.0 if key(i) > key(j) else 0.5 if i == j else 0.0)
              for i in range(K) for j in range(K))
    return pmf, win


def random_problem(rng, n, L=None, ties=True):
    L = L or int(rng.integers(1, 60))
    probs = rng.dirichlet(np.full(L, float(rng.choice([0.05, 0.3, 1.0, 5.0]))))
    rewards = rng.integers(0, 4, size=L).astype(float) if ties else rng.standard_normal(L)
    return BestOfNProblem(n=n, probs=probs / probs.sum(), rewards=rewards)


@pytest.mark.parametrize("seed", range(12))
def test_pmf_and_win_rate_match_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    L, n = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    probs = rng.dirichlet(np.ones(L))
    rewards = rng.integers(0, 3, size=L).astype(float)  # ties on purpose
    problem = BestOfNProblem(n=n, probs=probs, rewards=rewards)
    pmf, win = brute_force(problem.probs, rewards, n)
    np.testing.assert_allclose(bon_pmf(problem), pmf, rtol=1e-12, atol=1e-15)
    assert bon_win_rate(problem) == pytest.approx(win, abs=1e-13)


def test_ties_follow_the_index_order():
    # three outcomes with the same reward: the order is the index, so π_n = F^n − F⁻^n on 0 < 1 < 2
    problem = BestOfNProblem(n=3, probs=np.array([0.2, 0.5, 0.3]), rewards=np.zeros(3))
    F = np.array([0.2, 0.7, 1.0])
    np.testing.assert_allclose(bon_pmf(problem), F**3 - np.concatenate(([0.0], F[:-1]))**3, rtol=1e-14)
    np.testing.assert_allclose(mid_quantiles(problem), [0.1, 0.45, 0.85], rtol=1e-14)


def test_pmf_keeps_mass_far_below_machine_precision():
    # a top outcome of mass 1e-20: F⁻ rounds to 1, yet π_n(top) = 1 − (1 − 1e-20)^n ≈ n·1e-20
    probs = np.array([0.5, 0.5 - 1e-20, 1e-20])
    problem = BestOfNProblem(n=1000, probs=probs, rewards=np.arange(3.0))
    assert bon_pmf(problem)[2] == pytest.approx(1000 * 1e-20, rel=1e-9)
    assert bon_pmf(problem).sum() == pytest.approx(1.0, abs=1e-12)


def test_pmf_sums_to_one_for_huge_n_and_many_outcomes():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(200_000))
    problem = BestOfNProblem(n=100_000, probs=probs, rewards=rng.standard_normal(probs.size))
    assert bon_pmf(problem).sum() == pytest.approx(1.0, abs=1e-9)


def test_zero_probability_outcomes_get_no_mass():
    problem = BestOfNProblem(n=5, probs=np.array([0.0, 0.6, 0.0, 0.4]), rewards=np.array([3.0, 0.0, 2.0, 1.0]))
    pmf = bon_pmf(problem)
    assert pmf[0] == 0 and pmf[2] == 0
    np.testing.assert_allclose(pmf[[1, 3]], [0.6**5, 1 - 0.6**5], rtol=1e-14)
    assert bon_kl(problem) == pytest.approx(0.6**5 * math.log(0.6**4) + (1 - 0.6**5) * math.log((1 - 0.6**5) / 0.4))


def test_many_random_references_obey_theorems_3_1_and_5_3_and_conjecture_4_4():
    """KL ≤ log n − (n−1)/n, W ≤ n/(n+1), E[D̂] ≥ KL, and the Rényi-2 gap bounds, on 2,400 references."""
    rng = np.random.default_rng(2025)
    worst = {"kl": np.inf, "win": np.inf, "est": np.inf, "renyi_kl": np.inf, "renyi_win": np.inf}
    for trial in range(400):
        ties = trial % 2 == 0
        for n in (1, 2, 3, 10, 100, 3000):
            problem = random_problem(rng, n, ties=ties)
            kl, win, collision = bon_kl(problem), bon_win_rate(problem), collision_probability(problem)
            assert kl >= -1e-15
            worst["kl"] = min(worst["kl"], kl_formula(n) - kl)
            worst["win"] = min(worst["win"], win_rate_bound(n) - win)
            worst["est"] = min(worst["est"], expected_estimator(problem) - kl)
            worst["renyi_kl"] = min(worst["renyi_kl"], 2 * n * (n - 1) * collision - (kl_formula(n) - kl))
            worst["renyi_win"] = min(worst["renyi_win"], 0.5 * (n - 1) * collision - (win_rate_bound(n) - win))
    assert all(v >= -1e-12 for v in worst.values()), worst


def test_win_rate_of_best_of_one_is_one_half():
    rng = np.random.default_rng(1)
    for _ in range(50):
        assert bon_win_rate(random_problem(rng, 1)) == pytest.approx(0.5, abs=1e-15)


def test_gap_grows_like_log_n_eps_when_the_top_is_heavy():
    # two equiprobable outcomes (ε∞ = 1/2): KL → log 2, so the gap − log(n ε∞) → −1
    for n in (1000, 10_000, 100_000):
        problem = BestOfNProblem(n=n, probs=np.array([0.5, 0.5]), rewards=np.array([0.0, 1.0]))
        gap = kl_formula(n) - bon_kl(problem)
        assert gap - math.log(n * 0.5) == pytest.approx(-1.0, abs=2.0 / n + 1e-9)


# ---- the estimator D̂ ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_estimator_term_is_the_kl_of_one_atom_plus_a_continuum(n):
    """D̂(ε, n) = ∫₀^{1−ε} n u^{n−1} log(n u^{n−1}) du + (1 − (1−ε)^n) log((1 − (1−ε)^n)/ε)."""
    for eps in (1e-9, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-9):
        cont, _ = quad(lambda u: n * u ** (n - 1) * (math.log(n) + (n - 1) * math.log(u)) if u > 0 else 0.0,
                       0.0, 1.0 - eps, epsabs=1e-13, epsrel=1e-12, limit=200)
        atom = 1.0 - (1.0 - eps) ** n
        expected = cont + (atom * math.log(atom / eps) if atom > 0 else 0.0)
        assert float(estimator_term(eps, n)) == pytest.approx(expected, abs=1e-9)


def test_estimator_term_limits_and_range():
    for n in (1, 2, 16, 1024, 10**6):
        assert float(estimator_term(0.0, n)) == pytest.approx(kl_formula(n), abs=1e-15)
        assert float(estimator_term(1.0, n)) == 0.0
        eps = np.concatenate((np.logspace(-300, -1, 400), np.linspace(0.1, 1.0, 400)))
        values = estimator_term(eps, n)
        assert np.all(np.isfinite(values))
        assert np.all(values >= -1e-15) and np.all(values <= kl_formula(n) + 1e-12)
    with pytest.raises(ValueError):
        estimator_term(1.5, 4)


def test_estimator_term_on_a_discretised_continuum():
    # mass ε on the top outcome, the rest spread over 10⁶ outcomes below: exact KL → D̂(ε, n)
    L, n = 1_000_000, 8
    for eps in (0.01, 0.2):
        probs = np.full(L, (1 - eps) / (L - 1))
        probs[-1] = eps
        problem = BestOfNProblem(n=n, probs=probs, rewards=np.arange(float(L)))
        assert bon_kl(problem) == pytest.approx(float(estimator_term(eps, n)), abs=1e-4)


# ---- score ------------------------------------------------------------------------------------

def test_score_reports_only_declared_metrics_and_one_primary():
    assert sum(m.primary for m in METRICS.values()) == 1
    problem = BestOfNProblem(n=4, probs=np.array([0.25, 0.25, 0.5]), rewards=np.array([1.0, 0.0, 2.0]))
    scores = score(problem, BestOfNResult(kl=0.3, win_rate=0.7, strength=0.5))
    assert set(scores) <= set(METRICS)
    assert scores["abs_error_to_exact"] == pytest.approx(abs(0.3 - bon_kl(problem)))
    assert scores["gap_to_formula_bound"] == pytest.approx(kl_formula(4) - bon_kl(problem))
    assert scores["win_rate_advantage"] == pytest.approx(0.7 - bon_win_rate(problem))
    assert scores["renyi2_entropy"] == pytest.approx(-math.log(0.375))
    assert "win_rate" not in score(problem, BestOfNResult(kl=0.3))


def test_score_measures_a_policy_itself():
    problem = BestOfNProblem(n=3, probs=np.array([0.5, 0.5]), rewards=np.array([0.0, 1.0]))
    scores = score(problem, BestOfNResult(kl=123.0, win_rate=0.0, policy=np.array([0.0, 1.0])))
    assert scores["kl_estimate"] == pytest.approx(math.log(2))
    assert scores["win_rate"] == pytest.approx(0.75)
    with pytest.raises(ValueError):
        score(problem, BestOfNResult(kl=0.0, policy=np.array([0.5, 0.2])))


def test_continuous_problem_uses_the_limits():
    problem = BestOfNProblem(n=16, probs=None, rewards=None)
    assert bon_kl(problem) == kl_formula(16) and bon_win_rate(problem) == 16 / 17
    assert expected_estimator(problem) == pytest.approx(kl_formula(16), abs=1e-15)
    scores = score(problem, BestOfNResult(kl=1.0))
    assert "renyi2_entropy" not in scores and scores["gap_bound_renyi"] == 0.0


@pytest.mark.parametrize("kwargs", [
    dict(n=0, probs=np.array([1.0]), rewards=np.array([0.0])),
    dict(n=2, probs=np.array([0.5, 0.6]), rewards=np.array([0.0, 1.0])),
    dict(n=2, probs=np.array([0.5, 0.5]), rewards=np.array([0.0])),
    dict(n=2, probs=np.array([0.5, 0.5]), rewards=np.array([0.0, np.inf])),
    dict(n=2, probs=None, rewards=np.array([0.0])),
])
def test_problem_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        BestOfNProblem(**kwargs)
