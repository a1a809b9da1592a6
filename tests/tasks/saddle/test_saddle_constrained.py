"""R2, linearly constrained instance: g affine, B wide with full row rank (the paper's special case
(ii), OPAPC's)."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from tasks.saddle.saddle_constrained import Config, build
from tests.tasks.saddle._checks import assert_constants_match_the_spectra, assert_exact_saddle_point, assert_seeded


def make(**overrides):
    return build(Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("overrides", [{}, {"mu_x": 0.0025}, {"d_x": 100, "d_y": 40}])
def test_kkt_solution_is_the_saddle_point(overrides):
    p = make(**overrides)
    assert_exact_saddle_point(p)
    assert_constants_match_the_spectra(p)


def test_the_saddle_point_solves_the_constrained_problem():
    p = make()
    d = p.data
    assert not d.C.any() and p.L_y == p.mu_y == 0.0
    assert p.mu_xy == pytest.approx(0.1) and p.mu_yx == 0.0  # full row rank, not column rank
    np.testing.assert_allclose(d.B @ p.x_star, -d.c, atol=1e-12)  # feasible: Bx* = −c
    # optimal: ∇f(x*) lies in the range of Bᵀ (the multiplier is y*)
    grad = d.A @ p.x_star - d.a
    proj = d.B.T @ np.linalg.lstsq(d.B.T, grad, rcond=None)[0]
    np.testing.assert_allclose(grad, proj, atol=1e-10)


def test_kappa_xy_is_the_opapc_order():
    # the δ definitions' consistency check in case (ii): √κ_xy = (L_xy/μ_xy)·√(L_x/μ_x), OPAPC's B-products
    for mu_x, mu_xy in [(0.01, 0.1), (0.04, 0.25), (0.0025, 0.05)]:
        p = make(mu_x=mu_x, mu_xy=mu_xy)
        assert math.sqrt(p.kappa_xy) == pytest.approx((1.0 / mu_xy) * math.sqrt(1.0 / mu_x), rel=1e-9)
        assert p.kappa_x == pytest.approx(1.0 / mu_x) and p.kappa_y == 0.0


def test_instances_come_from_the_run_seed():
    assert_seeded(build, Config(d_x=10, d_y=5), lambda s: RunContext(seed=s).for_task())


@pytest.mark.parametrize("bad", [{"d_y": 50}, {"mu_x": 0.0}, {"mu_xy": 0.0}])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        make(**bad)
