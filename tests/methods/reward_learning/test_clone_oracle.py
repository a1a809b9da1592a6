"""The clones world's positive control: the clone-deduplicating oracle does not move, its shuffled null does."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.reward_learning import clone_oracle, mle
from tasks.reward_learning import ClonesProblem, clones, kkt_residual, score

from .test_mle import with_food_clones


def test_group_weights():
    """Originals 0, 1, 2 with clones of 2, 2 and 0: groups of sizes 2, 1, 3, each weighing one alternative."""
    np.testing.assert_allclose(clone_oracle.group_weights(3, np.array([2, 2, 0])),
                               [1 / 2, 1, 1 / 3, 1 / 3, 1 / 3, 1 / 2])
    np.testing.assert_array_equal(clone_oracle.group_weights(4, np.array([], dtype=int)), np.ones(4))


def _spec_problem(k: int) -> ClonesProblem:
    """The paper's §7.1 three-theme case (romance, art, food; docs/papers/rlhf-clones.md), k exact food clones."""
    win = with_food_clones(k)
    points = np.array([[-2 / 3, 0.0], [0.0, 0.0], [2 / 3, 0.0]])
    return ClonesProblem(points=points, win=win[:3, :3], clone_points=np.vstack([points] + [points[2:]] * k),
                         clone_win=win, clone_of=np.full(k, 2), true_reward=np.zeros(3), themes=np.arange(3),
                         theme_names=("romance", "art", "food"), box=(-1.0, 1.0))


@pytest.mark.parametrize("k", [2, 5])
def test_spec_case_study_keeps_the_mles_values_under_exact_clones(k):
    """Spec §7.1 at λ = 0.01: the MLE without clones is (0.133, −0.199, 0.066) and k = 2 / 5 exact food clones move it
    to (−0.079, −0.040, 0.040) / (−0.200, 0.050, 0.025); the oracle, counting the food group once, stays at the
    clone-free values for every k, and each clone gets its original's reward."""
    problem = _spec_problem(k)
    result = clone_oracle.solve(problem, clone_oracle.Config(), RunContext(0))
    np.testing.assert_allclose(result.reward, (0.133, -0.199, 0.066), atol=6e-4)
    np.testing.assert_allclose(result.clone_reward[:3], result.reward, atol=1e-10)
    np.testing.assert_allclose(result.clone_reward[3:], result.reward[2], atol=1e-10)
    moved = mle.solve(problem, mle.Config(), RunContext(0)).clone_reward[:3]
    assert np.max(np.abs(moved - result.reward)) > 0.2


def test_without_clones_it_is_the_mle():
    problem = clones.build(clones.Config(clones=0), RunContext(0).for_task())
    ours = clone_oracle.solve(problem, clone_oracle.Config(), RunContext(0))
    theirs = mle.solve(problem, mle.Config(), RunContext(0))
    np.testing.assert_array_equal(ours.clone_reward, theirs.clone_reward)
    np.testing.assert_array_equal(ours.reward, theirs.reward)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_oracle_stays_and_its_shuffled_null_moves(seed):
    """At the claims' world (20 food clones at ε = 1e-3, exact probabilities): the oracle's centred shift is O(ε)
    (below 1e-3) while the MLE's is ≥ 0.1; clones attributed to random originals move it by more than 0.05, within
    0.1 of the MLE (the null of the control); both fits solve their first-order equations."""
    problem = clones.build(clones.Config(), RunContext(seed).for_task())
    shift = {}
    for name, solve, config in [("oracle", clone_oracle.solve, clone_oracle.Config()),
                                ("null", clone_oracle.solve, clone_oracle.Config(shuffle=True)),
                                ("mle", mle.solve, mle.Config())]:
        scores = score(problem, solve(problem, config, RunContext(seed)))
        assert scores["kkt_residual"] < 1e-9
        shift[name] = scores["clone_shift_centred"]
    assert shift["oracle"] < 1e-3 and shift["mle"] > 0.1
    assert 0.05 < shift["null"] and shift["mle"] - shift["null"] < 0.1


def test_the_null_keeps_one_weight_per_group():
    """Shuffled attribution: every group (an original and the clones attributed to it) still sums to weight 1."""
    problem = clones.build(clones.Config(), RunContext(0).for_task())
    result = clone_oracle.solve(problem, clone_oracle.Config(shuffle=True), RunContext(0))
    assert result.clone_weights.sum() == pytest.approx(len(problem.points))
    assert not np.allclose(result.clone_weights, clone_oracle.group_weights(len(problem.points), problem.clone_of))
    assert kkt_residual(problem.clone_win, result.clone_weights, result.clone_reward, result.lam) < 1e-9
