"""IBP and CROWN (methods/verification/_bounds.py) against brute-force sampled network outputs.

Ground truth: the outputs of 20 000 points sampled in each box (plus its corners) must lie inside
the bounds; CROWN with the IBP intersection is never looser than IBP, and raw CROWN (no
intersection) is tighter than IBP on small boxes, where linear relaxations beat intervals.
"""

import itertools

import numpy as np
import pytest
import torch

from methods.verification._bounds import crown, ibp
from tasks.verification._network import Network


def random_net(seed, sizes, final_relu=False):
    g = torch.Generator().manual_seed(seed)
    layers = [(torch.randn(o, i, generator=g, dtype=torch.float64) / i ** 0.5,
               0.3 * torch.randn(o, generator=g, dtype=torch.float64)) for i, o in zip(sizes, sizes[1:], strict=False)]
    return Network(tuple(layers), final_relu)


def random_boxes(seed, n, d, scale):
    g = torch.Generator().manual_seed(seed + 1000)
    centre = torch.randn(n, d, generator=g, dtype=torch.float64)
    radius = scale * torch.rand(n, d, generator=g, dtype=torch.float64)
    return centre - radius, centre + radius


def sampled_range(net, lb, ub, samples=20_000, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = lb.shape[1]
    corners = torch.tensor(list(itertools.product([0.0, 1.0], repeat=d)), dtype=torch.float64)
    lo, hi = [], []
    for i in range(lb.shape[0]):
        u = torch.cat([corners, torch.rand(samples, d, generator=g, dtype=torch.float64)])
        y = net.forward(lb[i] + u * (ub[i] - lb[i]))
        lo.append(y.min(0).values)
        hi.append(y.max(0).values)
    return torch.stack(lo), torch.stack(hi)


NETS = [(s, sizes, fr) for s, (sizes, fr) in enumerate([([2, 5, 2], False), ([3, 8, 8, 4], False),
                                                          ([2, 2, 2], True), ([5, 10, 10, 10, 5], False),
                                                          ([4, 6, 3], True), ([3, 16, 1], False)])]


@pytest.mark.parametrize("seed,sizes,final_relu", NETS)
def test_bounds_contain_sampled_outputs_and_crown_is_tighter(seed, sizes, final_relu):
    net = random_net(seed, sizes, final_relu)
    lb, ub = random_boxes(seed, 8, sizes[0], scale=0.5)
    lo, hi = sampled_range(net, lb, ub)
    tol = 1e-9
    for bound in (ibp, crown, lambda n, a, b: crown(n, a, b, intersect=False)):
        blo, bhi = bound(net, lb, ub)
        assert torch.all(blo <= lo + tol) and torch.all(bhi >= hi - tol)
    i_lo, i_hi = ibp(net, lb, ub)
    c_lo, c_hi = crown(net, lb, ub)
    assert torch.all(c_lo >= i_lo - tol) and torch.all(c_hi <= i_hi + tol)


def test_raw_crown_is_tighter_than_ibp_on_small_boxes():
    """Median output width over random nets and small boxes: raw CROWN < IBP (no intersection)."""
    ratios = []
    for seed in range(10):
        net = random_net(seed, [4, 20, 20, 3])
        lb, ub = random_boxes(seed, 16, 4, scale=0.05)
        i_lo, i_hi = ibp(net, lb, ub)
        c_lo, c_hi = crown(net, lb, ub, intersect=False)
        ratios.append(float(((c_hi - c_lo) / (i_hi - i_lo)).median()))
    assert np.median(ratios) < 0.9


def test_degenerate_box_gives_the_exact_output():
    net = random_net(3, [5, 10, 10, 10, 5])
    x = torch.randn(6, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for bound in (ibp, crown):
        lo, hi = bound(net, x, x)
        assert torch.allclose(lo, net.forward(x), atol=1e-12) and torch.allclose(hi, net.forward(x), atol=1e-12)
