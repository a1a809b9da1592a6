"""APDG (Kovalev, Gasnikov & Richtárik 2022): linear in all four cases, not accelerated in B."""

import dataclasses

import numpy as np
import pytest

from methods.saddle import apdg
from tasks.saddle import make_problem, spectrum
from tests.methods.saddle._helpers import loglog_slope, make, mean_metric, run


@pytest.mark.parametrize("regime", ["sc_sc", "constrained", "bilinear", "coupling_curvature"])
def test_converges_linearly_in_every_regime(regime):
    result, s = run(apdg, make(regime))
    assert result.stop_reason == "target"
    assert s["r2_tail_grad_f"] > 0.99 and s["log10_slope_grad_f"] < 0
    assert s["grad_f_calls"] == s["grad_g_calls"]                 # one of each per iteration
    assert s["matvec_calls"] == pytest.approx(4 * s["grad_f_calls"], abs=1)


def test_case_c_on_the_mirrored_constrained_problem():
    # μ_y > 0, f affine, B tall with full column rank: the x↔y mirror of R2 (case c)
    rng = np.random.default_rng(3)
    p = make_problem("mirror", lam_A=np.zeros(6), lam_C=spectrum(12, 0.01, 1.0), s=spectrum(6, 0.1, 1.0),
                     d_x=6, d_y=12, rng=rng, target=1e-8)
    assert p.mu_yx > 0 and p.mu_xy == 0 and p.mu_x == 0
    result, s = run(apdg, p)
    assert result.stop_reason == "target"


def test_gradient_count_is_tied_to_the_coupling_in_the_bilinear_case():
    # no Chebyshev acceleration: products (and gradients) grow like (L_xy/μ_xy)²
    conds = [4.0, 8.0, 16.0]
    mv = [mean_metric(apdg, "bilinear", "matvec_calls", seeds=[0], mu_xy=1 / c) for c in conds]
    assert loglog_slope(conds, mv) == pytest.approx(2.0, abs=0.2)


def test_reported_sequence_switch():
    p = make("coupling_curvature", d=10)
    a, _ = run(apdg, p)
    b, _ = run(apdg, p, output="f")
    assert a.stop_reason == b.stop_reason == "target"
    assert not np.array_equal(a.history[:, 4], b.history[:, 4])
    with pytest.raises(ValueError, match="output"):
        apdg.Config(output="avg")


def test_skips_when_no_case_applies():
    p = make("sc_sc", d=4)                     # B singular: only case (a) applies
    assert apdg.skip(p, apdg.Config()) is None
    p = dataclasses.replace(p, mu_x=0.0, mu_y=0.0)
    assert "none of this instance's cases" in apdg.skip(p, apdg.Config())
