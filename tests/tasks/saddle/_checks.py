"""Checks every saddle task's instance must pass (shared by the per-task test files)."""

import numpy as np


def assert_exact_saddle_point(p, tol=1e-10):
    """z* solves the KKT system: ∇f(x*) + Bᵀy* = 0 and ∇g(y*) = Bx*, checked through the oracle."""
    assert p.kkt_residual < 1e-12
    o = p.oracle()
    gx = o.grad_f(p.x_star) + o.BT(p.y_star)
    gy = o.grad_g(p.y_star) - o.B(p.x_star)
    scale = 1.0 + np.linalg.norm(p.data.a) + np.linalg.norm(p.data.c)
    assert np.linalg.norm(gx) < tol * scale and np.linalg.norm(gy) < tol * scale
    # and it is a saddle: F(x*, y) ≤ F(x*, y*) ≤ F(x, y*) along random directions
    d = p.data

    def F(x, y):
        return 0.5 * x @ d.A @ x - d.a @ x + y @ d.B @ x - 0.5 * y @ d.C @ y + d.c @ y

    rng = np.random.default_rng(0)
    f0 = F(p.x_star, p.y_star)
    for _ in range(5):
        u, v = rng.standard_normal(p.d_x), rng.standard_normal(p.d_y)
        assert F(p.x_star + u, p.y_star) >= f0 - 1e-9
        assert F(p.x_star, p.y_star + v) <= f0 + 1e-9


def assert_constants_match_the_spectra(p):
    d = p.data
    eA, eC = np.linalg.eigvalsh(d.A), np.linalg.eigvalsh(d.C)
    s = np.linalg.svd(d.B, compute_uv=False)
    assert abs(eA.max() - p.L_x) < 1e-10 and abs(max(eA.min(), 0.0) - p.mu_x) < 1e-10
    assert abs(eC.max() - p.L_y) < 1e-10 and abs(max(eC.min(), 0.0) - p.mu_y) < 1e-10
    assert abs(s.max() - p.L_xy) < 1e-10
    mu_xy = np.sqrt(max(np.linalg.eigvalsh(d.B @ d.B.T).min(), 0.0))
    mu_yx = np.sqrt(max(np.linalg.eigvalsh(d.B.T @ d.B).min(), 0.0))
    assert abs(mu_xy - p.mu_xy) < 1e-7 and abs(mu_yx - p.mu_yx) < 1e-7
    assert np.allclose(d.A, d.A.T) and np.allclose(d.C, d.C.T)
    assert eA.min() > -1e-10 and eC.min() > -1e-10  # convex-concave


def assert_seeded(build, config, ctx_factory):
    a, b = build(config, ctx_factory(0)), build(config, ctx_factory(0))
    c = build(config, ctx_factory(1))
    np.testing.assert_array_equal(a.data.B, b.data.B)
    np.testing.assert_array_equal(a.x_star, b.x_star)
    assert not np.allclose(a.data.B, c.data.B)
    assert (a.L_x, a.mu_x, a.L_xy, a.mu_xy) == (c.L_x, c.mu_x, c.L_xy, c.mu_xy)  # same spectra
