"""The causal tasks: graph generators, SEMs, the Sachs loader and the Fig. 1 toy SEMs."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from bench.context import RunContext
from bench.errors import BenchError
from tasks.causal import _sem, anm_synthetic, identifiability_toy, is_dag, sachs


def ctx(seed=0):
    return RunContext(seed).for_task()


def test_erdos_renyi_edge_count_matches_gcastle_expectation():
    rng = np.random.default_rng(0)
    d, n_edges = 10, 20
    counts = []
    for _ in range(400):
        a = _sem.erdos_renyi(rng, d, n_edges)
        assert is_dag(a)
        counts.append(a.sum())
    # each of d(d−1)/2 lower-triangular entries with probability 2·n_edges/d²: mean n_edges·(d−1)/d = 18
    assert np.mean(counts) == pytest.approx(18.0, abs=0.4)


def test_scale_free_has_m_edges_per_new_node_and_is_acyclic():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = _sem.scale_free(rng, 10, 20)          # m = 2: node 1 sends 1 edge, nodes 2..9 two each
        assert is_dag(a) and a.sum() == 1 + 2 * 8


def test_roots_are_pure_noise_and_children_depend_on_parents():
    rng = np.random.default_rng(2)
    a = np.array([[0, 1], [0, 0]])
    for sem in _sem.SEMS:
        x = _sem.simulate(rng, a, 4000, sem, 1.0)
        assert x[:, 0].std() == pytest.approx(1.0, abs=0.05)
        # residual of the child around a binned conditional mean is the unit noise
        bins = np.digitize(x[:, 0], np.quantile(x[:, 0], np.linspace(0, 1, 41)[1:-1]))
        means = np.array([x[bins == b, 1].mean() for b in range(40)])
        assert np.std(x[:, 1] - means[bins]) == pytest.approx(1.0, abs=0.1)


def test_synthetic_task_sizes_and_standardisation():
    p = anm_synthetic.build(anm_synthetic.Config(d=6, density=2, n=300, sem="mlp", standardize=True), ctx())
    assert p.data.shape == (300, 6) and p.standardized
    assert np.allclose(p.data.mean(axis=0), 0) and np.allclose(p.data.std(axis=0), 1)
    raw = anm_synthetic.build(anm_synthetic.Config(d=6, density=2, n=300, sem="mlp"), ctx())
    assert np.array_equal(raw.adjacency, p.adjacency)
    assert np.allclose(_sem.standardize(raw.data), p.data)


@pytest.mark.parametrize("field,value", [("graph", "tree"), ("sem", "linear")])
def test_unknown_config_values_list_the_allowed(field, value):
    with pytest.raises(ValueError, match="allowed"):
        anm_synthetic.Config(**{field: value})
    with pytest.raises(ValueError, match="allowed"):
        identifiability_toy.Config(mechanism="medium")


def test_sachs_first_853_rows_and_the_16_edge_truth():
    p = sachs.build(sachs.Config(), ctx())
    assert p.data.shape == (853, 11) and p.names == sachs.NAMES
    assert p.adjacency.sum() == 16
    names = list(p.names)
    assert p.adjacency[names.index("PKC"), names.index("praf")] == 1
    assert p.adjacency[names.index("PIP3"), names.index("PIP2")] == 1
    assert p.adjacency[names.index("PIP3"), names.index("plcg")] == 0
    csv = pd.read_csv(sachs.data_path(None))
    assert np.array_equal(p.data[0], csv.iloc[0][list(sachs.NAMES)].to_numpy(dtype=float))
    assert np.array_equal(p.data[-1], csv.iloc[852][list(sachs.NAMES)].to_numpy(dtype=float))


def test_sachs_from_a_user_path_and_a_clear_error_when_absent(tmp_path):
    csv = pd.read_csv(sachs.data_path(None)).iloc[:50]
    path = tmp_path / "sachs.csv"
    csv[list(reversed(sachs.NAMES))].to_csv(path, index=False)   # column order does not matter
    p = sachs.build(sachs.Config(n_samples=50, path=str(path)), ctx())
    assert np.array_equal(p.data, csv[list(sachs.NAMES)].to_numpy(dtype=float))
    with pytest.raises(BenchError, match="no file at"):
        sachs.build(sachs.Config(path=str(tmp_path / "missing.csv")), ctx())
    with pytest.raises(BenchError, match="853 asked"):
        sachs.build(sachs.Config(path=str(path)), ctx())


def test_toy_sem_equations_and_shuffling():
    base = identifiability_toy.Config(n=500, noise_scale=1e-9)
    for mechanism, g in [("weak", lambda x: x**3 + x), ("strong", lambda x: x**2)]:
        for seed in range(4):
            p = identifiability_toy.build(dataclasses.replace(base, mechanism=mechanism), ctx(seed))
            cause, effect = np.argwhere(p.adjacency)[0]
            assert (p.names[cause], p.names[effect]) == ("x", "y")
            assert np.allclose(p.data[:, effect], g(p.data[:, cause]), atol=1e-6)
    two = identifiability_toy.build(dataclasses.replace(base, parents=2), ctx())
    z = two.names.index("z")
    assert two.adjacency[:, z].sum() == 2 and two.adjacency.sum() == 2
    shuffles = {identifiability_toy.build(base, ctx(s)).names for s in range(8)}
    assert shuffles == {("x", "y"), ("y", "x")}
