"""GENE's mechanism: OP_ij, the χ² test, Eq. 6, Algorithm 1's local optimum, the parent rules, batching."""

import itertools

import numpy as np
import pytest
import torch
from scipy.stats import chi2_contingency

from bench.context import RunContext
from methods.causal import _gene_common as g
from tasks.causal import reversals
from tasks.causal._sem import erdos_renyi


def code_move(order, point1, point2):
    """The authors' `move` (GENE.py), verbatim apart from names."""
    new_order = order.copy()
    if point1 < point2:
        new_order[point1:point2] = order[point1 + 1:point2 + 1]
        new_order[point2] = order[point1]
    else:
        new_order[point2 + 1:point1 + 1] = order[point2:point1]
        new_order[point2] = order[point1]
    return new_order


def test_move_is_the_codes_op_ij():
    assert g.move([0, 1, 2, 3, 4], 1, 3) == [0, 2, 3, 1, 4]
    assert g.move([0, 1, 2, 3, 4], 3, 1) == [0, 3, 1, 2, 4]
    order = np.array([5, 2, 0, 4, 1, 3])
    for i, j in itertools.permutations(range(6), 2):
        assert g.move(order, i, j) == code_move(order, i, j).tolist()


def test_chi2_pvalues_equal_scipy_on_histogram2d():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(30, 400))
        x = rng.standard_normal((n, 3))
        x[:, 2] = np.round(x[:, 2], 1)                     # ties on the bin edges
        r = x[:, 0] ** 2 + rng.standard_normal(n) * rng.random()
        want = [chi2_contingency(np.histogram2d(x[:, c], r, bins=[10, 10])[0] + 1e-8)[1] for c in range(3)]
        assert np.allclose(g.chi2_pvalues(x, r, 10), want, rtol=1e-9, atol=0)


def test_chi2_decisions_are_scale_invariant():
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, size=(800, 4))
    r = np.sin(2 * x[:, 0]) + 0.3 * rng.standard_normal(800)
    scales = rng.uniform(0.01, 100, size=4)
    base = g.chi2_pvalues(x, r, 10)
    assert base[0] < 0.05 and np.all(base[1:] > 1e-3)
    assert np.allclose(g.chi2_pvalues(x * scales, r * 37.5, 10), base, rtol=1e-8)


class StubFits:
    """A fits cache with hand-set R² and dependence counts (what OrderFitness and the rules read)."""

    def __init__(self, table):
        self.table, self.trained = table, []

    def get(self, node, inputs):
        return g.Fit(0.0, 0) if not inputs else g.Fit(*self.table.get((node, frozenset(inputs)), (0.0, 0)))

    def missing(self, keys):
        return []

    def train(self, keys):
        self.trained += list(keys)


def test_order_fitness_is_eq6_with_paper_or_code_denominator():
    fits = StubFits({(1, frozenset({0})): (0.8, 1), (2, frozenset({0, 1})): (0.6, 1)})
    paper = g.OrderFitness(fits, alpha=1.0, penalty_offset=1)
    code = g.OrderFitness(fits, alpha=1.0, penalty_offset=0)
    # positions 2 and 3 (1-based) have 1 and 2 predecessors, each with one dependent residual
    assert paper([0, 1, 2]) == pytest.approx(0.8 * (1 - 1 / 2) + 0.6 * (1 - 1 / 3))
    assert code([0, 1, 2]) == pytest.approx(0.8 * (1 - 1) + 0.6 * (1 - 1 / 2))
    assert g.OrderFitness(fits, 0.0, 1)([0, 1, 2]) == pytest.approx(1.4)


class RandomFitness:
    """A deterministic random score per (node, predecessor set), summed over positions."""

    def __init__(self, seed):
        self.rng, self.values = np.random.default_rng(seed), {}

    def needed(self, order):
        return []

    def train(self, keys):
        pass

    def __call__(self, order):
        keys = [(order[p], frozenset(order[:p])) for p in range(len(order))]
        return sum(self.values.setdefault(k, self.rng.random()) for k in keys)


@pytest.mark.parametrize("seed", range(5))
def test_greedy_search_never_decreases_and_ends_at_a_local_optimum(seed):
    fitness, ctx = RandomFitness(seed), RunContext(seed)
    start = list(np.random.default_rng(seed).permutation(6))
    order, value = g.greedy_order_search(fitness, start, ctx=ctx)
    curve = [v for _, v in ctx.curves["fitness"]]
    assert all(b > a for a, b in zip(curve, curve[1:], strict=False)) and curve[0] > fitness(start)
    assert value == fitness(order) == curve[-1]
    assert all(fitness(g.move(order, i, j)) <= value for i, j in itertools.permutations(range(6), 2))


class MinusRev:
    def __init__(self, adj):
        self.adj = adj

    def needed(self, order):
        return []

    def train(self, keys):
        pass

    def __call__(self, order):
        return -reversals(self.adj, np.asarray(order))


def test_greedy_search_reaches_a_true_order_when_fit_decreases_in_rev():
    # Theorem 4.3: a fitness strictly decreasing in Rev(G, π) leads OP_ij search to Rev = 0
    rng = np.random.default_rng(3)
    for _ in range(10):
        adj = erdos_renyi(rng, 7, 14)
        order, _ = g.greedy_order_search(MinusRev(adj), list(rng.permutation(7)))
        assert reversals(adj, np.asarray(order)) == 0


def test_least_pruning_and_forward_selection_by_hand():
    # node 2 after 0 and 1: R²({0,1}) = 0.9, R²({0}) = 0.89, R²({1}) = 0.5; node 1 after 0: R²({0}) = 0.015
    fits = StubFits({(2, frozenset({0, 1})): (0.9, 0), (2, frozenset({0})): (0.89, 0),
                     (2, frozenset({1})): (0.5, 0), (1, frozenset({0})): (0.015, 0)})
    pruned = g.least_pruning(fits, [0, 1, 2], theta=0.02)
    assert pruned.tolist() == [[0, 0, 1], [0, 0, 0], [0, 0, 0]]        # 1 → 2 and the weak 0 → 1 pruned
    assert g.least_pruning(fits, [0, 1, 2], theta=0.005).tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    forward = g.forward_selection(fits, [0, 1, 2], threshold=0.02)
    assert forward.tolist() == [[0, 0, 1], [0, 0, 0], [0, 0, 0]]      # gain 0.01 of adding 1 is below 0.02
    assert g.forward_selection(fits, [0, 1, 2], threshold=0.01).tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]


def test_batched_fits_equal_fits_trained_alone():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 4))
    x[:, 3] = np.tanh(x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.standard_normal(200)
    keys = [(3, frozenset({0, 1})), (3, frozenset({2})), (0, frozenset({1, 2, 3})), (1, frozenset({3}))]
    cfg = g.GeneConfig(epochs=60)
    together = g.MLPFits(x, cfg, torch.Generator().manual_seed(5))
    together.train(keys)
    for key in keys:
        alone = g.MLPFits(x, cfg, torch.Generator().manual_seed(5))
        alone.train([key])
        assert alone.get(*key).r2 == pytest.approx(together.get(*key).r2, abs=1e-4)
        assert alone.get(*key).dependent == together.get(*key).dependent
    assert together.get(3, frozenset({0, 1})).r2 > 0.9 > together.get(3, frozenset({2})).r2


def test_r2_is_in_sample_one_minus_mse_over_variance():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 2))
    x[:, 1] = 2 * x[:, 0] + rng.standard_normal(300)                   # best possible R² = 4/5
    fits = g.MLPFits(x, g.GeneConfig(epochs=300), torch.Generator().manual_seed(0))
    fits.train([(1, frozenset({0}))])
    assert fits.get(1, frozenset({0})).r2 == pytest.approx(0.8, abs=0.06)
    assert fits.get(1, frozenset()).r2 == 0.0


@pytest.mark.parametrize("field,value", [("alpha", -1.0), ("penalty_offset", 2), ("bins", 1), ("significance", 1.5)])
def test_bad_config_values_are_rejected(field, value):
    with pytest.raises(ValueError, match="need"):
        g.GeneConfig(**{field: value})
