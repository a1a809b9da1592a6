"""F.cross_entropy's reductions, shared by both paths of the label-smoothed CE (methods/calibration/
_label_smoothed_ce.py, pure torch, and _label_smoothed_ce_triton.py, the Triton kernels): the loss of per-token
losses, and the gradient each token's loss receives.

Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264. Ignored tokens (ignore_index) contribute neither loss nor gradient;
'mean' divides by the number of non-ignored tokens (NaN when there are none, as torch does), 'sum' sums, 'none'
returns the (N,) per-token losses.
"""

from __future__ import annotations

import torch

REDUCTIONS = ("mean", "sum", "none")


def reduce_tokens(loss_tok: torch.Tensor, valid: torch.Tensor, reduction: str) -> torch.Tensor:
    """Apply F.cross_entropy's reduction to per-token losses (0 on ignored tokens)."""
    if reduction == "none":
        return loss_tok
    total = loss_tok.sum()
    return total if reduction == "sum" else total / valid.sum()


def token_grad_scale(grad_out: torch.Tensor, valid: torch.Tensor, reduction: str, dtype) -> torch.Tensor:
    """(N,) ∂loss/∂ℓ_i for each token's loss ℓ_i (0 on ignored tokens)."""
    if reduction == "none":
        g = grad_out.to(dtype)
    elif reduction == "sum":
        g = grad_out.to(dtype).expand(valid.shape)
    else:
        g = (grad_out.to(dtype) / valid.sum()).expand(valid.shape)
    return torch.where(valid, g, torch.zeros((), dtype=dtype, device=g.device))
