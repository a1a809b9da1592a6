"""cmdp tasks: LP ground truth against value iteration, valid occupancy measures, exact ρ, scoring."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.cmdp import CMDPResult, _model, cmdp_adversarial, cmdp_stochastic, score


def make(module, **overrides):
    return module.build(module.Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("seed", range(4))
def test_lp_with_slack_constraint_equals_value_iteration(seed):
    p = make(cmdp_stochastic, world_seed=seed, T=10)
    r, g = p.r_means[0], p.g_means[0]
    slack = np.array([float(p.n_layers) + 1.0])  # costs per episode ≤ L: the constraint never binds
    opt, _ = _model.solve_lp(p.P, p.layers, r, g, slack)
    assert opt == pytest.approx(_model.value_iteration(p.P, p.layers, r), abs=1e-9)
    # the default threshold binds: the constrained optimum is strictly lower
    assert p.opt < opt - 1e-3


@pytest.mark.parametrize("module", [cmdp_stochastic, cmdp_adversarial])
def test_lp_occupancy_is_valid_and_feasible(module):
    p = make(module, T=20)
    q = p.q_opt
    assert np.all(q >= -1e-12)
    A_eq, b_eq = _model.flow_matrix(p.P, p.layers)
    np.testing.assert_allclose(A_eq @ q.reshape(-1), b_eq, atol=1e-9)           # flow constraints
    for sl in p.layers:
        assert q[sl].sum() == pytest.approx(1.0, abs=1e-9)                      # each layer is visited once
    g_avg = p.g_means[p.phase].mean(axis=0)
    assert np.all(np.einsum("isa,sa->i", g_avg, q) <= p.alpha + 1e-9)
    # the policy read off q* induces q* again under P
    pi = np.where(q.sum(1, keepdims=True) > 0, q / np.maximum(q.sum(1, keepdims=True), 1e-300), 1 / p.n_actions)
    np.testing.assert_allclose(_model.occupancy(p.P, p.layers, pi), q, atol=1e-9)


@pytest.mark.parametrize("rho", [0.1, 0.3])
def test_slater_parameter_is_the_configured_one(rho):
    assert make(cmdp_stochastic, rho=rho, T=10).rho == pytest.approx(rho, abs=1e-9)
    assert make(cmdp_adversarial, rho=rho, T=10).rho == pytest.approx(rho, abs=1e-9)


def test_adversarial_means_switch_every_t_over_n():
    p = make(cmdp_adversarial, T=100, n_switches=10)
    np.testing.assert_array_equal(p.phase, np.repeat(np.arange(10) % 2, 10))
    assert p.adversarial and not np.allclose(p.r_means[0], p.r_means[1])


def test_playing_the_lp_optimum_scores_zero_regret_and_no_violation():
    p = make(cmdp_stochastic, T=50)
    q = p.q_opt
    pi = np.where(q.sum(1, keepdims=True) > 1e-12, q / np.maximum(q.sum(1, keepdims=True), 1e-300), 1 / p.n_actions)
    s = score(p, CMDPResult(policies=np.repeat(pi[None], p.T, axis=0), lambdas=None))
    assert s["regret"] == pytest.approx(0.0, abs=1e-7)
    assert s["violation"] <= 1e-7 and s["reward_ratio"] == pytest.approx(1.0)
    assert s["ratio_bound"] == pytest.approx(0.3 / 4.3)
    assert s["lambda_bound"] == pytest.approx(112 * 16 / 0.09)


def test_uniform_policy_regret_is_linear_with_the_lp_gap():
    p = make(cmdp_stochastic, T=40)
    pi = np.full((p.n_states, p.n_actions), 1 / p.n_actions)
    per_episode = float(np.sum(_model.occupancy(p.P, p.layers, pi) * p.r_means[0]))
    s = score(p, CMDPResult(policies=np.repeat(pi[None], p.T, axis=0), lambdas=None))
    assert s["regret"] == pytest.approx(p.T * (p.opt - per_episode))
