"""Optimistic GDA: one call of each oracle per iteration, linear where extragradient is."""

import pytest

from methods.saddle import extragradient, optimistic_gda
from tests.methods.saddle._helpers import make, run


@pytest.mark.parametrize("regime", ["sc_sc", "constrained", "bilinear", "coupling_curvature"])
def test_converges_linearly(regime):
    result, s = run(optimistic_gda, make(regime))
    assert result.stop_reason == "target" and s["r2_tail_grad_f"] > 0.99


def test_one_call_of_each_oracle_per_iteration():
    result, _ = run(optimistic_gda, make("sc_sc", d=8), max_calls=10**9)
    h = result.history
    assert h[1, :4].tolist() == [1, 1, 1, 1] and h[5, :4].tolist() == [5, 5, 5, 5]


def test_same_order_of_calls_as_extragradient():
    # η = 1/(4L_G) with one call vs η = 1/(2L_G) with two: about the same number of calls
    p = make("coupling_curvature", aligned=True)
    ours, eg = run(optimistic_gda, p)[1], run(extragradient, p)[1]
    assert ours["grad_f_calls"] == pytest.approx(eg["grad_f_calls"], rel=0.2)
