"""The specification language (tasks/verification/_formula.py): satisfaction bounds, three-valued
logic and interval arithmetic against exhaustive point evaluation and hand-computed cases."""

import math

import torch

from tasks.verification._formula import (
    FALSE_,
    TRUE_,
    Not,
    PConst,
    Prob,
    all_of,
    any_of,
    decide,
    holds,
    inp,
    interval,
    out,
    sat_bounds,
    split_input_bounds,
)


def test_sat_bounds_contain_point_values_and_status_is_sound():
    g = torch.Generator().manual_seed(0)
    phi = any_of(all_of(out(0) < out(1), inp(0) >= 0.2), Not(out(2) - 2 * out(0) >= 0.5))
    y_lb = torch.randn(200, 3, generator=g, dtype=torch.float64)
    y_ub = y_lb + torch.rand(200, 3, generator=g, dtype=torch.float64)
    x_lb = torch.rand(200, 1, generator=g, dtype=torch.float64) - 0.3
    x_ub = x_lb + 0.2
    lo, hi, status = sat_bounds(phi, y_lb, y_ub, x_lb, x_ub)
    for _ in range(50):
        u, v = (torch.rand(200, 3, generator=g, dtype=torch.float64),
                torch.rand(200, 1, generator=g, dtype=torch.float64))
        y, x = y_lb + u * (y_ub - y_lb), x_lb + v * (x_ub - x_lb)
        s, _, _ = sat_bounds(phi, y, y, x, x)
        h = holds(phi, y, x)
        assert torch.all((lo <= s + 1e-12) & (s <= hi + 1e-12))
        assert torch.all(h[status == TRUE_]) and not torch.any(h[status == FALSE_])
    assert (status == 0).any() and (status != 0).any()


def test_strict_and_non_strict_differ_only_at_zero():
    y = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    x = torch.zeros(1, 1, dtype=torch.float64)
    assert holds(out(0) >= out(1), y, x).item() and not holds(out(0) > out(1), y, x).item()


def test_symbolic_input_bounds_are_split_off():
    rest, bounds = split_input_bounds(all_of(out(0) < out(1), inp(0) >= 18.0, 2 * inp(2) <= 1.0))
    assert bounds == [(0, 18.0, math.inf, False), (2, -math.inf, 0.5, False)]
    assert not isinstance(rest, type(all_of())) or len(rest.parts) == 1


def test_interval_arithmetic_and_three_valued_decisions():
    a, b = Prob("a", out(0) >= 0), Prob("b", out(0) >= 0)
    bounds = {"a": (0.4, 0.5), "b": (0.5, 0.8)}
    assert interval(a / b, bounds) == (0.4 / 0.8, 0.5 / 0.5)
    assert interval(a - b * 2 + PConst(1.0), bounds) == (0.4 - 1.6 + 1, 0.5 - 1.0 + 1)
    assert interval(a / b, {"a": (0.1, 0.2), "b": (0.0, 0.3)}) == (-math.inf, math.inf)
    assert decide(a / b > 0.4, bounds) is True     # ratio in [0.5, 1]
    assert decide(a / b > 0.6, bounds) is None
    assert decide(a / b > 1.0, bounds) is False
    assert decide(a / b >= 1.0, bounds) is None     # ratio may equal 1
    assert decide(a > b, {"a": (0.3, 0.3), "b": (0.3, 0.3)}) is False
