"""The rule world: relevant sets inside the topic's cluster, the hidden preference, the chat-hard construction."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.reward_learning import CATEGORIES, mutual_information, rule_world


def _pairs(n=2000, seed=0, **overrides):
    return rule_world.draw_pairs(rule_world.Config(**overrides), n, np.random.default_rng(seed))


def test_relevant_sets_are_3_to_8_rules_of_one_cluster():
    d = _pairs()
    relevant = d["relevance"] == 1.0
    assert set(np.unique(d["relevance"])) == {0.1, 1.0}
    sizes = relevant.sum(axis=1)
    assert sizes.min() == 3 and sizes.max() == 8
    clusters = [set(np.flatnonzero(row) // 10) for row in relevant]
    assert all(len(c) == 1 for c in clusters)
    np.testing.assert_array_equal(d["category"], rule_world.CATEGORY_OF_TOPIC[[c.pop() for c in clusters]])


def test_noise_free_judges_recover_the_hidden_preference():
    """σ = 0 and τ = 0: the relevance-weighted sum of judge scores is the utility gap, so its sign is Z."""
    d = _pairs(judge_noise=0.0, irrelevant_noise=0.0, temperature=0.0)
    gap = np.sum(d["relevance"] * (d["scores_a"] - d["scores_b"]), axis=1)
    np.testing.assert_array_equal((gap > 0).astype(int), d["preference"])
    overall_gap = d["overall_a"] - d["overall_b"]  # overall judge = utility + N(0, 1): agrees with Z mostly
    assert 0.6 < np.mean((overall_gap > 0) == d["preference"]) < 0.95


def test_chat_hard_pairs_are_subtle_and_distracting():
    d = _pairs(n=4000, judge_noise=0.0, irrelevant_noise=0.0)
    hard = d["category"] == CATEGORIES.index("chat_hard")
    relevant = d["relevance"] == 1.0
    broken_a = np.sum((d["scores_a"] == -1.0) & ~relevant, axis=1)
    broken_b = np.sum((d["scores_b"] == -1.0) & ~relevant, axis=1)
    assert np.all(np.maximum(broken_a, broken_b)[hard] >= 3) and np.all(np.minimum(broken_a, broken_b)[hard] == 0)
    rel_gap = np.abs(d["scores_a"] - d["scores_b"])[relevant]
    per_pair_hard = np.repeat(hard, relevant.sum(axis=1))
    assert rel_gap[per_pair_hard].mean() < 0.2 < rel_gap[~per_pair_hard].mean()


def test_build_is_deterministic_and_split_disjoint():
    a = rule_world.build(rule_world.Config(n_train=50, n_test=60), RunContext(4).for_task())
    b = rule_world.build(rule_world.Config(n_train=50, n_test=60), RunContext(4).for_task())
    np.testing.assert_array_equal(a.scores_a, b.scores_a)
    assert a.test_features_a.shape == (60, 100) and a.preference.shape == (50,)


def test_mutual_information_plug_in():
    z = np.array([0, 1] * 50)
    assert mutual_information(z, z) == pytest.approx(np.log(2))
    assert mutual_information(z, np.array([0, 0, 1, 1] * 25)) == pytest.approx(0.0, abs=1e-15)


def test_bad_config():
    with pytest.raises(ValueError, match="multiple of 10"):
        rule_world.Config(n_rules=55)
    with pytest.raises(ValueError, match="relevant_max <= n_rules/10"):
        rule_world.Config(n_rules=20, relevant_max=3)
