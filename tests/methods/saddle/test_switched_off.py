"""The saddle methods' SWITCHED_OFF settings (bench/switches.py): bgk_separated without its Chebyshev-preconditioned
inner loop (side = "none") is APDG, bit for bit, on every regime it runs in."""

import numpy as np
import pytest

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.saddle import apdg, bgk_separated
from tests.methods.saddle._helpers import make

METHODS = ("apdg", "bgk_separated", "extragradient", "opapc", "optimistic_gda", "pdhg", "saddle_gda")


@pytest.mark.parametrize("regime", ["coupling_curvature", "sc_sc"])
def test_bgk_separated_without_preconditioning_is_apdg(regime):
    (switch,) = Registry.discover().switched_off("bgk_separated")
    problem = make(regime, seed=1)
    budget = 20_000  # a short run: equality is per iteration
    off = bgk_separated.solve(problem, bgk_separated.Config(max_calls=budget, **switch.config), RunContext(seed=3))
    plain = apdg.solve(problem, apdg.Config(max_calls=budget, output=bgk_separated.Config().output),
                       RunContext(seed=3))
    assert np.array_equal(off.x, plain.x) and np.array_equal(off.y, plain.y)
    assert np.array_equal(off.history, plain.history) and off.stop_reason == plain.stop_reason
    if regime == "coupling_curvature":  # where the default preconditions, the switch changes the run
        on = bgk_separated.solve(problem, bgk_separated.Config(max_calls=budget), RunContext(seed=3))
        assert not np.array_equal(on.history, off.history)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for s in registry.switched_off("bgk_separated"):
        make_cell(registry, Entry(s.method, s.config), Entry("saddle_coupling_curvature", {}), 0)
    for name in METHODS[:1] + METHODS[2:]:
        assert isinstance(registry.switched_off(name), str)
