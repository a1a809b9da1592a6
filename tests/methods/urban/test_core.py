"""CoRE's mechanism against known answers: GAT layer vs a per-edge reference, the three losses, training."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import special_ortho_group

from bench.context import RunContext
from methods.urban import core
from methods.urban._encoder import GATLayer, align_loss, cycle_loss, incoming, mobility_loss
from methods.urban._training import linear
from tasks.urban import score, two_city


def test_incoming_adds_mean_filled_self_loops():
    g = np.array([[0.0, 2.0, 0.0], [4.0, 9.0, 0.0], [1.0, 3.0, 0.0]])  # edges i → j as g[i, j]; g[1, 1] dropped
    mask, weight = _dense(incoming(g), 3)
    # node 0 receives from 1 (4) and 2 (1): self loop 2.5; node 1 from 0 (2) and 2 (3): 2.5; node 2 nothing: 0
    np.testing.assert_allclose(weight, [[2.5, 4.0, 1.0], [2.0, 2.5, 3.0], [0.0, 0.0, 0.0]])
    assert mask.tolist() == [[True, True, True], [True, True, True], [False, False, True]]


def _dense(edges, n):
    """(mask, weight) as (n_dst, n_src) arrays from the edge list."""
    mask, weight = np.zeros((n, n), bool), np.zeros((n, n))
    mask[edges.dst.numpy(), edges.src.numpy()] = True
    weight[edges.dst.numpy(), edges.src.numpy()] = edges.weight.numpy()
    return mask, weight


def test_gat_layer_matches_per_edge_gatconv_formula():
    gen = torch.Generator().manual_seed(0)
    layer = GATLayer(dim=4, heads=3, generator=gen)
    x = torch.randn(5, 4, generator=gen)
    g = np.zeros((5, 5))
    g[0, 1], g[2, 1], g[3, 4], g[1, 0] = 0.5, 2.0, 1.0, 0.3
    edges = incoming(g)
    mask, weight = _dense(edges, 5)
    out = layer(x, edges).detach().numpy()
    W = layer.lin.detach().numpy().reshape(4, 3, 4)
    We = layer.lin_edge.detach().numpy().reshape(3, 4)
    src, dst, edg = (layer.att_src.detach().numpy(), layer.att_dst.detach().numpy(), layer.att_edge.detach().numpy())
    ref = np.zeros((5, 4))
    for i in range(5):
        sources = [j for j in range(5) if mask[i, j]]
        for h in range(3):
            hx = [np.asarray(x[j]) @ W[:, h, :] for j in range(5)]
            e = [hx[i] @ dst[h] + hx[j] @ src[h] + float(weight[i, j]) * (We[h] @ edg[h]) for j in sources]
            e = np.array([v if v > 0 else 0.2 * v for v in e])
            a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
            ref[i] += sum(a_k * hx[j] for a_k, j in zip(a, sources, strict=True)) / 3
    np.testing.assert_allclose(out, ref + layer.bias.detach().numpy(), atol=1e-5)


def test_mobility_loss_two_regions_by_hand():
    h = torch.eye(2)                      # h_i·h_j = δ_ij: softmax gives e/(e+1) on the diagonal
    od = torch.tensor([[0.5, 0.0], [0.0, 0.5]])
    assert mobility_loss(h, od).item() == pytest.approx(math.log(1 + math.exp(-1)), abs=1e-6)


def _loss(h_s, h_t, q):
    return align_loss(torch.as_tensor(h_s), torch.as_tensor(h_t), torch.as_tensor(q)).item()


def test_align_loss_needs_no_region_correspondence():
    rng = np.random.default_rng(0)
    h, q = rng.normal(size=(30, 6)), rng.normal(size=(50, 6))
    assert _loss(h, h[rng.permutation(30)], q) == pytest.approx(0.0, abs=1e-10)
    # it sees a city only through Hᵀ H: duplicating every region (Hᵀ H doubled) changes nothing
    assert _loss(h, np.vstack([h, h]), q) == pytest.approx(0.0, abs=1e-10)
    assert _loss(h, rng.normal(size=(25, 6)), q) > 1e-2


def test_align_loss_detects_a_planted_rotation_and_is_invariant_to_a_common_one():
    rng = np.random.default_rng(1)
    h, q = rng.normal(size=(30, 6)) * np.linspace(2, 0.5, 6), rng.normal(size=(50, 6))
    r = special_ortho_group.rvs(6, random_state=1)
    h_t = h[rng.permutation(30)] @ r                                       # target = rotated, shuffled source
    assert _loss(h, h_t, q) > 1e-2
    assert _loss(h, h_t @ r.T, q) == pytest.approx(0.0, abs=1e-10)         # undoing the rotation aligns exactly
    h2 = rng.normal(size=(20, 6))
    assert _loss(h @ r, h2 @ r, q) == pytest.approx(_loss(h, h2, q @ r.T), rel=1e-9)  # L(HR, H'R; Q) = L(H, H'; QRᵀ)


def test_align_loss_gradient_descent_recovers_the_planted_rotation():
    """Minimising L_align(H_s, H_t W) over W = Rᵀ exp(A − Aᵀ) ∈ SO(3), from a start 0.4 rad off, returns W ≈ Rᵀ."""
    rng = np.random.default_rng(2)
    h = torch.tensor(rng.normal(size=(40, 3)) * [3.0, 1.5, 0.5])
    r = torch.tensor(special_ortho_group.rvs(3, random_state=2))
    h_t = h[torch.from_numpy(rng.permutation(40))] @ r                     # shuffled regions, rotated space
    a = torch.tensor([[0.0, 0.4, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    w_of = lambda: r.T @ torch.linalg.matrix_exp(a - a.T)                    # noqa: E731
    start_error = torch.linalg.norm(w_of() - r.T).item()
    optim = torch.optim.Adam([a], lr=0.01)
    gen = torch.Generator().manual_seed(0)
    for _ in range(300):
        loss = align_loss(h, h_t @ w_of(), torch.randn(200, 3, generator=gen, dtype=torch.float64))
        optim.zero_grad()
        loss.backward()
        optim.step()
    assert start_error > 0.5
    assert torch.linalg.norm(w_of() - r.T).item() < 0.05


def test_cycle_loss_matches_numpy_reference_and_vanishes_for_idempotent_scores():
    gen = torch.Generator().manual_seed(0)
    wq, wk = linear(4, gen), linear(4, gen)
    h_s, h_t = torch.randn(6, 4, generator=gen), torch.randn(5, 4, generator=gen)
    q = lambda h: h.numpy() @ wq.weight.detach().numpy().T + wq.bias.detach().numpy()  # noqa: E731
    k = lambda h: h.numpy() @ wk.weight.detach().numpy().T + wk.bias.detach().numpy()  # noqa: E731
    a = {(x, y): q(hx) @ k(hy).T / 2.0 for x, hx in (("s", h_s), ("t", h_t)) for y, hy in (("s", h_s), ("t", h_t))}
    ref = np.mean(np.sum((a["s", "t"] @ a["t", "s"] - a["s", "s"]) ** 2, 1)) + \
        np.mean(np.sum((a["t", "s"] @ a["s", "t"] - a["t", "t"]) ** 2, 1))
    assert cycle_loss(h_s, h_t, wq, wk).item() == pytest.approx(ref, rel=1e-5)
    # identity W_q = W_k and three equal regions h = c·e_1 with c² = 2/3: A = h hᵀ/√4 = (1/3)·11ᵀ is idempotent
    eye = torch.nn.Linear(4, 4)
    with torch.no_grad():
        eye.weight.copy_(torch.eye(4))
        eye.bias.zero_()
    h = torch.zeros(3, 4)
    h[:, 0] = math.sqrt(2.0 / 3.0)
    assert cycle_loss(h, h, eye, eye).item() == pytest.approx(0.0, abs=1e-12)


def test_core_trains_reduces_its_losses_and_is_seeded():
    problem = two_city.build(two_city.Config(n_source=40, n_target=30), RunContext(0).for_task())
    config = core.Config(dim=16, heads=2, probes=50, epochs=60, lr=1e-2)
    ctx = RunContext(0)
    result = core.solve(problem, config, ctx)
    # the total and L_align fall; L_rec starts near 0 (small initial scores) and rises as the embeddings grow
    for name in ("loss", "loss_align"):
        curve = [v for _, v in ctx.curves[name]]
        assert curve[-1] < curve[0], name
    again = core.solve(problem, config, RunContext(0))
    np.testing.assert_array_equal(result.predictions, again.predictions)
    assert np.isfinite(score(problem, result)["mae"])


@pytest.mark.parametrize("bad", [{"dim": 0}, {"lr": 0.0}, {"align_weight": -1.0}, {"probes": 0}])
def test_core_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        core.Config(**bad)
