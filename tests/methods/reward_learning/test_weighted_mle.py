"""Weighted MLE: Voronoi volumes, a convex solver's optimum, the reduction to the MLE, clone invariance."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.reward_learning import weighted_mle
from methods.reward_learning._bt import fit_bt, voronoi_weights
from tasks.reward_learning import clones, kkt_residual, score

from .test_mle import assert_matches_cvxpy, random_instance, with_food_clones


def _run(samples=50_000, **task):
    """Scores of weighted_mle on the clones task (50k Monte-Carlo points: the same points weigh both
    datasets, so the shift does not depend on the Monte-Carlo error of the volumes)."""
    prob = clones.build(clones.Config(**task), RunContext(0).for_task())
    return score(prob, weighted_mle.solve(prob, weighted_mle.Config(samples=samples), RunContext(0)))


@pytest.mark.parametrize("seed", range(4))
def test_equals_cvxpy_optimum(seed):
    win, w, lam = random_instance(seed)
    r = fit_bt(win, w, lam)
    assert_matches_cvxpy(win, w, lam, r)
    assert kkt_residual(win, w, r, lam) < 1e-10


def test_equal_weights_reduce_to_the_mle_with_m_lambda():
    """w ≡ 1/m: the weighted objective is (1/m²)× the standard one with λ_std = m·λ (Eq. 2 with
    uniform weights against Eq. 1)."""
    win, _, lam = random_instance(11, n=7)
    np.testing.assert_allclose(fit_bt(win, np.full(7, 1 / 7), lam), fit_bt(win, np.ones(7), 7 * lam), atol=1e-10)


def test_spec_case_study_is_unchanged_by_exact_clones():
    """Spec §7.1: equal theme masses, λ = 0.01 → (0.129, −0.194, 0.065) for every number of food clones."""
    for k in (0, 2, 5):
        w = np.r_[1 / 3, 1 / 3, np.full(k + 1, 1 / (3 * (k + 1)))]
        r = fit_bt(with_food_clones(k), w, 0.01)
        np.testing.assert_allclose(r[:3], (0.129, -0.194, 0.065), atol=6e-4)
        np.testing.assert_allclose(r[:3], fit_bt(with_food_clones(0), np.full(3, 1 / 3), 0.01), atol=1e-10)


def test_zero_weight_alternative_solves_its_win_rate_equation():
    win, w, lam = random_instance(5)
    w[2] = 0.0
    r = fit_bt(win, w, lam)
    others = np.arange(6) != 2
    rhs = np.sum(w[others] * (win[2, others] - 1 / (1 + np.exp(-(r[2] - r[others])))))
    assert lam * r[2] == pytest.approx(rhs, abs=1e-10)
    np.testing.assert_allclose(r[others], fit_bt(win[np.ix_(others, others)], w[others], lam), atol=1e-10)


def test_voronoi_volumes_of_slabs_and_exact_duplicates():
    """Centres at x = −⅔, 0, ⅔ of [−1, 1]²: three equal slabs; a duplicate halves its original's count exactly."""
    pts = np.array([[-2 / 3, 0.0], [0.0, 0.0], [2 / 3, 0.0]])
    dup = np.vstack([pts, pts[2]])
    w, w_dup = voronoi_weights([pts, dup], (-1.0, 1.0), 200_000, np.random.default_rng(0))
    np.testing.assert_allclose(w, 1 / 3, atol=4 * np.sqrt(2 / 9 / 200_000))
    assert w_dup[2] == w_dup[3] == w[2] / 2 and np.array_equal(w_dup[:2], w[:2])
    assert w.sum() == pytest.approx(1.0, abs=1e-12)


def test_learned_reward_unchanged_as_the_clone_distance_goes_to_zero():
    """Theorem (robustness to approximate clones): the shift falls with ε, ≤ 0.02 at ε = 1e-3, 0 for exact clones."""
    shifts = [_run(distance=eps)["clone_shift"] for eps in (0.1, 0.03, 0.01, 1e-3)]
    assert all(a > b for a, b in zip(shifts, shifts[1:], strict=False)), shifts
    assert shifts[-1] <= 0.02
    exact = _run(distance=0.0)
    assert exact["clone_shift"] < 1e-9 and exact["clone_gap"] < 1e-9
    at_small = _run(distance=1e-3)
    assert at_small["clone_gap"] <= 0.02 and at_small["top_theme_flip"] == 0.0 and at_small["top1_clones"] == 1.0
    assert at_small["kkt_residual"] < 1e-10


@pytest.mark.slow
def test_sampled_comparisons_weighted_shift_below_mle_in_18_of_20_seeds():
    """Spec §7.1 with K = 50 sampled comparisons per pair: the weighted MLE moves less than the MLE in ≥ 18 of 20
    seeds."""
    from methods.reward_learning import mle

    wins = 0
    for seed in range(20):
        prob = clones.build(clones.Config(comparisons=50), RunContext(seed).for_task())
        ours = score(prob, weighted_mle.solve(prob, weighted_mle.Config(samples=50_000), RunContext(seed)))
        base = score(prob, mle.solve(prob, mle.Config(), RunContext(seed)))
        wins += ours["clone_shift_centred"] < base["clone_shift_centred"]
    assert wins >= 18
