"""CoRE's per-city region encoder and its three losses, in plain torch (AIMUrban/CoRE `Model/CoRE.py`).

The released model uses torch_geometric's `GATConv(d, d, heads=8, concat=False, edge_dim=1)`; `GATLayer`
is that layer over an edge list, computed as PyG computes it, with the same defaults:
shared linear map x ↦ Wx (no bias), attention

    e_ij^h = LeakyReLU_0.2(a_dst^h·W^h x_i + a_src^h·W^h x_j + a_edge^h·W_e^h w_ji)

over the in-neighbours j → i plus a self loop whose edge attribute is the mean of i's incoming edge
attributes (GATConv removes given self loops and adds its own with fill_value="mean"), softmax over
j (torch_geometric.utils.softmax: the per-destination maximum subtracted, +1e-16 in the sum), heads
averaged (concat=False), then a bias. Glorot initialisation as PyG. Written here rather than taken from
torch_geometric, which is not among the project's dependencies for one layer; per edge, so that a real city's
few tens of thousands of mobility edges cost that, not the n² of a dense attention matrix.
"""

from __future__ import annotations

import math
from typing import NamedTuple

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

    def forward(self, x: torch.Tensor, edges: Edges) -> torch.Tensor:
        """x (n, d); `edges`: the incoming edges j → i with self loops, and their attributes."""
        n = x.shape[0]
        h = (x @ self.lin).view(n, self.heads, self.dim)                            # (n, H, C)
        a_src = (h * self.att_src).sum(-1)                                          # (n, H)
        a_dst = (h * self.att_dst).sum(-1)                                          # (n, H)
        c_edge = (self.lin_edge.view(self.heads, self.dim) * self.att_edge).sum(-1)  # (H,): a_edge·W_e per unit weight
        logits = a_dst[edges.dst] + a_src[edges.src] + edges.weight[:, None] * c_edge  # (E, H)
        alpha = segment_softmax(F.leaky_relu(logits, 0.2), edges.dst, n)            # over the sources j of each i
        out = torch.zeros(n, self.heads, self.dim, dtype=h.dtype).index_add_(
            0, edges.dst, alpha[:, :, None] * h[edges.src])                         # (n, H, C)
        return out.mean(1) + self.bias                                              # concat=False: mean of heads


class Edges(NamedTuple):
    dst: torch.Tensor     # (E,) receiving region i of each edge j → i
    src: torch.Tensor     # (E,) sending region j
    weight: torch.Tensor  # (E,) edge attribute w_ji (the self loop's: the mean of i's incoming attributes)


def segment_softmax(logits: torch.Tensor, index: torch.Tensor, n: int) -> torch.Tensor:
    """Softmax of (E, H) logits over the edges sharing an `index` (torch_geometric.utils.softmax)."""
    heads = logits.shape[1]
    top = torch.full((n, heads), float("-inf"), dtype=logits.dtype).scatter_reduce(
        0, index[:, None].expand(-1, heads), logits.detach(), reduce="amax", include_self=True)
    ex = (logits - top[index]).exp()
    total = torch.zeros(n, heads, dtype=logits.dtype).index_add_(0, index, ex) + 1e-16
    return ex / total[index]


def incoming(graph: np.ndarray) -> Edges:
    """The edges j → i of `graph[j, i] != 0` plus GATConv's mean-filled self loops, sorted by (i, j)."""
    g = np.asarray(graph, dtype=np.float64).copy()
    np.fill_diagonal(g, 0.0)
    into = g.T                                                                      # into[i, j] = w(j → i)
    has = into != 0
    counts = has.sum(1)
    fill = np.divide(into.sum(1), counts, out=np.zeros(len(g)), where=counts > 0)   # scatter-mean of incoming attrs
    weight = into.copy()
    np.fill_diagonal(weight, fill)
    dst, src = np.nonzero(has | np.eye(len(g), dtype=bool))
    return Edges(torch.from_numpy(dst), torch.from_numpy(src), torch.from_numpy(weight[dst, src]).float())


class CityEncoder(nn.Module):
    """A free region table E_c (nn.Embedding init, N(0, 1)) through `layers` GAT layers with PReLU between."""

    def __init__(self, n: int, dim: int, layers: int, heads: int, generator: torch.Generator):
        super().__init__()
        self.table = nn.Parameter(torch.randn(n, dim, generator=generator))
        self.gat = nn.ModuleList(GATLayer(dim, heads, generator) for _ in range(layers))

    def forward(self, edges: Edges, act: nn.Module) -> torch.Tensor:
        h = self.table
        for i, layer in enumerate(self.gat):
            h = layer(h, edges)
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
    """L_rec: raw attention scores A_xy = Q_x K_yᵀ/√d; mean_i ‖(A_st A_ts)[i] − A_s[i]‖² + (t ↔ s).

    The round trip A_st A_ts = Q_s (K_tᵀ Q_t) K_sᵀ / d is multiplied through the d × d middle (associativity: the
    same matrix, up to rounding), which costs n² d instead of the n_s n_t n_s of the released two n × n products."""
    d = h_s.shape[1]
    q_s, k_s, q_t, k_t = wq(h_s), wk(h_s), wq(h_t), wk(h_t)
    a_s, a_t = q_s @ k_s.T / math.sqrt(d), q_t @ k_t.T / math.sqrt(d)                  # (n_s, n_s), (n_t, n_t)
    round_s = (q_s @ (k_t.T @ q_t)) @ k_s.T / d                                      # A_st A_ts, (n_s, n_s)
    round_t = (q_t @ (k_s.T @ q_s)) @ k_t.T / d                                      # A_ts A_st, (n_t, n_t)
    return ((round_s - a_s) ** 2).sum(-1).mean() + ((round_t - a_t) ** 2).sum(-1).mean()
