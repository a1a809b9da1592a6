"""R1, SC-SC instance: exact saddle point, constants, and the singular-B default (the paper's special
case (i))."""

import math

import pytest

from bench.context import RunContext
from tasks.saddle.saddle_sc_sc import Config, build
from tests.tasks.saddle._checks import assert_constants_match_the_spectra, assert_exact_saddle_point, assert_seeded


def make(**overrides):
    return build(Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("overrides", [{}, {"mu_xy": 0.1}, {"d": 200}])
def test_kkt_solution_is_the_saddle_point(overrides):
    p = make(**overrides)
    assert_exact_saddle_point(p)
    assert_constants_match_the_spectra(p)


def test_default_is_the_classical_sc_sc_case_with_singular_coupling():
    p = make()
    assert p.regime == "sc_sc" and p.d_x == p.d_y == 50
    assert (p.mu_x, p.mu_y, p.L_x, p.L_y, p.L_xy) == (0.01, 0.01, 1.0, 1.0, 1.0)
    assert p.mu_xy == p.mu_yx == 0.0
    # κ_xy = L_xy²/(μ_x μ_y): √κ_xy = L_xy/√(μ_x μ_y), the SC-SC lower bound's coupling term
    assert math.sqrt(p.kappa_xy) == pytest.approx(100.0) and p.kappa_x == pytest.approx(100.0)


def test_instances_come_from_the_run_seed():
    assert_seeded(build, Config(d=10), lambda s: RunContext(seed=s).for_task())


@pytest.mark.parametrize("bad", [{"mu_x": 0.0}, {"mu_y": 2.0}, {"mu_xy": 2.0}, {"d": 1}, {"target": 2.0}])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        make(**bad)
