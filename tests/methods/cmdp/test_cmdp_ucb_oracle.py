"""cmdp_ucb_oracle (the positive control of cmdp-bobw): its LP, its bonus and its run against known answers."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.cmdp import cmdp_ucb_oracle as oracle
from tasks.cmdp import cmdp_adversarial, cmdp_stochastic, cumulative, occupancy, score


def build(T, task=cmdp_stochastic):
    return task.build(task.Config(T=T), RunContext(seed=0).for_task())


def test_lp_on_the_true_means_is_the_tasks_optimum():
    p = build(10)
    q = oracle.constrained_lp(p.P, p.layers, p.r_means[0], p.g_means[0], p.alpha)
    assert float(np.sum(p.r_means[0] * q)) == pytest.approx(p.opt, abs=1e-8)
    assert float(np.sum(p.g_means[0, 0] * q)) <= p.alpha[0] + 1e-8       # the constraint binds: = α
    assert float(np.sum(p.g_means[0, 0] * q)) == pytest.approx(p.alpha[0], abs=1e-8)
    # the policy read off q reproduces q under the true kernel
    np.testing.assert_allclose(occupancy(p.P, p.layers, oracle.policy_of(q)), q, atol=1e-9)


def test_hoeffding_bonus_by_hand():
    n = np.array([[0.0, 2.0], [8.0, 1.0]])
    r_sum = np.array([[0.0, 1.0], [2.0, 0.0]])
    log_term = np.log(2 * 4 * 10)                                         # log(2·S·A·T), S·A = 4, T = 10
    got = oracle.optimistic_rewards(r_sum, n, 10, 1.0)
    expected = [[1.0, min(1.0, 0.5 + np.sqrt(log_term / 4))],
                [0.25 + np.sqrt(log_term / 16), min(1.0, 0.0 + np.sqrt(log_term / 2))]]
    np.testing.assert_allclose(got, expected)
    assert got[1, 0] == pytest.approx(0.25 + 0.5233, abs=1e-4)
    # the null: greedy on the empirical means, 1 where unvisited
    np.testing.assert_allclose(oracle.optimistic_rewards(r_sum, n, 10, 0.0), [[1.0, 0.5], [0.25, 0.0]])


def test_run_is_feasible_every_episode_and_learns():
    T = 2000
    p = build(T)
    res = oracle.solve(p, oracle.Config(), RunContext(seed=0))
    q = occupancy(p.P, p.layers, res.policies)                             # (T, S, A)
    cost = np.einsum("tsa,sa->t", q, p.g_means[0, 0])
    reward = np.einsum("tsa,sa->t", q, p.r_means[0])
    assert np.all(cost <= p.alpha[0] + 1e-7)                               # exact constraint: never violates
    assert np.all(reward <= p.opt + 1e-7)                                  # so no episode beats OPT
    regret, violation, _ = cumulative(p, res)
    assert violation[-1] <= 1e-5 and regret[-1] >= -1e-5
    # learning: the last tenth of the episodes loses far less per episode than the first tenth
    gap = p.opt - reward
    assert gap[-T // 10:].mean() < 0.3 * gap[:T // 10].mean()          # measured 0.15
    s = score(p, res)
    assert s["regret"] < 0.05 * T * p.opt                                 # measured 0.025·T·OPT (R_T = 132) at seed 0


def test_skips_the_adversarial_regime():
    assert oracle.skip(build(10, cmdp_adversarial), oracle.Config()) is not None
    assert oracle.skip(build(10), oracle.Config()) is None
    with pytest.raises(ValueError):
        oracle.Config(bonus_scale=-1.0)
