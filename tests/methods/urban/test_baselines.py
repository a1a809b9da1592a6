"""Baselines: Wasserstein–Procrustes recovers a planted rotation; source mean and direct transfer by construction."""

import numpy as np
import pytest
from scipy.stats import special_ortho_group

from bench.context import RunContext
from methods.urban import direct_transfer, procrustes, source_mean
from methods.urban._align import procrustes as procrustes_map
from methods.urban._align import sinkhorn, standardise, wasserstein_procrustes
from tasks.urban import score, two_city


def clustered_cloud(rng, d=6):
    centres = rng.normal(0, 3, (4, d))
    return np.vstack([c + rng.normal(0, 0.5, (k, d)) * np.linspace(1.5, 0.5, d)
                      for c, k in zip(centres, (80, 60, 40, 20), strict=True)])


def test_procrustes_with_known_correspondence_is_exact():
    rng = np.random.default_rng(0)
    x, r = rng.normal(size=(50, 5)), special_ortho_group.rvs(5, random_state=0)
    np.testing.assert_allclose(procrustes_map(x, x @ r, np.eye(50) / 50), r, atol=1e-10)


def test_sinkhorn_has_uniform_marginals():
    cost = np.random.default_rng(0).random((7, 5))
    t = sinkhorn(cost, 0.1, iters=500)
    np.testing.assert_allclose(t.sum(1), 1 / 7, atol=1e-9)
    np.testing.assert_allclose(t.sum(0), 1 / 5, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_wasserstein_procrustes_recovers_a_planted_rotation(seed):
    """Target = the source's regions shuffled, rotated by R and jittered: W = R without any correspondence."""
    rng = np.random.default_rng(seed)
    x = clustered_cloud(rng)
    r = special_ortho_group.rvs(6, random_state=seed)
    y = x[rng.permutation(len(x))] @ r + 0.01 * rng.standard_normal(x.shape)
    w = wasserstein_procrustes(standardise(x)[0], standardise(y)[0], rng)
    assert np.abs(w - r).max() < 0.01


def test_wasserstein_procrustes_on_a_different_subset_of_regions():
    rng = np.random.default_rng(1)
    x = clustered_cloud(rng)
    r = special_ortho_group.rvs(6, random_state=1)
    y = x[rng.permutation(len(x))[:150]] @ r + 0.01 * rng.standard_normal((150, 6))
    w = wasserstein_procrustes(standardise(x)[0], standardise(y)[0], rng)
    assert np.abs(w - r).max() < 0.1  # the subset's mean differs from the full city's: not exact


def test_align_target_maps_a_rotated_city_back():
    rng = np.random.default_rng(0)
    h_s = clustered_cloud(rng) + 5.0
    r = special_ortho_group.rvs(6, random_state=0)
    h_t = 3.0 * (h_s[rng.permutation(len(h_s))] - 5.0) @ r               # other mean, scale and rotation
    mapped = procrustes.align_target(h_s, h_t, procrustes.Config(), RunContext(0))
    np.testing.assert_allclose(np.sort(mapped, 0), np.sort(h_s, 0), atol=0.05)


def test_source_mean_predicts_the_source_mean_and_scores_nonpositive_r2():
    problem = two_city.build(two_city.Config(**two_city.SMALLEST), RunContext(0).for_task())
    result = source_mean.solve(problem, source_mean.Config(), RunContext(0))
    np.testing.assert_allclose(result.predictions, np.tile(problem.source.labels.mean(0), (problem.target.n, 1)))
    assert score(problem, result)["r2"] <= 0.0


def test_direct_transfer_trains_each_city_alone():
    """Each city's L_mob is logged and falls on its own; no alignment term exists; the run is seeded."""
    problem = two_city.build(two_city.Config(**two_city.SMALLEST), RunContext(0).for_task())
    config = direct_transfer.Config(dim=8, heads=2, epochs=20, lr=1e-2)
    ctx = RunContext(0)
    result = direct_transfer.solve(problem, config, ctx)
    assert {"source_loss_mob_0", "target_loss_mob_0"} <= set(ctx.curves) and "loss_align" not in ctx.curves
    for name in ("source_loss_mob_0", "target_loss_mob_0"):
        assert ctx.curves[name][-1][1] < ctx.curves[name][0][1]
    np.testing.assert_array_equal(result.predictions,
                                  direct_transfer.solve(problem, config, RunContext(0)).predictions)
