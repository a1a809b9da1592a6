"""CLIP-style contrastive alignment on the same frozen encoders (the baseline of M3-JEPA's comparisons).

Radford et al., "Learning Transferable Visual Models From Natural Language Supervision" (CLIP, ICML
2021, arXiv 2103.00020), as our fair small-scale baseline for M3-JEPA (Lei et al., ICML 2025,
arXiv 2409.05929; docs/papers/m3-jepa.md: "a CLIP/InfoNCE head on the same frozen
encoders"). Each modality m gets a trainable tower over its frozen tokens, pooled as M3-JEPA pools:

    z_m = mean_t MLP_m(x_t),  MLP_m = Linear(D_m, H_c) → GELU → Linear(H_c, d)
    L = ½[CE(s ẑ_img ẑ_txtᵀ, diag) + CE(s ẑ_txt ẑ_imgᵀ, diag)],  s = exp(t) learned, t₀ = log(1/0.07), s ≤ 100

both directions in every step (CLIP's symmetric loss; no predictor, no regularisation loss). AdamW
with CLIP's weight decay 0.2 and a linear-warmup + cosine learning rate. Retrieval and zero-shot
classification score cos(z_img, z_txt) (the class prompts go through the text tower); the trained
towers are returned and the judge runs them on the test pairs.

Fidelity: approximate. CLIP trains its encoders end to end with a linear projection on top; here the
encoders are frozen (the same features as M3-JEPA gets) and the trainable part is a two-layer token
MLP per modality, with H_c = 256 (4 × D, the usual MLP ratio), which gives it about as many trainable
parameters as the down-scaled M3-JEPA predictor (66,177 vs 67,332 at D = 64).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from bench.context import RunContext
from bench.registry import method
from methods.multimodal._common import (
    adamw,
    as_tokens,
    batches_per_epoch,
    cosine,
    info_nce,
    masked_mean,
    minibatches,
    schedule,
    seeded_torch,
    set_schedule,
    splits,
    trainable_params,
)
from tasks.multimodal import PairedProblem, RetrievalResult

SMOKE = {"epochs": 2}

SWITCHED_OFF = "a baseline of the paper (CLIP-style contrastive towers): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    hidden: int = 256              # H_c, tower width (4 × D)
    embed_dim: int = 64            # d, joint embedding size
    init_temperature: float = 0.07  # 1 / s₀ (CLIP: 0.07, learned)
    max_logit_scale: float = 100.0  # clamp on s (CLIP: 100)
    batch_size: int = 120          # as M3-JEPA
    epochs: int = 60               # as M3-JEPA
    lr: float = 1e-3               # peak learning rate
    warmup: float = 0.1            # warmup fraction of the steps
    weight_decay: float = 0.2      # CLIP's 0.2
    grad_clip: float = 1.0

    def __post_init__(self) -> None:
        if min(self.hidden, self.embed_dim, self.batch_size, self.epochs) < 1:
            raise ValueError(f"hidden, embed_dim, batch_size and epochs must be >= 1, got {self.hidden}, "
                             f"{self.embed_dim}, {self.batch_size}, {self.epochs}")
        if self.init_temperature <= 0 or self.max_logit_scale <= 0 or self.lr <= 0 or not 0 <= self.warmup < 1:
            raise ValueError("need init_temperature > 0, max_logit_scale > 0, lr > 0 and 0 <= warmup < 1")
        if self.weight_decay < 0 or self.grad_clip <= 0:
            raise ValueError(f"need weight_decay >= 0 and grad_clip > 0, got {self.weight_decay}, {self.grad_clip}")


class Towers(nn.Module):
    def __init__(self, image_dim: int, text_dim: int, config: Config):
        super().__init__()
        mlp = lambda d: nn.Sequential(nn.Linear(d, config.hidden), nn.GELU(),  # noqa: E731
                                      nn.Linear(config.hidden, config.embed_dim))
        self.image, self.text = mlp(image_dim), mlp(text_dim)
        self.log_scale = nn.Parameter(torch.tensor(math.log(1.0 / config.init_temperature)))

    def embed(self, modality: str, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_mean(getattr(self, modality)(tokens), mask)              # (B, d)

    # the family's interface (tasks.multimodal.Aligner): the judge runs the trained towers on the test pairs

    @torch.no_grad()
    def similarity(self, direction: str, queries: np.ndarray, query_mask: np.ndarray, candidates: np.ndarray,
                   candidate_mask: np.ndarray) -> np.ndarray:
        """cos(z_img, z_txt) in the one joint space: text→image is the transpose of image→text."""
        sides = ((queries, query_mask), (candidates, candidate_mask))
        (image, image_mask), (text, text_mask) = sides if direction == "i2t" else sides[::-1]
        device = self.log_scale.device
        sim = cosine(self.embed("image", *as_tokens(image, image_mask, device)),
                     self.embed("text", *as_tokens(text, text_mask, device)))
        return sim if direction == "i2t" else sim.T.copy()

    def class_similarity(self, images: np.ndarray, image_mask: np.ndarray, prompts: np.ndarray,
                         prompt_mask: np.ndarray) -> np.ndarray:
        """The class prompts go through the text tower."""
        return self.similarity("i2t", images, image_mask, prompts, prompt_mask)


@method(family="multimodal", config=Config, smoke=SMOKE)
def solve(problem: PairedProblem, config: Config, ctx: RunContext) -> RetrievalResult:
    train, _, _ = splits(problem, ctx.device)
    with seeded_torch(ctx) as generator:
        model = Towers(problem.image_dim, problem.text_dim, config).to(ctx.device)
        optimizer = adamw(model, config.lr, config.weight_decay)
        total, step = config.epochs * batches_per_epoch(len(train), config.batch_size), 0
        for epoch in range(config.epochs):
            losses = []
            for idx in minibatches(len(train), config.batch_size, generator):
                batch = train.batch(idx.to(train.image.device))
                scale = model.log_scale.exp().clamp(max=config.max_logit_scale)
                loss = info_nce(model.embed("image", batch.image, batch.image_mask),
                                model.embed("text", batch.text, batch.text_mask), 1.0 / scale)
                lr, _ = schedule(step, total, config.warmup, 0.0, config.lr, 0.0, 0.0, 0.0)
                set_schedule(optimizer, lr, config.weight_decay)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
                optimizer.step()
                losses.append(loss.item())
                step += 1
            ctx.log(epoch + 1, loss=float(np.mean(losses)), logit_scale=model.log_scale.exp().item())
            ctx.progress((epoch + 1) / config.epochs)
            ctx.check_deadline()
    return RetrievalResult(model, trainable_params=trainable_params(model))
