"""OPAPC (Salim et al. 2022) on the linearly constrained regime: optimal √κ gradients and
(L_xy/μ_xy)√κ products; skipped elsewhere."""

import pytest

from methods.saddle import opapc
from tests.methods.saddle._helpers import loglog_slope, make, mean_metric, run


def test_converges_on_the_constrained_problem_with_one_gradient_of_g():
    result, s = run(opapc, make("constrained"))
    assert result.stop_reason == "target"
    assert s["grad_g_calls"] == 1                     # g affine: ∇g read once, the right-hand side b
    assert s["r2_tail_grad_f"] > 0.95


def test_gradient_calls_scale_like_sqrt_kappa():
    kappas = [25.0, 100.0, 400.0]
    gf = [mean_metric(opapc, "constrained", "grad_f_calls", seeds=[0, 1], mu_x=1 / k) for k in kappas]
    assert loglog_slope(kappas, gf) == pytest.approx(0.5, abs=0.15)   # measured 0.54


def test_products_scale_like_the_coupling_condition_times_sqrt_kappa():
    conds = [4.0, 8.0, 16.0]
    mv = [mean_metric(opapc, "constrained", "matvec_calls", seeds=[0, 1], mu_xy=1 / c) for c in conds]
    assert loglog_slope(conds, mv) == pytest.approx(1.0, abs=0.2)    # √κ_xy ∝ L_xy/μ_xy at fixed κ


@pytest.mark.parametrize("regime,reason", [("sc_sc", "g affine"), ("bilinear", "strongly convex"),
                                           ("coupling_curvature", "g affine")])
def test_skipped_outside_its_regime(regime, reason):
    assert reason in opapc.skip(make(regime, d=8), opapc.Config())
