"""Extragradient: linear in the paper's new class (its claim 2), κ¹ gradients, (L/μ)² products."""

import pytest

from methods.saddle import extragradient
from tests.methods.saddle._helpers import loglog_slope, make, mean_metric, run


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_linear_convergence_in_the_new_class(aligned, seed):
    result, s = run(extragradient, make("coupling_curvature", seed, aligned=aligned))
    assert result.stop_reason == "target"
    assert s["log10_slope_grad_f"] < 0
    assert s["r2_grad_f"] > 0.99 and s["r2_tail_grad_f"] > 0.99


def test_two_calls_of_each_oracle_per_iteration():
    result, _ = run(extragradient, make("sc_sc", d=8), max_calls=10**9)
    h = result.history
    assert h[1, :4].tolist() == [2, 2, 2, 2] and h[2, :4].tolist() == [4, 4, 4, 4]


def test_gradient_calls_grow_like_kappa_not_its_square_root():
    kappas, gf = [], []
    for mu_xy in (0.25, 0.125, 0.0625):
        kappas.append(make("coupling_curvature", d=8, aligned=True, mu_xy=mu_xy).kappa_x)
        gf.append(mean_metric(extragradient, "coupling_curvature", "grad_f_calls", seeds=[0], aligned=True,
                              mu_xy=mu_xy))
    assert loglog_slope(kappas, gf) == pytest.approx(1.0, abs=0.15)   # measured 1.03


def test_bilinear_rate_is_quadratic_in_the_condition_number():
    conds = [4.0, 8.0, 16.0]
    mv = [mean_metric(extragradient, "bilinear", "matvec_calls", seeds=[0], mu_xy=1 / c) for c in conds]
    assert loglog_slope(conds, mv) == pytest.approx(2.0, abs=0.2)
