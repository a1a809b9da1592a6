"""bobw_po's SWITCHED_OFF (bench/switches.py): without its dual, PDB-PS is cmdp_unconstrained_po.

Where the dual never leaves 0 (a threshold α above any episode's cost, so ĉ − α < 0 every episode), bobw_po plays
cmdp_unconstrained_po's policies to the last bit; at the world's threshold the dual moves and the policies differ.
"""

from dataclasses import replace

import numpy as np

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.cmdp import bobw_po, cmdp_unconstrained_po
from tasks.cmdp import cmdp_adversarial

T = 300


def test_bobw_po_without_its_dual_is_unconstrained_po():
    (switch,) = Registry.discover().switched_off("bobw_po")
    assert (switch.method, switch.config) == ("cmdp_unconstrained_po", {})
    problem = cmdp_adversarial.build(cmdp_adversarial.Config(T=T), RunContext(seed=0).for_task())
    slack = replace(problem, alpha=np.full(problem.m, problem.n_layers + 1.0))  # a cost sum is at most L
    off = bobw_po.solve(slack, bobw_po.Config(), RunContext(seed=5))
    plain = cmdp_unconstrained_po.solve(slack, cmdp_unconstrained_po.Config(), RunContext(seed=5))
    assert not off.lambdas.any() and plain.lambdas is None
    assert np.array_equal(off.policies, plain.policies)
    bound = bobw_po.solve(problem, bobw_po.Config(), RunContext(seed=5))
    assert bound.lambdas.any() and not np.array_equal(bound.policies, plain.policies)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for s in registry.switched_off("bobw_po"):
        make_cell(registry, Entry(s.method, s.config), Entry("cmdp_stochastic", {}), 0)
    for name in ("cmdp_unconstrained_po", "cmdp_full_feedback", "cmdp_primal_dual", "cmdp_ucb_oracle"):
        assert isinstance(registry.switched_off(name), str)
