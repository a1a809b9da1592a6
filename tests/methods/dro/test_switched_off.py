"""The KG-WDRO methods' SWITCHED_OFF settings (bench/switches.py): without knowledge each is vanilla WDRO.

Strong and multi-source transfer with Θ empty (no knowledge direction in the cost) are wdro bit for bit, on every
solver path (p = 2 ridge path, p = 1 and classification through cvxpy); weak transfer at the declared λ (knowledge
weight w = 1/λ ≈ 0) agrees with wdro to rounding.
"""

from dataclasses import replace

import numpy as np
import pytest

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.dro import kg_wdro_multi, kg_wdro_strong, kg_wdro_weak, wdro
from tests.methods.dro.test_kg_wdro import make_problem

GRID = {"n_delta": 4}  # a short δ grid


def run(module, problem, **config):
    return module.solve(problem, module.Config(**GRID, **config), RunContext(seed=0))


@pytest.mark.parametrize("module,sources", [(kg_wdro_strong, 1), (kg_wdro_multi, 2)], ids=["strong", "multi"])
@pytest.mark.parametrize("kind,p", [("regression", 2), ("regression", 1), ("classification", 1)])
def test_knowledge_guided_wdro_without_knowledge_is_wdro(module, sources, kind, p):
    (switch,) = Registry.discover().switched_off(module.__name__.rsplit(".", 1)[1])
    assert (switch.method, switch.config) == ("wdro", {})
    problem = make_problem(kind=kind, n=30, d=5, m=sources, seed=3, p=p)
    off = run(module, replace(problem, theta=np.zeros((problem.dim, 0))))
    plain = run(wdro, problem)
    assert np.array_equal(off.coef, plain.coef) and off.tuning == plain.tuning
    assert not np.array_equal(run(module, problem).coef, plain.coef)  # the knowledge moves the fit


def test_weak_transfer_at_the_switched_off_weight_is_wdro():
    (switch,) = Registry.discover().switched_off("kg_wdro_weak")
    problem = make_problem(n=30, d=5, seed=4, p=2)
    off = run(kg_wdro_weak, problem, **switch.config)
    plain = run(wdro, problem, p=2)
    assert off.tuning == plain.tuning
    np.testing.assert_allclose(off.coef, plain.coef, rtol=1e-9, atol=1e-12)
    assert not np.allclose(run(kg_wdro_weak, problem, lam=1.0).coef, plain.coef, rtol=1e-3)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for name, task in (("kg_wdro_strong", "strong_transfer_logistic"), ("kg_wdro_multi", "multi_source_linear"),
                       ("kg_wdro_weak", "weak_transfer_linear")):
        for s in registry.switched_off(name):
            make_cell(registry, Entry(s.method, s.config), Entry(task, {}), 0)
    for name in ("wdro", "target_lasso", "target_logistic", "target_ridge", "trans_glm", "trans_lasso", "trans_ridge"):
        assert isinstance(registry.switched_off(name), str)
