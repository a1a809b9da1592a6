"""The one training loop of every language-model family, its learning-rate schedules, and `seeded()`.

`train(model, step_loss, steps, ...)` is AdamW on `step_loss(step)`, the mean loss of the batch the caller draws
for that step (from its own generator: a permutation stream, draws with replacement, random windows of a token
stream, one epoch's shuffle), with an optional schedule, gradient clipping and micro-batch accumulation. What
differs between the families (how batches are drawn, what the loss is, what is logged or snapshotted after a step)
is theirs; the optimiser step is this one. Written here rather than taken from a trainer library (transformers'
Trainer, torchtune's recipes) because the callers need exact control of the batch stream for reproducible runs at
a few hundred steps, and those trainers own their data loading.

`seeded(seed, device)` runs a block on a forked global RNG seeded with `seed` (transformers initialises weights
and dropout from the global RNG), leaving the caller's RNG as it was.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import torch

Schedule = Callable[[torch.optim.Optimizer], torch.optim.lr_scheduler.LRScheduler]


@contextmanager
def seeded(seed: int, device: str | None = "cpu") -> Iterator[None]:
    """The global torch RNG forked and seeded with `seed`: the CPU's, and the CUDA device's for a cuda `device`
    (None: every visible CUDA device's, torch's fork_rng default)."""
    if device is None:
        cuda = None
    else:
        cuda = [torch.device(device).index or 0] if str(device).startswith("cuda") else []
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(seed)
        yield


def linear_schedule(step: int, total: int, warmup_ratio: float) -> float:
    """Learning-rate multiplier: linear warm-up over warmup_ratio·total steps, then linear decay to 0."""
    warmup = max(1, int(round(warmup_ratio * total)))
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def warmup_linear(total: int, warmup_ratio: float) -> Schedule:
    """Linear warm-up, then linear decay to 0 (open-instruct's schedule)."""
    return lambda optimiser: torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: linear_schedule(s, total, warmup_ratio))


def multiplier(fn: Callable[[int], float]) -> Schedule:
    """A schedule given as the learning-rate multiplier of each step (a LambdaLR)."""
    return lambda optimiser: torch.optim.lr_scheduler.LambdaLR(optimiser, fn)


def one_cycle(max_lr: float, total: int, pct_start: float) -> Schedule:
    """torch's one-cycle policy (cosine annealing; it also cycles Adam's β1 between 0.85 and 0.95)."""
    return lambda optimiser: torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=max_lr, total_steps=max(total, 1), pct_start=pct_start)


def train(model: torch.nn.Module, step_loss: Callable[..., torch.Tensor], steps: int, *, lr: float,
          weight_decay: float = 0.0, schedule: Schedule | None = None, max_grad_norm: float | None = None,
          grad_accum: int = 1, trainable_only: bool = False,
          after_step: Callable[[int, float], None] | None = None) -> list[float]:
    """AdamW over `steps` optimiser steps; returns each step's loss. The model is left in eval mode.

    `step_loss(step)` (or `step_loss(step, micro)` with grad_accum > 1) is the mean loss of the batch the caller
    draws; with grad_accum > 1 each micro-batch's loss is scaled by 1/grad_accum before its backward, so a step
    equals one full-batch step, and the step's loss is their sum. `trainable_only`: optimise (and clip) only the
    parameters that require grad. `after_step(step, loss)` runs after the optimiser and schedule have stepped."""
    if steps < 0 or grad_accum < 1:
        raise ValueError(f"need steps >= 0 and grad_accum >= 1, got {steps} and {grad_accum}")
    params = [p for p in model.parameters() if p.requires_grad or not trainable_only]
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    scheduler = schedule(optimiser) if schedule is not None else None
    losses = []
    model.train()
    for step in range(steps):
        if grad_accum == 1:
            loss = step_loss(step)
            optimiser.zero_grad()
            loss.backward()
            total = float(loss.detach())
        else:
            optimiser.zero_grad()
            total = 0.0
            for micro in range(grad_accum):
                loss = step_loss(step, micro) / grad_accum
                loss.backward()
                total += float(loss.detach())
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        optimiser.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(total)
        if after_step is not None:
            after_step(step, total)
    model.eval()
    return losses
