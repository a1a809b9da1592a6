"""Helpers shared by the multimodal methods: tensors from the problem, pooling, InfoNCE, schedules.

The schedule is M3-JEPA's (its AGD task scheduling, an I-JEPA-style `init_opt`): linear warmup
of the learning rate from `lr_start` to `lr_peak` over the first `warmup` fraction of the steps, then
cosine decay to `lr_final`; weight decay follows a cosine from `wd_start` to `wd_final` over all steps.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import torch
import torch.nn.functional as F

from bench.context import RunContext
from bench.toolkit.training import seeded
from tasks.multimodal import PairedProblem


@dataclass(frozen=True)
class Split:
    """One split's frozen-encoder tokens as tensors on the run's device."""

    image: torch.Tensor        # (n, T_img, D_img)
    image_mask: torch.Tensor   # (n, T_img) all True (images have a fixed token count)
    text: torch.Tensor         # (n, T_txt, D_txt)
    text_mask: torch.Tensor    # (n, T_txt)

    def __len__(self) -> int:
        return len(self.image)

    def batch(self, idx: torch.Tensor) -> "Split":
        return Split(self.image[idx], self.image_mask[idx], self.text[idx], self.text_mask[idx])


def _split(image: np.ndarray, text: np.ndarray, mask: np.ndarray, device: str) -> Split:
    img = torch.as_tensor(image, dtype=torch.float32, device=device)
    return Split(img, torch.ones(img.shape[:2], dtype=torch.bool, device=device),
                 torch.as_tensor(text, dtype=torch.float32, device=device), torch.as_tensor(mask, device=device))


def splits(problem: PairedProblem, device: str) -> tuple[Split, Split, tuple[torch.Tensor, torch.Tensor]]:
    """(train, test, (class prompt tokens, mask))."""
    train = _split(problem.train_image, problem.train_text, problem.train_text_mask, device)
    test = _split(problem.test_image, problem.test_text, problem.test_text_mask, device)
    classes = (torch.as_tensor(problem.class_text, dtype=torch.float32, device=device),
               torch.as_tensor(problem.class_text_mask, device=device))
    return train, test, classes


def as_tokens(tokens: np.ndarray, mask: np.ndarray, device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Token features and their mask as the tensors `splits` makes (float32, bool) on a model's device."""
    return torch.as_tensor(tokens, dtype=torch.float32, device=device), torch.as_tensor(mask, device=device)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """mean over the real tokens: (B, T, D), (B, T) → (B, D)."""
    m = mask.to(x.dtype)[..., None]
    return (x * m).sum(1) / m.sum(1).clamp_min(1.0)


def info_nce(a: torch.Tensor, b: torch.Tensor, tau: float | torch.Tensor) -> torch.Tensor:
    """Symmetric in-batch InfoNCE: ½[CE(â b̂ᵀ / τ, diag) + CE(b̂ âᵀ / τ, diag)] with â, b̂ L2-normalised."""
    logits = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T / tau          # (B, B)
    target = torch.arange(len(a), device=a.device)
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


def cosine(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """(n, d), (m, d) → (n, m) cosine similarities as numpy."""
    return (F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T).detach().cpu().double().numpy()


def warmup_steps(warmup: float, total: int) -> int:
    """Steps of a warm-up lasting the fraction `warmup` of `total` steps (at least one when `warmup` > 0)."""
    return max(int(round(warmup * total)), 1) if warmup > 0 else 0


def schedule(step: int, total: int, warmup: float, lr_start: float, lr_peak: float, lr_final: float,
             wd_start: float, wd_final: float) -> tuple[float, float]:
    """(learning rate, weight decay) at `step` of `total` (warmup+cosine lr; cosine weight decay)."""
    return schedule_steps(step, total, warmup_steps(warmup, total), lr_start, lr_peak, lr_final, wd_start, wd_final)


def schedule_steps(step: int, total: int, warm: int, lr_start: float, lr_peak: float, lr_final: float,
                   wd_start: float, wd_final: float) -> tuple[float, float]:
    """`schedule` with the warm-up given in steps: lr linear from `lr_start` to `lr_peak` over steps 0..warm, then
    cosine to `lr_final` at `total`; weight decay a cosine from `wd_start` to `wd_final` over all `total` steps."""
    if step < warm:
        lr = lr_start + (lr_peak - lr_start) * step / warm
    else:
        progress = (step - warm) / max(total - warm, 1)
        lr = lr_final + 0.5 * (lr_peak - lr_final) * (1 + math.cos(math.pi * progress))
    wd = wd_final + 0.5 * (wd_start - wd_final) * (1 + math.cos(math.pi * step / max(total, 1)))
    return lr, wd


def adamw(model: torch.nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with I-JEPA's `init_opt` groups: biases and 1-D parameters (norms, embeddings) get no decay."""
    decay = [p for n, p in model.named_parameters() if p.requires_grad and "bias" not in n and p.ndim != 1]
    exempt = [p for n, p in model.named_parameters() if p.requires_grad and ("bias" in n or p.ndim == 1)]
    return torch.optim.AdamW([{"params": decay}, {"params": exempt, "weight_decay": 0.0, "wd_exclude": True}],
                             lr=lr, weight_decay=weight_decay)


def set_schedule(optimizer: torch.optim.Optimizer, lr: float, wd: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
        if not group.get("wd_exclude"):
            group["weight_decay"] = wd


def minibatches(n: int, batch_size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """One epoch of shuffled index batches (the last one may be smaller; batches of 1 are dropped)."""
    order = torch.randperm(n, generator=generator)
    for start in range(0, n, batch_size):
        idx = order[start:start + batch_size]
        if len(idx) > 1:   # InfoNCE needs at least one negative
            yield idx


def batches_per_epoch(n: int, batch_size: int) -> int:
    """How many batches `minibatches` yields (a trailing batch of 1 is dropped)."""
    return n // batch_size + (n % batch_size > 1)


def trainable_params(*modules: torch.nn.Module) -> int:
    return sum(p.numel() for m in modules for p in m.parameters() if p.requires_grad)


@contextlib.contextmanager
def seeded_torch(ctx: RunContext) -> Iterator[torch.Generator]:
    """Global torch RNG (dropout) seeded from the run, restored afterwards; yields a CPU generator for shuffling."""
    seed = int(torch.randint(0, 2 ** 31 - 1, (1,), generator=ctx.torch_generator))
    with seeded(seed, ctx.device):
        yield torch.Generator().manual_seed(seed + 1)
