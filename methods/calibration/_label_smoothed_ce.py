"""Label-smoothed cross-entropy from hidden states and classifier weights, without the N × V logits.

Huang, Lu & Zeng, "Calibrated Language Models and How to Find Them with Label Smoothing", ICML 2025,
arXiv 2508.00264 (the loss and the kernel of the authors' code); the kernel extends Cut
Cross-Entropy (Wijmans et al., ICLR 2025). With logits z = C·e (C: (V, D) classifier, e: (D,) hidden state),
target y and smoothing β the per-token loss is

    ℓ = lse(z) − (1 − β)·z_y − (β/V)·Σ_v z_v            (soft target (1 − β)·onehot(y) + (β/V)·1)
    ∂ℓ/∂z_v = softmax(z)_v − (1 − β)·1[v = y] − β/V,   ∂ℓ/∂e = Cᵀ ∂ℓ/∂z,   ∂ℓ/∂C = (∂ℓ/∂z) eᵀ,

exactly `F.cross_entropy(e @ C.T, y, label_smoothing=β, ignore_index=-100, reduction=...)`. Note the sign
of the β/V term: the uniform part includes the true class, so the target coefficient is 1 − β + β/V (the
paper's fused kernel writes 1 − β − β/V, a bug noted in docs/papers/label-smoothing-calibration.md; not copied here).

`label_smoothed_ce` dispatches: the Triton kernel (methods/calibration/_label_smoothed_ce_triton.py, imported only
when it is chosen) for CUDA tensors in float32 / bfloat16 / float16, otherwise this module's chunked pure-torch
version (both reduce as methods/calibration/_ce_reduction.py does):
* forward: a loop over vocabulary chunks of K rows of C; each chunk's logits (N, K) give an online
  log-sum-exp, the target logit and the running Σ_v z_v; only lse (N floats) is kept for backward;
* backward: recomputation, chunk by chunk: d = softmax − β/V − (1 − β)·onehot, scaled by the incoming
  gradient; dE += d·C_K and dC_K = dᵀ·E. Peak extra memory is O(N·K + N·D + V·D) instead of O(N·V).
Ignored tokens (ignore_index) contribute neither loss nor gradient; reduction 'mean' divides by the
number of non-ignored tokens (NaN when there are none, as torch does), 'sum' sums, 'none' returns (N,).
"""

from __future__ import annotations

import torch

from methods.calibration._ce_reduction import REDUCTIONS, reduce_tokens, token_grad_scale

IMPLS = ("auto", "torch", "triton")
TRITON_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
CHUNK_ELEMENTS = 1 << 22  # default N·K budget of one chunk of logits (16 MB in float32)


def _check(hidden, weight, targets, beta: float, reduction: str) -> None:
    if hidden.dim() != 2 or weight.dim() != 2 or hidden.shape[1] != weight.shape[1]:
        raise ValueError(f"need hidden (N, D) and weight (V, D), got {tuple(hidden.shape)} and {tuple(weight.shape)}")
    if targets.shape != hidden.shape[:1]:
        raise ValueError(f"targets must have shape ({hidden.shape[0]},), got {tuple(targets.shape)}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta (label smoothing) must be in [0, 1], got {beta}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction {reduction!r} unknown; allowed: {', '.join(REDUCTIONS)}")


def _chunk(n_tokens: int, chunk_size: int | None) -> int:
    return int(chunk_size) if chunk_size else max(16, CHUNK_ELEMENTS // max(n_tokens, 1))


class _ChunkedLabelSmoothedCE(torch.autograd.Function):
    """The pure-torch forward/backward (the authors' kernel with vocabulary chunks instead of SRAM tiles)."""

    @staticmethod
    def forward(ctx, hidden, weight, targets, beta, ignore_index, reduction, chunk):
        acc = torch.promote_types(hidden.dtype, torch.float32)   # float32 accumulators (float64 stays)
        n, v = hidden.shape[0], weight.shape[0]
        valid = targets != ignore_index
        safe = torch.where(valid, targets, 0)
        lse = torch.full((n,), float("-inf"), dtype=acc, device=hidden.device)
        z_target = torch.zeros(n, dtype=acc, device=hidden.device)
        z_sum = torch.zeros(n, dtype=acc, device=hidden.device)
        for start in range(0, v, chunk):
            z = (hidden @ weight[start:start + chunk].T).to(acc)                    # (N, K) logits of this chunk
            lse = torch.logaddexp(lse, torch.logsumexp(z, dim=1))                   # online lse over chunks
            z_sum += z.sum(dim=1)
            inside = (safe >= start) & (safe < start + z.shape[1])
            local = (safe - start).clamp(0, z.shape[1] - 1)
            z_target += torch.where(inside, z.gather(1, local[:, None])[:, 0], 0.0)
            del z
        loss_tok = lse - (1.0 - beta) * z_target - (beta / v) * z_sum              # label-smoothed CE
        loss_tok = torch.where(valid, loss_tok, torch.zeros((), dtype=acc, device=hidden.device))
        ctx.save_for_backward(hidden, weight, safe, valid, lse)
        ctx.beta, ctx.reduction, ctx.chunk = beta, reduction, chunk
        return reduce_tokens(loss_tok, valid, reduction).to(hidden.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        hidden, weight, safe, valid, lse = ctx.saved_tensors
        beta, chunk, acc = ctx.beta, ctx.chunk, lse.dtype
        n, v = hidden.shape[0], weight.shape[0]
        g = token_grad_scale(grad_out, valid, ctx.reduction, acc)                   # (N,)
        want_e, want_c = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        d_hidden = torch.zeros(hidden.shape, dtype=acc, device=hidden.device) if want_e else None
        d_weight = torch.zeros(weight.shape, dtype=weight.dtype, device=weight.device) if want_c else None
        rows = torch.arange(n, device=hidden.device)
        for start in range(0, v, chunk):
            w = weight[start:start + chunk]                                         # (K, D)
            z = (hidden @ w.T).to(acc)                                              # recomputed (N, K)
            d = torch.exp(z - lse[:, None]).sub_(beta / v)                          # softmax − β/V
            inside = (safe >= start) & (safe < start + w.shape[0])
            d[rows[inside], safe[inside] - start] -= 1.0 - beta                     # − (1 − β)·onehot(y)
            d.mul_(g[:, None])
            d = d.to(hidden.dtype)
            if want_e:
                d_hidden += d @ w                                                   # Cᵀ ∂ℓ/∂z
            if want_c:
                d_weight[start:start + chunk] = (d.T @ hidden).to(weight.dtype)     # (∂ℓ/∂z) eᵀ
            del z, d
        return (d_hidden.to(hidden.dtype) if want_e else None), d_weight, None, None, None, None, None


def label_smoothed_ce_torch(hidden, weight, targets, beta: float = 0.0, *, ignore_index: int = -100,
                            reduction: str = "mean", chunk_size: int | None = None) -> torch.Tensor:
    """The chunked pure-torch version; `chunk_size` = K vocabulary rows per chunk (default: N·K ≈ 4M)."""
    _check(hidden, weight, targets, beta, reduction)
    return _ChunkedLabelSmoothedCE.apply(hidden, weight, targets, float(beta), int(ignore_index), reduction,
                                         _chunk(hidden.shape[0], chunk_size))


def label_smoothed_ce(hidden, weight, targets, beta: float = 0.0, *, ignore_index: int = -100,
                      reduction: str = "mean", impl: str = "auto", chunk_size: int | None = None) -> torch.Tensor:
    """Label-smoothed CE of logits hidden @ weight.T, never materialising them (see the module docstring).

    impl: 'auto' (Triton on CUDA for float32/bfloat16/float16, torch otherwise), 'torch' or 'triton'.
    """
    if impl not in IMPLS:
        raise ValueError(f"impl {impl!r} unknown; allowed: {', '.join(IMPLS)}")
    if impl == "auto":
        impl = "triton" if hidden.is_cuda and hidden.dtype in TRITON_DTYPES else "torch"
    if impl == "torch":
        return label_smoothed_ce_torch(hidden, weight, targets, beta, ignore_index=ignore_index,
                                       reduction=reduction, chunk_size=chunk_size)
    from methods.calibration._label_smoothed_ce_triton import label_smoothed_ce_triton

    _check(hidden, weight, targets, beta, reduction)
    return label_smoothed_ce_triton(hidden, weight, targets, beta, ignore_index=ignore_index, reduction=reduction)
