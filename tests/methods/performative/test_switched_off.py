"""The performative methods' SWITCHED_OFF settings (bench/switches.py) remove exactly the paper's mechanism.

Each test runs the switched-off method and the method it then equals on one tiny instance with the same seed and
compares the results exactly: the iterates (θ_T and the recorded ones) to the last bit. What the results declare to
the scorer ({"c": c}: which fixed point to expect) is each method's own and is not compared.
"""

import numpy as np

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.performative import dicesgd, pcsgd, pcsgd_nonoptimal_step, pcsgd_optimal_step, sgd
from tasks.performative import performative as quadratic

T = 3000  # short runs: equality is per step


def make(**overrides):
    return quadratic.build(quadratic.Config(**overrides), RunContext(seed=0).for_task())


def same_iterates(a, b) -> None:
    assert np.array_equal(a.theta, b.theta)
    assert np.array_equal(a.steps, b.steps) and np.array_equal(a.iterates, b.iterates)


def switch(name: str) -> dict:
    (only,) = Registry.discover().switched_off(name)
    return only.config


def test_pcsgd_with_clipping_off_is_sgd():
    problem = make(beta=0.05)
    c = switch("pcsgd")["c"]
    assert c > problem.gradient_bound  # clip_c never binds on X
    off = pcsgd.solve(problem, pcsgd.Config(T=T, c=c), RunContext(seed=4))
    same_iterates(off, sgd.solve(problem, sgd.Config(T=T), RunContext(seed=4)))
    # and clipping does bind at the default c: the switch changes the run
    assert not np.array_equal(pcsgd.solve(problem, pcsgd.Config(T=T), RunContext(seed=4)).theta, off.theta)


def test_dicesgd_without_error_feedback_is_pcsgd():
    problem = make(beta=0.05)
    off = dicesgd.solve(problem, dicesgd.Config(T=T, **switch("dicesgd")), RunContext(seed=2))
    same_iterates(off, pcsgd.solve(problem, pcsgd.Config(T=T, c=dicesgd.Config().C1), RunContext(seed=2)))
    assert not np.array_equal(dicesgd.solve(problem, dicesgd.Config(T=T), RunContext(seed=2)).theta, off.theta)


def test_optimal_and_nonoptimal_steps_differ_only_in_the_modulus():
    switches = Registry.discover().switched_off("pcsgd_optimal_step")
    assert [(s.method, s.config) for s in switches] == [("pcsgd_nonoptimal_step", {})]
    config = pcsgd_optimal_step.Config(T=T)
    flat = make(beta=0.0)  # μ̃ = μ: the shift the Opt rule is aware of is absent
    same_iterates(pcsgd_optimal_step.solve(flat, config, RunContext(seed=1)),
                  pcsgd_nonoptimal_step.solve(flat, config, RunContext(seed=1)))
    shifted = make(a=1.0, b=2.0, beta=0.9)
    assert not np.array_equal(pcsgd_optimal_step.solve(shifted, config, RunContext(seed=1)).theta,
                              pcsgd_nonoptimal_step.solve(shifted, config, RunContext(seed=1)).theta)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for name in ("dicesgd", "pcsgd", "pcsgd_optimal_step"):
        for s in registry.switched_off(name):
            make_cell(registry, Entry(s.method, s.config), Entry("performative", {"beta": 0.05}), 0)
    for name in ("sgd", "pcsgd_nonoptimal_step"):
        assert isinstance(registry.switched_off(name), str)
