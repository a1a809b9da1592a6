"""R3, pure bilinear instance: affine f and g, square nonsingular B (the paper's special case (iii))."""

import math

import numpy as np
import pytest

from bench.context import RunContext
from tasks.saddle.saddle_bilinear import Config, build
from tests.tasks.saddle._checks import assert_constants_match_the_spectra, assert_exact_saddle_point, assert_seeded


def make(**overrides):
    return build(Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("overrides", [{}, {"mu_xy": 0.01}, {"d": 100}])
def test_kkt_solution_is_the_saddle_point(overrides):
    p = make(**overrides)
    assert_exact_saddle_point(p)
    assert_constants_match_the_spectra(p)


def test_the_game_is_purely_bilinear_and_its_solution_is_explicit():
    p = make()
    d = p.data
    assert not d.A.any() and not d.C.any()
    assert p.L_x == p.L_y == p.mu_x == p.mu_y == 0.0
    # Bᵀy* = a and Bx* = −c
    np.testing.assert_allclose(p.x_star, np.linalg.solve(d.B, -d.c), atol=1e-10)
    np.testing.assert_allclose(p.y_star, np.linalg.solve(d.B.T, d.a), atol=1e-10)
    # with the effective smoothness L_x = L_y = μ_xy: √κ_xy = L_xy/μ_xy, the bilinear bound
    assert math.sqrt(p.kappa_xy) == pytest.approx(10.0) and p.kappa_x == pytest.approx(1.0)


def test_instances_come_from_the_run_seed():
    assert_seeded(build, Config(d=10), lambda s: RunContext(seed=s).for_task())


@pytest.mark.parametrize("bad", [{"mu_xy": 0.0}, {"mu_xy": 2.0}, {"d": 1}])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        make(**bad)
