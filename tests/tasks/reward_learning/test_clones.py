"""The clones world: the spec's theme-level preferences, exact clone distances, reused draws."""

import numpy as np
import pytest

from bench.configs import build_config
from bench.context import RunContext
from bench.errors import BenchError
from tasks.reward_learning import clones


def _build(**overrides):
    return clones.build(clones.Config(**overrides), RunContext(seed=3).for_task())


def test_hard_preferences_are_the_spec_target_matrix():
    """g → ∞, no within-theme term: p(rom ≻ art) = 0.70, p(rom ≻ food) = 0.40, p(art ≻ food) = 0.55 (the targets
    tasks/reward_learning/clones.py builds its world to)."""
    p = _build(per_theme=1, clones=0, gap=60.0, lipschitz=0.0, spread=0.0).win
    np.testing.assert_allclose(p, [[0.5, 0.7, 0.4], [0.3, 0.5, 0.55], [0.6, 0.45, 0.5]], atol=1e-12)


def test_population_probabilities_are_a_bt_mixture():
    prob = _build(per_theme=3, clones=4)
    p = prob.clone_win
    np.testing.assert_allclose(p + p.T, 1.0, atol=1e-12)
    alpha, r = clones.type_rewards(prob.clone_points, np.concatenate([prob.themes, prob.themes[prob.clone_of]]),
                                   clones.Config())
    a, b = 1, 10  # one original, one clone
    expected = sum(al / (1 + np.exp(-(ri[a] - ri[b]))) for al, ri in zip(alpha, r, strict=True))
    assert p[a, b] == pytest.approx(expected, abs=1e-14)
    np.testing.assert_allclose(prob.win, p[:9, :9])


def test_true_reward_ranks_romance_food_art():
    prob = _build(per_theme=1, clones=0, spread=0.0)
    # α-weighted utilities: romance 0.1g, art −0.15g, food 0.05g (g = 4)
    np.testing.assert_allclose(prob.true_reward, [0.4, -0.6, 0.2], atol=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1e-3, 0.0])
def test_clones_sit_at_distance_eps_of_their_food_originals(eps):
    prob = _build(clones=7, distance=eps)
    m = len(prob.points)
    np.testing.assert_array_equal(prob.clone_points[:m], prob.points)
    np.testing.assert_allclose(np.linalg.norm(prob.clone_points[m:] - prob.points[prob.clone_of], axis=1), eps,
                               atol=1e-15)
    assert set(prob.themes[prob.clone_of]) == {clones.THEMES.index("food")}
    assert list(prob.clone_of) == [20, 21, 22, 23, 24, 25, 26]  # round-robin over the food alternatives


def test_sampled_comparisons_reuse_the_original_draws():
    prob = _build(per_theme=2, clones=3, comparisons=50)
    m = len(prob.points)
    np.testing.assert_array_equal(prob.clone_win[:m, :m], prob.win)
    assert np.all(np.isin(np.round(prob.clone_win * 50, 9) % 1, [0.0]))  # multiples of 1/K
    np.testing.assert_allclose(prob.clone_win + prob.clone_win.T, 1.0)


def test_bad_config_lists_what_is_allowed():
    with pytest.raises(BenchError, match="allowed: romance, art, food"):
        build_config(clones.Config, {"clone_theme": "restaurant"}, "clones")
    with pytest.raises(ValueError, match="per_theme >= 1"):
        clones.Config(per_theme=0)
