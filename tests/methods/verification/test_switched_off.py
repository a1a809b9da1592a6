"""PV's SWITCHED_OFF (bench/switches.py): with its branching heuristics replaced by random selection and longest-edge
splits, PV (and pv_longest_edge, whose selection is prob-mass) is pv_random bit for bit: same bounds, verdict and
iteration count on a small MiniACSIncome stand-in, same seed. Only the method's own clock differs."""

import pytest

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.verification import pv, pv_longest_edge, pv_random
from methods.verification._heuristics import longest_edge, random_branches
from tasks.verification.mini_acs_income import Config as ACS
from tasks.verification.mini_acs_income import build as mini_acs

SETTINGS = {"max_iterations": 12, "batch_size": 8}


def same(a, b) -> None:
    assert (a.verdict, a.bounds, a.target, a.iterations, a.certain) == (b.verdict, b.bounds, b.target, b.iterations,
                                                                         b.certain)


@pytest.fixture(scope="module")
def acs3():
    return mini_acs(ACS(variables=3), RunContext(0).for_task())


@pytest.mark.parametrize("module", [pv, pv_longest_edge], ids=["pv", "pv_longest_edge"])
def test_pv_without_its_heuristics_is_pv_random(acs3, module, monkeypatch):
    (switch,) = Registry.discover().switched_off(module.__name__.rsplit(".", 1)[1])
    assert (switch.method, switch.config) == ("pv_random", {})
    config = module.Config(**SETTINGS)
    with_heuristics = module.solve(acs3, config, RunContext(seed=4))
    monkeypatch.setattr(module, "prob_mass", random_branches)
    if module is pv:
        monkeypatch.setattr(pv, "smart_branching", lambda pb, chosen, bound: longest_edge(pb, chosen))
    off = module.solve(acs3, config, RunContext(seed=4))
    same(off, pv_random.solve(acs3, pv_random.Config(**SETTINGS), RunContext(seed=4)))
    assert with_heuristics.bounds != off.bounds  # the heuristics change the search


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for name in ("pv", "pv_longest_edge"):
        for s in registry.switched_off(name):
            make_cell(registry, Entry(s.method, s.config), Entry("mini_acs_income", {}), 0)
    for name in ("pv_ibp", "pv_random", "uniform_split", "monte_carlo", "enumeration"):
        assert isinstance(registry.switched_off(name), str)
