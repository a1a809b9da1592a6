"""CoRE's per-city region encoder and its three losses, in plain torch (AIMUrban/CoRE `Model/CoRE.py`).

The released model uses torch_geometric's `GATConv(d, d, heads=8, concat=False, edge_dim=1)`; `GATLayer`
is that layer written densely for cities of a few thousand regions, with the same defaults:
shared linear map x ↦ Wx (no bias), attention
    e_ij^h = LeakyReLU_0.2(a_dst^h·W^h x_i + a_src^h·W^h x_j + a_edge^h·W_e^h w_ji)
over the in-neighbours j → i plus a self loop whose edge attribute is the mean of i's incoming edge
attributes (GATConv removes given self loops and adds its own with fill_value="mean"), softmax over
j, heads averaged (concat=False), then a bias. Glorot initialisation as PyG.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def glorot(shape: tuple[int, ...], fan_in: int, fan_out: int, generator: torch.Generator) -> nn.Parameter:
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return nn.Parameter((torch.rand(shape, generator=generator) * 2 - 1) * bound)


class GATLayer(nn.Module):
    def __init__(self, dim: int, heads: int, generator: torch.Generator):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.lin = glorot((dim, heads * dim), dim, heads * dim, generator)          # W
        self.lin_edge = glorot((1, heads * dim), 1, heads * dim, generator)         # W_e (edge_dim = 1)
        self.att_src = glorot((heads, dim), heads, dim, generator)                  # PyG: glorot on (1, H, C)
        self.att_dst = glorot((heads, dim), heads, dim, generator)
        self.att_edge = glorot((heads, dim), heads, dim, generator)
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """x (n, d); mask/weight (n_dst, n_src): incoming edges j → i with self loops, and their attributes."""
        n = x.shape[0]
        h = (x @ self.lin).view(n, self.heads, self.dim)                            # (n, H, C)
        a_src = (h * self.att_src).sum(-1).T                                        # (H, n)
        a_dst = (h * self.att_dst).sum(-1).T                                        # (H, n)
        c_edge = (self.lin_edge.view(self.heads, self.dim) * self.att_edge).sum(-1)  # (H,): a_edge·W_e per unit weight
        logits = a_dst[:, :, None] + a_src[:, None, :] + c_edge[:, None, None] * weight  # (H, n_dst, n_src)
        logits = F.leaky_relu(logits, 0.2).masked_fill(~mask, float("-inf"))
        alpha = torch.softmax(logits, dim=-1)                                       # over the sources j
        out = torch.einsum("hij,jhc->ihc", alpha, h)                                # (n, H, C)
        return out.mean(1) + self.bias                                              # concat=False: mean of heads


def incoming(graph: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask, weight), both (n_dst, n_src): edge j → i of `graph[j, i]` plus GATConv's mean-filled self loops."""
    g = np.asarray(graph, dtype=np.float64).copy()
    np.fill_diagonal(g, 0.0)
    into = g.T                                                                      # into[i, j] = w(j → i)
    has = into != 0
    counts = has.sum(1)
    fill = np.divide(into.sum(1), counts, out=np.zeros(len(g)), where=counts > 0)   # scatter-mean of incoming attrs
    weight = into.copy()
    np.fill_diagonal(weight, fill)
    mask = has | np.eye(len(g), dtype=bool)
    return torch.from_numpy(mask), torch.from_numpy(weight).float()


class CityEncoder(nn.Module):
    """A free region table E_c (nn.Embedding init, N(0, 1)) through `layers` GAT layers with PReLU between."""

    def __init__(self, n: int, dim: int, layers: int, heads: int, generator: torch.Generator):
        super().__init__()
        self.table = nn.Parameter(torch.randn(n, dim, generator=generator))
        self.gat = nn.ModuleList(GATLayer(dim, heads, generator) for _ in range(layers))

    def forward(self, mask, weight, act: nn.Module) -> torch.Tensor:
        h = self.table
        for i, layer in enumerate(self.gat):
            h = layer(h, mask, weight)
            if i < len(self.gat) - 1:
                h = act(h)
        return h                                                                    # (n, d)


def mobility_loss(h: torch.Tensor, od: torch.Tensor) -> torch.Tensor:
    """L_mob = −Σ_{M_ij > 0} M_ij log softmax_j(h_i·h_j), M normalised to sum 1."""
    logp = torch.log_softmax(h @ h.T, dim=-1)                                       # (n, n)
    return -(od * logp.masked_fill(od == 0, 0.0)).sum()


def align_loss(h_s: torch.Tensor, h_t: torch.Tensor, probes: torch.Tensor) -> torch.Tensor:
    """L_align: probes Q (m, d); S = rownorm(Q Hᵀ); D = 1 − S Sᵀ; mean_a ‖D_s[a] − D_t[a]‖²."""
    s_s = F.normalize(probes @ h_s.T, dim=-1)                                        # (m, n_s)
    s_t = F.normalize(probes @ h_t.T, dim=-1)                                        # (m, n_t)
    d_s, d_t = 1 - s_s @ s_s.T, 1 - s_t @ s_t.T                                      # (m, m) each
    return ((d_s - d_t) ** 2).sum(-1).mean()


def cycle_loss(h_s: torch.Tensor, h_t: torch.Tensor, wq: nn.Linear, wk: nn.Linear) -> torch.Tensor:
    """L_rec: raw attention scores A_xy = Q_x K_yᵀ/√d; mean_i ‖(A_st A_ts)[i] − A_s[i]‖² + (t ↔ s)."""
    scale = math.sqrt(h_s.shape[1])
    q_s, k_s, q_t, k_t = wq(h_s), wk(h_s), wq(h_t), wk(h_t)
    a_s, a_t = q_s @ k_s.T / scale, q_t @ k_t.T / scale                              # (n_s, n_s), (n_t, n_t)
    a_st, a_ts = q_s @ k_t.T / scale, q_t @ k_s.T / scale                            # (n_s, n_t), (n_t, n_s)
    return ((a_st @ a_ts - a_s) ** 2).sum(-1).mean() + ((a_ts @ a_st - a_t) ** 2).sum(-1).mean()
