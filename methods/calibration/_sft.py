"""Supervised fine-tuning with (label-smoothed) cross-entropy, shared by sft_ce and sft_label_smoothing.

The loss is computed from the final hidden states and the LM head's weight by
methods/calibration/_label_smoothed_ce.label_smoothed_ce (chunked torch on a CPU, the Triton kernel on CUDA),
so the N × V logits are never materialised (the paper's kernel). Shifted next-token targets, prompt tokens at −100,
reduced over the answer tokens of a batch by `loss_reduction`: 'mean' (the default) or 'sum' (the authors' sweeps,
own-scripts-v2/finetune_with_accelerate_config-alpaca-label_smoothing.sh l.29 → open_instruct/finetune-working.py
l.883-890). The sum is the mean times the batch's answer-token count k; AdamW is invariant to a constant gradient
scale except through ε (k·g gives the update of g with ε/k), so at the same learning rate the two train alike when
k is the same in every batch (as here: one answer token per sequence, full batches); they differ where k varies.
Optional logit temperature τ (divide the logits by τ, multiply the loss by τ; the authors' code) is applied by
scaling the hidden states, which is exact for the bias-free LM heads of Llama/GPT-2.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import torch

from bench.context import RunContext
from bench.toolkit.training import train, warmup_linear
from methods.calibration._label_smoothed_ce import label_smoothed_ce
from tasks.calibration import CalibrationProblem, CalibrationResult


@dataclass(frozen=True)
class SFTSettings:
    beta: float          # β, label smoothing (0: plain CE)
    lr: float            # learning rate
    epochs: int          # passes over the SFT set
    batch_size: int      # sequences per step
    warmup_ratio: float  # linear warm-up share of the steps, then linear decay (open-instruct's schedule)
    temperature: float   # τ (1: none)
    loss_reduction: str = "mean"  # over the batch's answer tokens: "mean" or "sum" (the authors' sweeps)


LOSS_REDUCTIONS = ("mean", "sum")


def sft_loss(model, input_ids: torch.Tensor, labels: torch.Tensor, beta: float, temperature: float = 1.0,
             reduction: str = "mean"):
    hidden = model.base_model(input_ids=input_ids).last_hidden_state             # (B, T, d)
    head = model.get_output_embeddings().weight                                  # (V, d)
    h = hidden[:, :-1].reshape(-1, hidden.shape[-1]) / temperature               # (B·(T−1), d)
    y = labels[:, 1:].reshape(-1)                                                # shifted targets
    return temperature * label_smoothed_ce(h, head, y, beta, ignore_index=-100, reduction=reduction)


def fine_tune(problem: CalibrationProblem, s: SFTSettings, ctx: RunContext,
              batch_loss: Callable[[torch.nn.Module, torch.Tensor], torch.Tensor] | None = None) -> CalibrationResult:
    """SFT of a copy of the problem's model: AdamW, linear warm-up then decay, shuffled batches of the SFT set.
    `batch_loss(model, batch_indices)`: the objective (default: the (label-smoothed) CE of `sft_loss`)."""
    model = copy.deepcopy(problem.model).to(ctx.device).train()
    ids, labels = problem.sft_input_ids.to(ctx.device), problem.sft_labels.to(ctx.device)
    if batch_loss is None:
        def batch_loss(model, batch):
            return sft_loss(model, ids[batch], labels[batch], s.beta, s.temperature, s.loss_reduction)
    per_epoch = max(1, -(-len(ids) // s.batch_size))
    steps = per_epoch * s.epochs
    order = torch.zeros(0, dtype=torch.long)

    def epoch_batch_loss(step: int) -> torch.Tensor:
        """Batches of one shuffle of the SFT set per epoch (the last one partial)."""
        nonlocal order
        if step % per_epoch == 0:
            order = torch.randperm(len(ids), generator=ctx.torch_generator).to(ctx.device)
        start = (step % per_epoch) * s.batch_size
        return batch_loss(model, order[start:start + s.batch_size])

    def after_step(step: int, loss: float) -> None:
        ctx.log(step + 1, sft_loss=loss)
        if (step + 1) % per_epoch == 0:
            ctx.progress((step + 1) // per_epoch / s.epochs)
            ctx.check_deadline()

    losses = train(model, epoch_batch_loss, steps, lr=s.lr, schedule=warmup_linear(steps, s.warmup_ratio),
                   after_step=after_step)
    return CalibrationResult(model=model, final_loss=losses[-1])


def validate(beta: float, lr: float, epochs: int, batch_size: int, warmup_ratio: float, temperature: float,
             loss_reduction: str = "mean") -> None:
    if loss_reduction not in LOSS_REDUCTIONS:
        raise ValueError(f"loss_reduction must be one of {LOSS_REDUCTIONS}, got {loss_reduction!r}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta (label smoothing) must be in [0, 1], got {beta}")
    if not (lr > 0 and epochs >= 1 and batch_size >= 1 and 0 <= warmup_ratio < 1 and temperature > 0):
        raise ValueError(f"need lr > 0, epochs >= 1, batch_size >= 1, 0 <= warmup_ratio < 1, temperature > 0; got "
                         f"{lr}, {epochs}, {batch_size}, {warmup_ratio}, {temperature}")
