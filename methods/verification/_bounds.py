"""Bounds on a ReLU network's outputs over input boxes: IBP and CROWN, batched, in float64 torch.

The paper bounds networks with auto_LiRPA (CROWN by default, IBP as the cheap option); PyPI's
auto-LiRPA is a 2022 release, so both are written here for Linear+ReLU MLPs (tasks/verification/
_network.py).

- IBP (interval bound propagation, Gowal et al. 2018): intervals through each layer in
  centre/radius form, c' = W c + b, r' = |W| r.
- CROWN (Zhang et al. 2018): for every layer's pre-activation z_k, a backward pass of linear
  relaxations of the earlier ReLUs down to the input, concretised on the box. Unstable neurons
  (l < 0 < u) get the upper line u(z − l)/(u − l) and the adaptive lower line αz with α = 1 if u > −l
  else 0. Every layer's bounds are intersected with the interval image of the previous layer's
  (already intersected) bounds, so CROWN is never looser than IBP (`intersect=False` returns the
  raw linear bounds, used by the tests).
A final ReLU is monotone, so its output bounds are the ReLU of the pre-activation bounds.
"""

from __future__ import annotations

import torch

from tasks.verification import Network


def _affine_interval(W: torch.Tensor, b: torch.Tensor, lb: torch.Tensor, ub: torch.Tensor):
    centre, radius = (ub + lb) / 2, (ub - lb) / 2                      # (N, in)
    centre, radius = centre @ W.T + b, radius @ W.abs().T              # (N, out)
    return centre - radius, centre + radius


def ibp(network: Network, lb: torch.Tensor, ub: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, in) boxes -> (N, out) output bounds by interval arithmetic, layer by layer."""
    last = len(network.layers) - 1
    for k, (W, b) in enumerate(network.layers):
        lb, ub = _affine_interval(W, b, lb, ub)
        if k < last or network.final_relu:
            lb, ub = lb.clamp(min=0), ub.clamp(min=0)
    return lb, ub


def _relaxation(lb: torch.Tensor, ub: torch.Tensor):
    """Slopes and intercepts of the linear ReLU bounds on [lb, ub] (N, n): upper (su, tu), lower sl."""
    active, unstable = lb >= 0, (lb < 0) & (ub > 0)
    width = torch.where(unstable, ub - lb, torch.ones_like(ub))
    su = torch.where(unstable, ub / width, active.to(ub.dtype))
    tu = torch.where(unstable, -lb * su, torch.zeros_like(ub))
    sl = torch.where(unstable, (ub > -lb).to(ub.dtype), active.to(ub.dtype))
    return su, tu, sl


def _backward(network: Network, k: int, relax: list, lb_in: torch.Tensor, ub_in: torch.Tensor):
    """Linear bounds of layer k's pre-activation, concretised on the input box: (N, n_k) lb, ub."""
    W, b = network.layers[k]
    n = lb_in.shape[0]
    A_up = W.expand(n, *W.shape)                                       # (N, n_k, n_{k-1})
    A_lo = A_up
    c_up = b.expand(n, -1).clone()                                     # (N, n_k)
    c_lo = c_up.clone()
    for j in range(k - 1, -1, -1):
        su, tu, sl = relax[j]                                          # each (N, n_j)
        pos_up, neg_up = A_up.clamp(min=0), A_up.clamp(max=0)
        pos_lo, neg_lo = A_lo.clamp(min=0), A_lo.clamp(max=0)
        c_up = c_up + torch.einsum("nij,nj->ni", pos_up, tu)
        c_lo = c_lo + torch.einsum("nij,nj->ni", neg_lo, tu)
        A_up = pos_up * su.unsqueeze(1) + neg_up * sl.unsqueeze(1)     # coefficients on z_j
        A_lo = pos_lo * sl.unsqueeze(1) + neg_lo * su.unsqueeze(1)
        Wj, bj = network.layers[j]
        c_up, c_lo = c_up + A_up @ bj, c_lo + A_lo @ bj
        A_up, A_lo = A_up @ Wj, A_lo @ Wj                               # coefficients on a_{j-1}
    centre, radius = ((ub_in + lb_in) / 2).unsqueeze(2), ((ub_in - lb_in) / 2).unsqueeze(2)
    upper = (A_up @ centre).squeeze(2) + (A_up.abs() @ radius).squeeze(2) + c_up
    lower = (A_lo @ centre).squeeze(2) - (A_lo.abs() @ radius).squeeze(2) + c_lo
    return lower, upper


def crown(network: Network, lb: torch.Tensor, ub: torch.Tensor, intersect: bool = True):
    """(N, in) boxes -> (N, out) output bounds by CROWN (backward linear relaxation per layer)."""
    relax = []
    post_lb, post_ub = lb, ub                                          # bounds on the layer's input
    last = len(network.layers) - 1
    for k in range(len(network.layers)):
        z_lb, z_ub = _backward(network, k, relax, lb, ub)
        if intersect:
            i_lb, i_ub = _affine_interval(*network.layers[k], post_lb, post_ub)
            z_lb, z_ub = torch.maximum(z_lb, i_lb), torch.minimum(z_ub, i_ub)
        if k < last:
            relax.append(_relaxation(z_lb, z_ub))
            post_lb, post_ub = z_lb.clamp(min=0), z_ub.clamp(min=0)
    if network.final_relu:
        z_lb, z_ub = z_lb.clamp(min=0), z_ub.clamp(min=0)
    return z_lb, z_ub


BOUNDS = {"ibp": ibp, "crown": crown}
