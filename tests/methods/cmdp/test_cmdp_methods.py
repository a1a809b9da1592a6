"""cmdp methods on a small instance (T = 4000, one seed): rates and bounds of the claims, plus
mechanism checks (Dykstra projection, fixed share, dual projection) against exact answers."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.cmdp import _common, bobw_po, cmdp_full_feedback, cmdp_primal_dual, cmdp_unconstrained_po
from tasks.cmdp import _model, cmdp_adversarial, cmdp_stochastic, score

T = 4000


def run(method, task, seed=0, **cfg):
    p = task.build(task.Config(T=T), RunContext(seed=0).for_task())
    return p, score(p, method.solve(p, method.Config(**cfg), RunContext(seed=seed)))


def test_bobw_stochastic_violation_rate_and_multipliers():
    _, s = run(bobw_po, cmdp_stochastic)
    assert s["violation_slope"] <= 0.5 + 0.2              # Õ(√T) violation
    # measured 115 at T = 4000; the unconstrained learner violates ≈ 1.1 per episode (≈ 4400)
    assert s["violation"] <= 0.05 * T
    assert s["max_lambda"] <= T ** 0.25 + 1e-12 and s["max_lambda"] <= s["lambda_bound"]


def test_bobw_adversarial_violation_and_reward_fraction():
    _, s = run(bobw_po, cmdp_adversarial)
    assert s["violation_slope"] <= 0.5 + 0.2
    assert s["reward_ratio"] >= s["ratio_bound"]            # ρ/(ρ+L) fraction of OPT


def test_unconstrained_po_violates_linearly():
    _, s = run(cmdp_unconstrained_po, cmdp_stochastic)
    assert s["violation_slope"] == pytest.approx(1.0, abs=0.1)
    assert s["regret"] < 0 and s["max_lambda"] == 0.0      # beats the constrained OPT by violating


def test_full_feedback_regret_and_violation():
    _, s = run(cmdp_full_feedback, cmdp_stochastic)
    assert s["violation"] <= 0.01 * T and s["regret"] <= 0.1 * T
    assert s["regret_slope"] <= 1.0


def test_primal_dual_stochastic_violation_sublinear():
    _, s = run(cmdp_primal_dual, cmdp_stochastic)
    assert s["violation_slope"] <= 0.7


def test_dykstra_projection_matches_the_polytope():
    p = cmdp_stochastic.build(cmdp_stochastic.Config(T=10), RunContext(0))
    A_eq, b_eq = _model.flow_matrix(p.P, p.layers)
    q_in = p.q_opt.reshape(-1)
    np.testing.assert_allclose(cmdp_full_feedback.project_occupancy(q_in, A_eq, b_eq, 50), q_in, atol=1e-9)
    y = q_in + np.random.default_rng(1).normal(0, 0.3, q_in.shape)
    x = cmdp_full_feedback.project_occupancy(y, A_eq, b_eq, 2000)
    assert np.all(x >= 0) and np.allclose(A_eq @ x, b_eq, atol=1e-6)
    # optimality of a projection: ⟨y − x, z − x⟩ ≤ 0 for a point z of the polytope
    assert np.dot(y - x, q_in - x) <= 1e-5


def test_fixed_share_keeps_every_action_above_share_over_a():
    pi = np.full((2, 3), 1 / 3)
    new = _common.exp_weights(pi, np.array([[100.0, 0, 0], [0, 0, 0]]), 1.0, 0.03)
    assert np.allclose(new.sum(1), 1) and new.min() >= 0.01 - 1e-12
    np.testing.assert_allclose(new[1], 1 / 3)


def test_dual_step_projects_onto_box():
    lam = _common.dual_step(np.array([0.5, 0.5]), np.array([10.0, -10.0]), np.zeros(2), 1.0, 2.0)
    np.testing.assert_array_equal(lam, [2.0, 0.0])
