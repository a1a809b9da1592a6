"""MiniACSIncome stand-in (tasks/verification/mini_acs_income.py): the paper's input dimensions,
deterministic builds per seed, and the enumerated ground truth against Monte-Carlo (5σ)."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.verification._formula import holds
from tasks.verification.mini_acs_income import Config, build, population


def test_input_dimensions_are_the_papers():
    dims = [population(k, np.random.default_rng(0)).space.dim for k in range(1, 9)]
    assert dims == [2, 10, 34, 35, 40, 49, 67, 68]


def test_build_is_deterministic_per_seed_and_truth_matches_sampling():
    a, b = (build(Config(variables=3), RunContext(1).for_task()) for _ in range(2))
    assert all(torch.equal(p, q) for (W, c), (V, d) in zip(a.network.layers, b.network.layers, strict=True)
               for p, q in ((W, V), (c, d)))
    assert a.exact is not None and a.expected is not None
    x = torch.as_tensor(a.population.sample(400_000, np.random.default_rng(2)))
    y = a.network.forward(x)
    for p in a.probabilities:
        g = holds(p.given, y, x)
        est, n = float(holds(p.event, y, x)[g].double().mean()), int(g.sum())
        assert abs(est - a.exact[p.name]) <= 5 * np.sqrt(a.exact[p.name] * (1 - a.exact[p.name]) / n) + 1e-9


def test_large_spaces_have_no_enumerated_truth():
    problem = build(Config(variables=4, exact_limit=1000), RunContext(0).for_task())
    assert problem.exact is None and problem.expected is None
    with pytest.raises(ValueError, match="1..8"):
        Config(variables=9)
