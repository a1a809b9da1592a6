"""The tabular bandit world (docs/papers/epa.md): its data against its definition, exact metrics against hand
computations."""

import dataclasses
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from bench.context import RunContext
from tasks.preference import (
    BanditPreferenceProblem,
    BanditPreferenceResult,
    bandit_win_rate,
    masked_slope1_metrics,
    preference_bandit,
    score,
    slope1_metrics,
    value_at_kl,
)
from tasks.preference._bandit import rank_lists, true_reward


@pytest.fixture(scope="module")
def world():
    return preference_bandit.build(preference_bandit.Config(), RunContext(seed=0).for_task())


def test_true_reward_has_mean_zero_and_variance_one():
    """Var r* = ρ·E⟨u, v⟩²/d + (1 − ρ) = 1 for any ρ; checked on a large draw (standard errors ~ 0.003)."""
    reward = true_reward(400, 400, 4, 0.75, np.random.default_rng(0))
    assert abs(reward.mean()) < 0.02 and reward.var() == pytest.approx(1.0, abs=0.03)
    low_rank_only = true_reward(400, 400, 4, 1.0, np.random.default_rng(1))
    assert np.linalg.matrix_rank(low_rank_only) == 4                     # ρ = 1: exactly rank d


def test_lists_are_distinct_ranked_and_binarized_from_the_list(world):
    p, v = world.ref_logp.shape
    assert (p, v) == (16, 64) and world.lists.shape == (16 * 16, 4)
    np.testing.assert_allclose(np.exp(world.ref_logp).sum(axis=1), 1.0)
    assert world.ref_logp.std(axis=1).min() > 0.5                         # π_ref is far from uniform
    assert all(len(set(row)) == 4 for row in world.lists)                 # K distinct answers per list
    np.testing.assert_array_equal(np.bincount(world.list_prompts), np.full(16, 16))
    assert all(b in row[1:] for b, row in zip(world.binarized, world.lists, strict=True))   # best vs one of the others
    seen = world.seen
    for x, row in zip(world.list_prompts, world.lists, strict=True):
        assert seen[x, row].all()
    assert seen.sum() == len({(x, y) for x, row in zip(world.list_prompts, world.lists, strict=True) for y in row})
    # Plackett–Luce at τ = 1 is informative but noisy: the best beats the worst of its list most of the time
    reward = world.true_reward[world.list_prompts[:, None], world.lists]
    assert 0.6 < (reward[:, 0] > reward[:, -1]).mean() < 1.0


def test_sorted_labels_rank_by_the_true_reward_and_plackett_luce_matches_bradley_terry():
    reward = np.array([[0.0, 1.0, -0.5]])
    lists = np.array([[0, 1, 2]])
    np.testing.assert_array_equal(rank_lists(reward, np.array([0]), lists, "sorted", 1.0, np.random.default_rng(0)),
                                  [[1, 0, 2]])
    rng = np.random.default_rng(0)   # two responses: P(1 ≻ 0) = σ((1 − 0)/τ), τ = 0.5
    pair = np.zeros((20000, 2), int) + [0, 1]
    firsts = rank_lists(reward, np.zeros(20000, int), pair, "plackett_luce", 0.5, rng)[:, 0]
    assert (firsts == 1).mean() == pytest.approx(1 / (1 + math.exp(-2.0)), abs=0.01)


def test_slope1_error_is_the_closed_form_minimum_over_the_constant():
    """ε̂ = mean_x min_c mean_y (l − t − c)², the min at c = mean(l − t): row 0 is a pure shift (0), row 1 has
    diff (−1, −1, 2) (mean 0): 2; so ε̂ = 1. Pearson: row 0 is 1, row 1's true reward is constant (left out)."""
    learned, true = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 3.0]]), np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    out = slope1_metrics(learned, true)
    assert out == {"slope1_error": pytest.approx(1.0), "reward_pearson": pytest.approx(1.0)}
    grid = np.linspace(-5, 5, 100001)
    brute = np.mean([min(np.mean((l - t - c) ** 2) for c in grid[::100]) for l, t in zip(learned, true, strict=True)])
    assert brute == pytest.approx(1.0, abs=1e-4)
    masked = masked_slope1_metrics(learned, true, np.array([[True, True, False], [False, True, True]]))
    assert masked["slope1_error"] == pytest.approx((0 + 2.25) / 2)       # row 1 on (0, 3) vs (1, 1): diff (−1, 2)
    assert masked["reward_pearson"] == pytest.approx(1.0)


def _toy(beta=0.5, temperature=2.0):
    ref = np.log([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]])
    reward = np.array([[1.0, 0.0, -1.0], [0.0, 2.0, 1.0]])
    problem = BanditPreferenceProblem(ref_logp=ref, list_prompts=np.array([0, 1]), lists=np.array([[0, 1], [1, 2]]),
                                      binarized=np.array([1, 2]), label_temperature=temperature, true_reward=reward,
                                      kl_budget=0.1)
    policy = np.log([[0.25, 0.25, 0.5], [0.5, 0.3, 0.2]])
    return problem, policy, beta


def test_exact_kl_value_and_win_rate_on_a_2x3_toy():
    """By hand: KL = (¼ ln 2 + 0.3 ln 2.5)/2; J = (−0.25 + 0.8)/2; win rate (0.34375 + 0.395)/2 (ties ½)."""
    problem, policy, beta = _toy()
    scores = score(problem, BanditPreferenceResult(log_policy=policy, beta=beta, train_loss=0.25))
    assert scores["kl_to_reference"] == pytest.approx((0.25 * math.log(2) + 0.3 * math.log(2.5)) / 2, abs=1e-12)
    assert scores["true_value"] == pytest.approx(0.275, abs=1e-12)
    assert scores["win_rate"] == pytest.approx((0.34375 + 0.395) / 2, abs=1e-12)
    assert bandit_win_rate(np.exp(problem.ref_logp), np.exp(problem.ref_logp),
                           problem.true_reward) == pytest.approx(0.5)
    assert scores["train_loss"] == 0.25
    # the implicit reward β(log π − log π_ref) against r*/τ
    implicit, target = beta * (policy - problem.ref_logp), problem.true_reward / 2.0
    assert scores["slope1_error"] == pytest.approx(slope1_metrics(implicit, target)["slope1_error"])
    seen = masked_slope1_metrics(implicit, target, problem.seen)
    assert scores["slope1_error_seen"] == pytest.approx(seen["slope1_error"])
    # two seen cells per prompt: their centred difference is ±half the gap, so ε̂_seen = mean of (gap/2)²
    gaps = [(implicit[0, 0] - target[0, 0]) - (implicit[0, 1] - target[0, 1]),
            (implicit[1, 1] - target[1, 1]) - (implicit[1, 2] - target[1, 2])]
    assert scores["slope1_error_seen"] == pytest.approx(np.mean([(g / 2) ** 2 for g in gaps]))
    assert "true_value_at_kl" not in scores                              # no trace given


def test_true_value_at_kl_interpolates_the_trace():
    assert value_at_kl([0.0, 0.5, 1.5, 3.0], [0.0, 0.2, 0.6, 0.7], 1.0) == pytest.approx(0.4)
    assert value_at_kl([0.0, 0.5], [0.0, 0.2], 1.0) is None
    problem, policy, beta = _toy()
    trace = ((0, problem.ref_logp), (10, policy))                         # KL 0 → 0.2241 (crosses 0.1), J 0.15 → 0.275
    scores = score(problem, BanditPreferenceResult(log_policy=policy, beta=beta, train_loss=0.0, trace=trace))
    kl, j0 = scores["kl_to_reference"], float((np.exp(problem.ref_logp) * problem.true_reward).sum(1).mean())
    assert scores["true_value_at_kl"] == pytest.approx(j0 + (0.1 / kl) * (0.275 - j0))


def test_slope1_error_at_kl_is_the_error_where_training_would_stop():
    """ε̂ interpolated like J: from the zero reward's (the target's within-prompt variance) at KL 0 toward the final
    policy's, at KL 0.1 of the toy's 0.2241; a trace that never reaches the budget keeps its final ε̂."""
    problem, policy, beta = _toy()
    target = problem.true_reward / 2.0
    zero = np.mean((target - target.mean(axis=1, keepdims=True)) ** 2)   # each row's variance is 1/6
    assert zero == pytest.approx(1 / 6)
    trace = ((0, problem.ref_logp), (10, policy))
    scores = score(problem, BanditPreferenceResult(log_policy=policy, beta=beta, train_loss=0.0, trace=trace))
    share = 0.1 / scores["kl_to_reference"]
    assert scores["slope1_error_at_kl"] == pytest.approx(zero + share * (scores["slope1_error"] - zero))
    far = dataclasses.replace(problem, kl_budget=5.0)                   # never reached: the final policy's ε̂
    scores = score(far, BanditPreferenceResult(log_policy=policy, beta=beta, train_loss=0.0, trace=trace))
    assert scores["slope1_error_at_kl"] == scores["slope1_error"] and "true_value_at_kl" not in scores


def test_bad_settings_fail_in_one_line():
    with pytest.raises(ValueError, match="behaviour 'other'"):
        preference_bandit.Config(behaviour="other")
    with pytest.raises(ValueError, match="responses >= list_size"):
        preference_bandit.Config(responses=3)
    problem, policy, beta = _toy()
    with pytest.raises(ValueError, match="shape"):
        score(problem, BanditPreferenceResult(log_policy=policy[:1], beta=beta, train_loss=0.0))


def test_mixture_behaviour_differs_from_the_reference():
    config = preference_bandit.Config(behaviour="mixture", lists_per_prompt=64)
    mixed = preference_bandit.build(config, RunContext(seed=0).for_task())
    plain = preference_bandit.build(preference_bandit.Config(lists_per_prompt=64), RunContext(seed=0).for_task())
    np.testing.assert_array_equal(mixed.ref_logp, plain.ref_logp)        # same π_ref and r*, other sampler
    assert mixed.seen.sum() > plain.seen.sum()                            # the mixture spreads over more answers


def _bench(*args, db):
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{db}", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.integration
@pytest.mark.parametrize("name", ["dpo", "epa"])
def test_bench_run_on_the_bandit_gives_the_in_process_scores(tmp_path, name):
    """`bench run` end to end; its printed metrics equal an in-process solve + score of the same cell."""
    from methods.preference import dpo, epa

    settings = {"bandit_steps": 60}
    run = _bench("run", "-m", name, "-t", "preference_bandit", "--seed", "1", "--set", "bandit_steps=60",
                 "--set", "task.lists_per_prompt=4", db=tmp_path / "b.db")
    assert run.returncode == 0, run.stdout + run.stderr
    printed = {line.split(" = ")[0]: float(line.split(" = ")[1]) for line in run.stdout.splitlines() if " = " in line}
    module = {"dpo": dpo, "epa": epa}[name]
    problem = preference_bandit.build(preference_bandit.Config(lists_per_prompt=4), RunContext(seed=1).for_task())
    expected = score(problem, module.solve(problem, module.Config(**settings), RunContext(seed=1)))
    assert set(printed) == set(expected)
    for key, value in expected.items():
        assert printed[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
