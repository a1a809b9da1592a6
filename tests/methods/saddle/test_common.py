"""Shared machinery of the saddle methods: Chebyshev acceleration, APDG parameters, views."""

import math

import numpy as np
import pytest

from methods.saddle import _common
from tests.methods.saddle._helpers import make


@pytest.mark.parametrize("low,high", [(0.01, 1.0), (1e-4, 1.0), (0.5, 2.0), (0.0625**2, 1.0)])
def test_chebyshev_makes_W_S_well_conditioned(low, high):
    rng = np.random.default_rng(0)
    eigs = np.concatenate([[low, high], rng.uniform(low, high, 60), np.geomspace(low, high, 40)])
    n = _common.chebyshev_degree(low, high)
    assert n == math.ceil(math.sqrt(high / low) - 1e-12)
    calls = []

    def apply_W(v):
        calls.append(1)
        return eigs * v

    s = _common.chebyshev_solve(apply_W, np.ones_like(eigs), low, high, n)
    q = eigs * s  # the eigenvalues of W·S_n(W)
    eps = _common.chebyshev_error(low, high, n)
    assert eps <= 4 / 15
    assert np.all(q >= 1 - eps - 1e-12) and np.all(q <= 1 + eps + 1e-12)
    assert np.all(q >= _common.CHEB_LOW) and np.all(q <= _common.CHEB_HIGH)
    assert len(calls) == n - 1
    # and the error bound is attained somewhere on [low, high] (equioscillation)
    grid = np.linspace(low, high, 20001)
    s_grid = _common.chebyshev_solve(lambda v: grid * v, np.ones_like(grid), low, high, n)
    assert np.max(np.abs(grid * s_grid - 1)) == pytest.approx(eps, rel=1e-6)


def test_chebyshev_solve_is_linear_and_matches_the_matrix_polynomial():
    rng = np.random.default_rng(1)
    B = rng.standard_normal((6, 6))
    W = B @ B.T
    ev = np.linalg.eigvalsh(W)
    n = 5
    S = np.column_stack([_common.chebyshev_solve(lambda v: W @ v, e, ev[0], ev[-1], n) for e in np.eye(6)])
    np.testing.assert_allclose(S, S.T, atol=1e-9)  # a polynomial in W: symmetric, commutes with W
    np.testing.assert_allclose(S @ W, W @ S, atol=1e-8)
    u, v = rng.standard_normal(6), rng.standard_normal(6)
    lhs = _common.chebyshev_solve(lambda w: W @ w, 2 * u - 3 * v, ev[0], ev[-1], n)
    np.testing.assert_allclose(lhs, S @ (2 * u - 3 * v), atol=1e-9)


@pytest.mark.parametrize("regime,case", [("sc_sc", "a"), ("constrained", "b"), ("bilinear", "d"),
                                         ("coupling_curvature", "d")])
def test_apdg_picks_the_theorem_case_of_each_regime(regime, case):
    p = make(regime, d=8) if regime != "constrained" else make(regime, d_x=8, d_y=4)
    prm = _common.apdg_parameters(p.L_x, p.mu_x, p.L_y, p.mu_y, p.L_xy, p.mu_xy, p.mu_yx)
    assert prm.case == case
    assert 0 < prm.rho < 1 and 0 < prm.tau_u <= 1 and 0 < prm.tau_v <= 1
    assert prm.eta_u > 0 and prm.eta_v > 0 and prm.beta_u > 0 and prm.beta_v > 0


def test_apdg_uses_the_case_with_the_best_rate():
    # μ_x, μ_y > 0 but tiny, B nonsingular: case (d) (ignoring μ) beats case (a)
    prm = _common.apdg_parameters(1.0, 1e-8, 1.0, 1e-8, 1.0, 0.1, 0.1)
    assert prm.case == "d" and prm.alpha_u == prm.alpha_v == 0.0
    # case (d)'s rate: 1/(2 + 8 max(√(L_x L_y) L_xy/(μ_xy μ_yx), L_xy²/μ_yx², L_xy²/μ_xy²))
    assert prm.rho == pytest.approx(1 / (2 + 8 * 100))
    # large μ's: case (a) with ρ = 1/(4 + 4 max(√(L/μ), L_xy/√(μ_x μ_y)))
    prm = _common.apdg_parameters(1.0, 0.25, 1.0, 0.25, 1.0, 0.1, 0.1)
    assert prm.case == "a" and prm.rho == pytest.approx(1 / (4 + 4 * 4))
    with pytest.raises(ValueError, match="APDG needs"):
        _common.apdg_parameters(1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0)


def test_mirrored_view_exchanges_the_roles_and_negates_the_coupling():
    p = make("constrained", d_x=8, d_y=4)
    o = p.oracle()
    v = _common.view(p, o, swapped=True)
    assert (v.L_F, v.mu_F, v.L_G, v.mu_G) == (p.L_y, p.mu_y, p.L_x, p.mu_x)
    assert (v.mu_Kv, v.mu_Ku) == (p.mu_yx, p.mu_xy)
    y, x = np.ones(4), np.arange(8.0)
    np.testing.assert_allclose(v.K(y), -p.data.B.T @ y)
    np.testing.assert_allclose(v.KT(x), -p.data.B @ x)
    np.testing.assert_allclose(v.grad_F(y), p.data.C @ y - p.data.c)
    assert v.to_xy("u", "v") == ("v", "u")
    assert (o.b_calls, o.bt_calls, o.grad_g_calls) == (1, 1, 1)
