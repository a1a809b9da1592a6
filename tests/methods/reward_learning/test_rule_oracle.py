"""The rule world's positive control: labels from the true rules beat random rules; from another pair's rules, not."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.reward_learning import random_rules, rule_oracle
from tasks.reward_learning import rule_world, score

RELEVANCE = np.array([[1.0, 0.1, 0.1, 0.1], [0.1, 1.0, 1.0, 0.1], [1.0, 1.0, 1.0, 1.0]])
SCORES_A = np.array([[0.5, -1.0, -1.0, -1.0], [0.0, 0.2, 0.1, 1.0], [0.0, 0.0, 0.0, 0.0]])
SCORES_B = np.array([[0.4, 1.0, 1.0, 1.0], [0.0, 0.3, 0.1, -1.0], [0.0, 0.0, 0.0, 0.0]])


def test_true_rules_and_their_labels_by_hand():
    """Pair 0: R = {0}, 0.5 ≥ 0.4 → A (all four rules would say B); pair 1: R = {1, 2}, 0.3 < 0.4 → B (all rules: A);
    pair 2: every rule equally relevant, so R is the whole pool, and the tie goes to A."""
    mask = rule_oracle.true_rules(RELEVANCE)
    np.testing.assert_array_equal(mask, [[1, 0, 0, 0], [0, 1, 1, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(rule_oracle.labels_from_mask(SCORES_A, SCORES_B, mask), [1, 0, 1])


def test_the_world_marks_its_relevant_rules_with_the_largest_relevance():
    """What the oracle reads: R(x) has 3–8 rules of one topic cluster (K/10 consecutive rules)."""
    problem = rule_world.build(rule_world.Config(n_train=300, n_test=10), RunContext(0).for_task())
    mask = rule_oracle.true_rules(problem.relevance)
    sizes = mask.sum(axis=1)
    assert sizes.min() >= 3 and sizes.max() <= 8
    clusters = [np.unique(np.flatnonzero(row) // 10) for row in mask]
    assert all(len(c) == 1 for c in clusters)


@pytest.mark.parametrize("seed", [0, 1])
def test_true_rules_beat_random_rules_and_their_shuffle_does_not(seed):
    """At the claims' world (1K training pairs): labels from R(x) agree with the hidden preference far more than labels
    from 5 random rules (0.82 vs 0.53 over 10 seeds), and labels from another pair's R(x) do not (within 0.03)."""
    problem = rule_world.build(rule_world.Config(), RunContext(seed).for_task())
    acc = {name: score(problem, solve(problem, config, RunContext(seed)))["label_accuracy"] for name, solve, config in [
        ("random", random_rules.solve, random_rules.Config()),
        ("oracle", rule_oracle.solve, rule_oracle.Config()),
        ("null", rule_oracle.solve, rule_oracle.Config(shuffle=True))]}
    assert acc["oracle"] > acc["random"] + 0.2
    assert abs(acc["null"] - acc["random"]) < 0.03
