"""The baselines on instances with a known answer: CPDAG encodings, sort-and-regress, PC, GES,
DirectLiNGAM, CAM and NOTEARS-MLP's constraint."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.causal import _common, cam, direct_lingam, ges, notears_mlp, pc, r2_sortnregress, var_sortnregress
from tasks.causal import CausalProblem, score


def make(data, *edges):
    d = data.shape[1]
    adj = np.zeros((d, d), dtype=int)
    for i, j in edges:
        adj[i, j] = 1
    return CausalProblem(data=data, adjacency=adj, names=tuple(f"X{i}" for i in range(d)))


def test_causallearn_graph_encoding():
    g = np.zeros((4, 4))
    g[0, 1], g[1, 0] = -1, 1      # 0 → 1
    g[1, 2], g[2, 1] = -1, -1     # 1 — 2
    g[2, 3], g[3, 2] = 1, 1       # 2 ↔ 3
    assert _common.from_causallearn(g).tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]


def linear_chain(n=2000, seed=0, noise="normal"):
    rng = np.random.default_rng(seed)
    draw = (lambda: rng.standard_normal(n)) if noise == "normal" else (lambda: rng.uniform(-1, 1, n))
    x0 = draw()
    x1 = 1.5 * x0 + draw()
    x2 = -1.2 * x1 + draw()
    return np.column_stack([x0, x1, x2])


def test_r2_coefficients_are_regression_r2():
    data = linear_chain()
    want = []
    for v in range(3):
        others = np.column_stack([np.ones(len(data)), np.delete(data, v, axis=1)])
        resid = data[:, v] - others @ np.linalg.lstsq(others, data[:, v], rcond=None)[0]
        want.append(1 - resid.var() / data[:, v].var())
    assert np.allclose(_common.r2_coefficients(data), want)


def test_var_sort_recovers_a_chain_whose_variance_grows_and_r2_sort_is_scale_free():
    p = make(linear_chain(), (0, 1), (1, 2))
    out = var_sortnregress.solve(p, var_sortnregress.Config(), RunContext(0))
    assert out.order.tolist() == [0, 1, 2] and score(p, out)["shd"] == 0
    r2 = r2_sortnregress.solve(p, r2_sortnregress.Config(), RunContext(0))
    scaled = make(p.data * np.array([50.0, 0.1, 3.0]), (0, 1), (1, 2))
    assert r2_sortnregress.solve(scaled, r2_sortnregress.Config(), RunContext(0)).order.tolist() == r2.order.tolist()
    assert var_sortnregress.solve(scaled, var_sortnregress.Config(), RunContext(0)).order.tolist() != [0, 1, 2]


def test_pc_and_ges_return_the_chain_cpdag_and_orient_a_collider():
    chain = make(linear_chain(), (0, 1), (1, 2))
    undirected_chain = [[0, 1, 0], [1, 0, 1], [0, 1, 0]]       # the chain's Markov class: no v-structure
    assert pc.solve(chain, pc.Config(), RunContext(0)).adjacency.tolist() == undirected_chain
    assert ges.solve(chain, ges.Config(), RunContext(0)).adjacency.tolist() == undirected_chain
    assert score(chain, pc.solve(chain, pc.Config(), RunContext(0)))["shd"] == 0
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 2000))
    collider = make(np.column_stack([x, y, x - y + rng.standard_normal(2000)]), (0, 2), (1, 2))
    for solver, cfg in ((pc, pc.Config()), (ges, ges.Config())):
        assert solver.solve(collider, cfg, RunContext(0)).adjacency.tolist() == collider.adjacency.tolist()


def test_direct_lingam_recovers_a_non_gaussian_linear_chain():
    p = make(linear_chain(noise="uniform"), (0, 1), (1, 2))
    out = direct_lingam.solve(p, direct_lingam.Config(), RunContext(0))
    assert out.order.tolist() == [0, 1, 2] and out.adjacency.tolist() == p.adjacency.tolist()


def test_cam_orders_an_additive_chain_and_prunes_the_shortcut():
    rng = np.random.default_rng(4)
    n = 1000
    x0 = rng.uniform(-2, 2, n)
    x1 = x0**2 + 0.5 * rng.standard_normal(n)          # strongly identifiable (not invertible)
    x2 = np.sin(2 * x1) + 0.3 * rng.standard_normal(n)
    p = make(np.column_stack([x2, x0, x1]), (1, 2), (2, 0))  # columns shuffled: truth x0 → x1 → x2
    out = cam.solve(p, cam.Config(), RunContext(0))
    assert out.order.tolist() == [1, 2, 0]
    assert out.adjacency.tolist() == p.adjacency.tolist()           # the greedy 1 → 0 edge is pruned
    unpruned = cam.solve(p, cam.Config(pruning=False), RunContext(0))
    assert unpruned.adjacency.sum() == 3                            # IncEdge alone fills the order


def test_notears_model_excludes_self_loops_and_h_vanishes_only_on_dags():
    model = notears_mlp._Model(3, 4, torch.Generator().manual_seed(0))
    assert np.all(model.x0 >= np.array([-np.inf if b[0] is None else b[0] for b in model.bounds]))
    wp, _, wn, *_ = model.unpack(torch.from_numpy(model.x0))
    assert torch.all(torch.diagonal(model.adjacency_sq(wp, wn)) == 0)
    flat = np.zeros_like(model.x0)
    assert notears_mlp._h_value(model, flat)[0] == pytest.approx(0.0, abs=1e-12)
    w = np.zeros((3, 4, 3))              # [j, m, i]: input i of MLP j
    w[1, :, 0] = 1.0                     # 0 → 1
    w[2, :, 1] = 1.0                     # 1 → 2: a DAG, h = 0
    flat[: w.size] = w.reshape(-1)
    assert notears_mlp._h_value(model, flat)[0] == pytest.approx(0.0, abs=1e-9)
    w[0, :, 2] = 1.0                     # 2 → 0 closes a cycle, h > 0
    flat[: w.size] = w.reshape(-1)
    h, weights = notears_mlp._h_value(model, flat)
    assert h > 1.0 and weights[0, 1] == pytest.approx(2.0)          # ‖four unit weights‖₂ = 2


def test_notears_learns_a_strong_nonlinear_edge():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 300)
    p = make(np.column_stack([x, x**2 + 0.3 * rng.standard_normal(300)]), (0, 1))
    out = notears_mlp.solve(p, notears_mlp.Config(max_iter=20), RunContext(0))
    assert out.adjacency.tolist() == [[0, 1], [0, 0]]


@pytest.mark.parametrize("module,field,value", [(pc, "ci_test", "gsq"), (ges, "score_func", "bdeu"),
                                                (direct_lingam, "measure", "hsic")])
def test_unknown_options_list_the_allowed(module, field, value):
    with pytest.raises(ValueError, match="allowed"):
        module.Config(**{field: value})
