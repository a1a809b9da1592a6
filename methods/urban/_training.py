"""Full-batch training of the per-city encoders (AIMUrban/CoRE `train.py`), shared by core and the L_mob-only baselines.

L = L_mob,s + L_mob,t + λ_rec L_rec + λ_align L_align (released code: every weight 1), Adam, full batch.
With λ_rec = λ_align = 0 nothing couples the cities: each city is trained alone (its own PReLU), the
"no alignment" embeddings of the baselines; with coupling the two encoders share one PReLU and W_q, W_k
as the released model does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from bench.context import RunContext, log_spaced_steps
from methods.urban._encoder import CityEncoder, align_loss, cycle_loss, incoming, mobility_loss
from tasks.urban import City, TwoCityProblem


@dataclass(frozen=True)
class Schedule:
    dim: int            # d, embedding width (paper: 128)
    layers: int         # GAT layers (paper: 2)
    heads: int          # attention heads (paper: 8)
    epochs: int         # full-batch steps (paper: 600)
    lr: float           # Adam learning rate (paper: 1e-3)
    probes: int         # m, random probe directions per step for L_align (paper: 1000)
    align_weight: float  # λ_align (paper: 1)
    rec_weight: float   # λ_rec (paper: 1)


def mobility_only(config) -> Schedule:
    """L_mob alone (no coupling) from a config's dim, layers, heads, epochs and lr: the no-alignment methods'."""
    return Schedule(config.dim, config.layers, config.heads, config.epochs, config.lr, probes=1,
                    align_weight=0.0, rec_weight=0.0)


def linear(dim: int, generator: torch.Generator) -> nn.Linear:
    """nn.Linear(dim, dim) with its default init U(±1/√dim), drawn from `generator` (no global RNG)."""
    layer = nn.Linear(dim, dim)
    bound = 1.0 / math.sqrt(dim)
    with torch.no_grad():
        layer.weight.copy_((torch.rand(dim, dim, generator=generator) * 2 - 1) * bound)
        layer.bias.copy_((torch.rand(dim, generator=generator) * 2 - 1) * bound)
    return layer


def _od(city: City) -> torch.Tensor:
    total = city.od.sum()
    if total <= 0:
        raise ValueError("a city's OD matrix has no flow; L_mob needs Σ M > 0")
    return torch.from_numpy(city.od / total).float()                                  # M / ΣM


def train_embeddings(cities: list[City], s: Schedule, ctx: RunContext, tag: str = "") -> list[np.ndarray]:
    """Train one encoder per city on the summed loss; returns the final (n_c, d) embeddings."""
    gen = ctx.torch_generator
    coupled = len(cities) == 2 and (s.align_weight > 0 or s.rec_weight > 0)
    encoders = [CityEncoder(c.n, s.dim, s.layers, s.heads, gen) for c in cities]
    acts = [nn.PReLU()] if coupled else [nn.PReLU() for _ in cities]                    # released: one shared PReLU
    wq, wk = linear(s.dim, gen), linear(s.dim, gen)
    params = [p for m in (*encoders, *acts) for p in m.parameters()]
    if coupled:
        params += [*wq.parameters(), *wk.parameters()]
    optim = torch.optim.Adam(params, lr=s.lr)
    graphs = [incoming(c.graph) for c in cities]
    ods = [_od(c) for c in cities]
    logged = set(log_spaced_steps(s.epochs, 40).tolist())
    for epoch in range(1, s.epochs + 1):
        ctx.check_deadline()
        hs = [enc(g, acts[i % len(acts)]) for i, (enc, g) in enumerate(zip(encoders, graphs))]
        terms = {f"loss_mob_{i}": mobility_loss(h, od) for i, (h, od) in enumerate(zip(hs, ods))}
        if coupled and s.align_weight > 0:
            probes = torch.randn(s.probes, s.dim, generator=gen)                       # Q ~ N(0, I), fresh each step
            terms["loss_align"] = s.align_weight * align_loss(hs[0], hs[1], probes)
        if coupled and s.rec_weight > 0:
            terms["loss_rec"] = s.rec_weight * cycle_loss(hs[0], hs[1], wq, wk)
        loss = sum(terms.values())
        optim.zero_grad()
        loss.backward()
        optim.step()
        if epoch in logged:
            ctx.log(epoch, **{f"{tag}{k}": v.item() for k, v in terms.items()}, **{f"{tag}loss": loss.item()})
            ctx.progress(epoch / s.epochs)
    with torch.no_grad():
        return [enc(g, acts[i % len(acts)]).double().numpy() for i, (enc, g) in enumerate(zip(encoders, graphs))]


def separate_embeddings(problem: TwoCityProblem, s: Schedule, ctx: RunContext) -> tuple[np.ndarray, np.ndarray]:
    """Each city's L_mob-only embeddings, trained independently (the no-alignment baselines)."""
    h_s = train_embeddings([problem.source], s, ctx, tag="source_")[0]
    h_t = train_embeddings([problem.target], s, ctx, tag="target_")[0]
    return h_s, h_t
