"""Simultaneous GDA: linear under strong monotonicity, divergent on the bilinear game."""

import numpy as np
import pytest

from methods.saddle import saddle_gda
from tests.methods.saddle._helpers import make, run


def test_linear_in_the_sc_sc_case_with_the_classical_step():
    p = make("sc_sc", d=10)
    assert saddle_gda.step_size(p, saddle_gda.Config()) == pytest.approx(0.01 / 4)  # μ/L_G², L_G = 2
    result, s = run(saddle_gda, p)
    assert result.stop_reason == "target" and s["r2_tail_grad_f"] > 0.99


def test_diverges_on_the_bilinear_game():
    p = make("bilinear", d=10)
    assert "diverges" in saddle_gda.skip(p, saddle_gda.Config())
    assert saddle_gda.skip(make("constrained", d_x=8, d_y=4), saddle_gda.Config()) is None
    result, s = run(saddle_gda, p)
    assert result.stop_reason == "diverged" and s["reached"] == 0.0
    errors = result.history[:, 4]
    assert errors[-1] > 1e12 and np.all(np.diff(errors[1:]) > 0)  # monotone growth: |1 − iησ| > 1


def test_converges_in_the_new_class_with_the_effective_step():
    p = make("coupling_curvature", d=10)
    assert saddle_gda.step_size(p, saddle_gda.Config()) == pytest.approx(min(p.delta_x, p.delta_y) / 4)
    result, s = run(saddle_gda, p, max_calls=100_000)
    # slow (164k ∇f calls to 1e-8 on this d = 10 instance): check the linear decrease has begun
    assert s["final_rel_error"] < 0.05 and s["log10_slope_grad_f"] < 0 and s["r2_grad_f"] > 0.95
