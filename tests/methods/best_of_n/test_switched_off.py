"""bon_estimator's SWITCHED_OFF (bench/switches.py): the estimator D̂(ε, n) without its ε-correction is the formula.

On the continuous reference every best-of-n output has reference probability ε = 0, so the estimator's exact
expectation (samples = 0, the default) is bon_formula's log n − (n−1)/n to the last bit, and a sampled estimate, the
mean of M copies of it, is that to rounding (the estimator reports no win rate; the formula's n/(n+1) is not
compared). On a finite reference the correction moves it.
"""

import pytest

from bench.cells import Entry, make_cell
from bench.registry import Registry
from methods.best_of_n import bon_estimator, bon_formula
from tests.methods.best_of_n._util import continuous, problem, run


@pytest.mark.parametrize("n", [1, 2, 16, 1024])
def test_estimator_without_its_correction_is_the_formula(n):
    (switch,) = Registry.discover().switched_off("bon_estimator")
    assert (switch.method, switch.config) == ("bon_formula", {})
    formula, _, _ = run(bon_formula, continuous(n), seed=2)
    assert run(bon_estimator, continuous(n), seed=2)[0].kl == formula.kl
    assert run(bon_estimator, continuous(n), seed=2, samples=50)[0].kl == pytest.approx(formula.kl, rel=1e-15)


def test_the_correction_moves_the_estimate_on_a_finite_reference():
    prob = problem([0.5, 0.3, 0.2], n=16)
    assert run(bon_estimator, prob)[0].kl < run(bon_formula, prob)[0].kl


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for s in registry.switched_off("bon_estimator"):
        make_cell(registry, Entry(s.method, s.config), Entry("bon_uniform", {}), 0)
    for name in ("bon_exact", "bon_formula", "bon_simulation", "kl_regularized_optimum", "rewind_and_repeat"):
        assert isinstance(registry.switched_off(name), str)
