"""Linearised PDHG / Condat–Vũ: the spec's safe steps converge linearly in every regime."""

import numpy as np
import pytest

from methods.saddle import pdhg
from tests.methods.saddle._helpers import make, run


@pytest.mark.parametrize("regime", ["sc_sc", "constrained", "bilinear", "coupling_curvature"])
def test_converges_linearly(regime):
    result, s = run(pdhg, make(regime))
    assert result.stop_reason == "target" and s["r2_tail_grad_f"] > 0.99


def test_one_call_of_each_oracle_per_iteration_and_the_first_step_by_hand():
    p = make("sc_sc", d=8)
    result, _ = run(pdhg, p, max_calls=10**9)
    h = result.history
    assert h[1, :4].tolist() == [1, 1, 1, 1]
    d = p.data
    tau, sigma = 1 / (2 * p.L_x + 2 * p.L_xy), 1 / (2 * p.L_y + 2 * p.L_xy)
    x1 = -tau * (-d.a)                           # x0 = y0 = 0
    y1 = sigma * (d.B @ (2 * x1) - (-d.c))
    err = (np.sum((x1 - p.x_star) ** 2) + np.sum((y1 - p.y_star) ** 2)) / (
        np.sum(p.x_star**2) + np.sum(p.y_star**2))
    assert h[1, 4] == pytest.approx(err, rel=1e-12)


def test_steps_satisfy_condats_condition():
    p = make("coupling_curvature", d=8)
    tau, sigma = 1 / (2 * p.L_x + 2 * p.L_xy), 1 / (2 * p.L_y + 2 * p.L_xy)
    assert (1 / tau - p.L_x / 2) * (1 / sigma - p.L_y / 2) > p.L_xy**2
