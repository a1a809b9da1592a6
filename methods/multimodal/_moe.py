"""M3-JEPA's multi-gate mixture-of-experts predictor (`MoE_predictor` of the released src/models/MMoE.py).

The released predictor. For a direction d (i2t: image → text, t2i: text → image):

    x ← x + e_d                              direction embedding, e_d ∈ R^{D_src}               (1)
    h = GELU(W_in,d x)                       per-direction input projection to H               (2)
    h_s = h + e_s,  s ∈ {l2, cl}             objective streams sharing experts and gate         (3)
    MoE(u) = Σ_{i ∈ topk(g)} g_i Expert_i(u),  g = softmax(W_g u)   (top-k NOT renormalised)  (4)
    o_s = GELU(LN_s(MoE(h_s))) + h_s         separate LayerNorms per stream                     (5)
    ŷ = mean_t PredHead_d(o_l2),  c_src = mean_t CLHead_d(o_cl)                                 (6)

One gate network serves all four (direction, objective) pairs; its input differs through e_d, W_in,d
and e_s, which is what makes it "multi-gate" (7). Expert_i = Linear(H,H) → GELU → Dropout →
Linear(H,H) → Dropout. Contrastive targets use a separate learned projection per modality:
c_tgt = mean_t W_cl,m x_t. Every Linear weight and every task embedding is Kaiming-uniform (ReLU)
initialised, biases zero (8).
"""

from __future__ import annotations

import torch
from torch import nn

from methods.multimodal._common import masked_mean
from tasks.multimodal import DIRECTIONS, OBJECTIVES

SOURCE = {"i2t": "image", "t2i": "text"}
TARGET = {"i2t": "text", "t2i": "image"}


def expert(hidden: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(dropout),
                         nn.Linear(hidden, hidden), nn.Dropout(dropout))


class MoE(nn.Module):
    """Eq. (4): softmax gate over E experts, the top-k weighted sum, weights not renormalised."""

    def __init__(self, hidden: int, experts: int, top_k: int, dropout: float):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts)
        self.experts = nn.ModuleList(expert(hidden, dropout) for _ in range(experts))

    def route(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(g (N, E) the full softmax, top-k values (N, k), top-k indices (N, k))."""
        g = torch.softmax(self.gate(u), dim=-1)
        values, index = torch.topk(g, self.top_k, dim=-1)
        return g, values, index

    def forward(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """u (N, H) → (Σ_{i∈topk} g_i Expert_i(u) (N, H), chosen experts (N, k))."""
        _, values, index = self.route(u)
        out = torch.zeros_like(u)
        for e, net in enumerate(self.experts):
            chosen = index == e                                                 # (N, k)
            rows = chosen.any(-1)
            if rows.any():                                                       # each expert sees only its tokens
                weight = (values * chosen).sum(-1)[rows, None]                   # g_e of those tokens
                out = out.index_add(0, rows.nonzero().squeeze(1), weight * net(u[rows]))
        return out, index


class M3Predictor(nn.Module):
    def __init__(self, image_dim: int, text_dim: int, hidden: int, experts: int, top_k: int, dropout: float):
        super().__init__()
        dims = {"image": image_dim, "text": text_dim}
        self.dir_embed = nn.ParameterDict({d: nn.Parameter(torch.empty(dims[SOURCE[d]])) for d in DIRECTIONS})
        self.w_in = nn.ModuleDict({d: nn.Linear(dims[SOURCE[d]], hidden) for d in DIRECTIONS})
        self.task_embed = nn.ParameterDict({s: nn.Parameter(torch.empty(hidden)) for s in OBJECTIVES})
        self.moe = MoE(hidden, experts, top_k, dropout)
        self.norm = nn.ModuleDict({s: nn.LayerNorm(hidden) for s in OBJECTIVES})
        self.pred_head = nn.ModuleDict({d: nn.Linear(hidden, dims[TARGET[d]]) for d in DIRECTIONS})
        self.cl_head = nn.ModuleDict({d: nn.Linear(hidden, hidden) for d in DIRECTIONS})
        self.cl_target = nn.ModuleDict({m: nn.Linear(dims[m], hidden) for m in dims})
        self.act = nn.GELU()
        self._init()

    def _init(self) -> None:  # (8)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)
        for p in [*self.dir_embed.values(), *self.task_embed.values()]:
            nn.init.kaiming_uniform_(p.data.view(1, -1), nonlinearity="relu")

    def streams(self, direction: str, tokens: torch.Tensor) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Eqs. (1)–(5): {objective: (o_s (B, T, H), chosen experts (B, T, k))}."""
        b, t, _ = tokens.shape
        h = self.act(self.w_in[direction](tokens + self.dir_embed[direction]))  # (B, T, H)
        out = {}
        for s in OBJECTIVES:
            u = h + self.task_embed[s]
            mixed, index = self.moe(u.reshape(b * t, -1))
            out[s] = (self.act(self.norm[s](mixed.view(b, t, -1))) + u, index.view(b, t, -1))
        return out

    def forward(self, direction: str, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. (6): (ŷ (B, D_tgt) the predicted target embedding, c_src (B, H) the contrastive embedding)."""
        o = self.streams(direction, tokens)
        return (masked_mean(self.pred_head[direction](o["l2"][0]), mask),
                masked_mean(self.cl_head[direction](o["cl"][0]), mask))

    def target(self, modality: str, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(y = mean_t x_t (B, D), c_tgt = mean_t W_cl,m x_t (B, H)) of the target modality."""
        return masked_mean(tokens, mask), masked_mean(self.cl_target[modality](tokens), mask)

    @torch.no_grad()
    def expert_usage(self, direction: str, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(2 objectives, E): fraction of the real tokens whose top-k includes each expert."""
        o = self.streams(direction, tokens)
        experts = len(self.moe.experts)
        rows = []
        for s in OBJECTIVES:
            chosen = nn.functional.one_hot(o[s][1], experts).sum(-2)[mask]      # (N_real, E) 0/1
            rows.append(chosen.float().mean(0))
        return torch.stack(rows)
