"""Triton kernels of the label-smoothed linear cross-entropy (the GPU path of
methods/calibration/_label_smoothed_ce.py).

Huang, Lu & Zeng, ICML 2025, arXiv 2508.00264, the authors' kernel (their fork of Cut Cross-Entropy):
* forward: one program per block of BLOCK_B tokens walks the vocabulary in BLOCK_V tiles; each logit
  tile z = E_b·C_vᵀ is built in on-chip memory by a loop over D in BLOCK_D slices (tl.dot), and folded
  into an online log-sum-exp, the target logit z_y and Σ_v z_v. Only three floats per token are
  written; the loss ℓ = lse − (1 − β)·z_y − (β/V)·Σ_v z_v is formed from them. (The authors' kernel
  spreads the vocabulary over programs and merges the lse under a spin lock; walking it inside one
  program needs no lock and gives the same numbers.)
* backward: recomputation. One program per (token block, vocabulary tile) rebuilds z, forms
  d = (exp(z − lse) − (1 − β)·1[v = y] − β/V)·g (g: the incoming gradient per token, 0 on ignored
  tokens), and adds d·C_v into dE and dᵀ·E_b into dC with atomic adds, slice by slice of D.
No gradient filtering (the authors' smoothed path disables it too) and no fused variant (its global
barrier would deadlock under TRITON_INTERPRET=1, and its target term has the wrong sign).
float32 inputs use IEEE-precision dots so the result matches torch's float32 matmul (no TF32).
Runs on CUDA tensors, or on CPU tensors under TRITON_INTERPRET=1 (slow: tiny shapes only).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from methods.calibration._ce_reduction import reduce_tokens, token_grad_scale

BLOCKS = (64, 64, 32)  # BLOCK_B tokens, BLOCK_V vocabulary rows, BLOCK_D hidden units (tl.dot needs >= 16)


@triton.jit
def _logit_tile(E, C, rb, rv, mb, mv, D, stride_e, stride_c,
                BLOCK_B: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    """z = E[rb] · C[rv]ᵀ, a (BLOCK_B, BLOCK_V) float32 tile, accumulated over D slices."""
    acc = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        rd = d0 + tl.arange(0, BLOCK_D)
        md = rd < D
        e = tl.load(E + rb[:, None] * stride_e + rd[None, :], mask=mb[:, None] & md[None, :], other=0.0)
        c = tl.load(C + rv[:, None] * stride_c + rd[None, :], mask=mv[:, None] & md[None, :], other=0.0)
        acc = tl.dot(e, tl.trans(c), acc, input_precision=PRECISION)
    return acc


@triton.jit
def _forward_kernel(E, C, T, LSE, ZT, ZS, N, V, D, stride_e, stride_c,
                    BLOCK_B: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    mb = rb < N
    t = tl.load(T + rb, mask=mb, other=-1)
    m = tl.full((BLOCK_B,), float("-inf"), tl.float32)       # running max
    s = tl.zeros((BLOCK_B,), dtype=tl.float32)                # running Σ exp(z − m)
    z_t = tl.zeros((BLOCK_B,), dtype=tl.float32)
    z_s = tl.zeros((BLOCK_B,), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        rv = v0 + tl.arange(0, BLOCK_V)
        mv = rv < V
        z = _logit_tile(E, C, rb, rv, mb, mv, D, stride_e, stride_c, BLOCK_B, BLOCK_V, BLOCK_D, PRECISION)
        z_masked = tl.where(mv[None, :], z, float("-inf"))
        m_new = tl.maximum(m, tl.max(z_masked, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(z_masked - m_new[:, None]), axis=1)
        m = m_new
        z_s += tl.sum(tl.where(mv[None, :], z, 0.0), axis=1)
        z_t += tl.sum(tl.where(rv[None, :] == t[:, None], z, 0.0), axis=1)
    tl.store(LSE + rb, m + tl.log(s), mask=mb)
    tl.store(ZT + rb, z_t, mask=mb)
    tl.store(ZS + rb, z_s, mask=mb)


@triton.jit
def _backward_kernel(E, C, T, LSE, G, DE, DC, N, V, D, stride_e, stride_c, beta,
                     BLOCK_B: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rv = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    mb, mv = rb < N, rv < V
    t = tl.load(T + rb, mask=mb, other=-1)
    lse = tl.load(LSE + rb, mask=mb, other=0.0)
    g = tl.load(G + rb, mask=mb, other=0.0)
    z = _logit_tile(E, C, rb, rv, mb, mv, D, stride_e, stride_c, BLOCK_B, BLOCK_V, BLOCK_D, PRECISION)
    d = tl.exp(z - lse[:, None]) - beta / V - tl.where(rv[None, :] == t[:, None], 1.0 - beta, 0.0)
    d = tl.where(mb[:, None] & mv[None, :], d * g[:, None], 0.0).to(E.dtype.element_ty)
    for d0 in range(0, D, BLOCK_D):
        rd = d0 + tl.arange(0, BLOCK_D)
        md = rd < D
        e = tl.load(E + rb[:, None] * stride_e + rd[None, :], mask=mb[:, None] & md[None, :], other=0.0)
        c = tl.load(C + rv[:, None] * stride_c + rd[None, :], mask=mv[:, None] & md[None, :], other=0.0)
        d_e = tl.dot(d, c, input_precision=PRECISION)                    # (BLOCK_B, BLOCK_D) += d · C_v
        tl.atomic_add(DE + rb[:, None] * D + rd[None, :], d_e, mask=mb[:, None] & md[None, :])
        d_c = tl.dot(tl.trans(d), e, input_precision=PRECISION)          # (BLOCK_V, BLOCK_D) += dᵀ · E_b
        tl.atomic_add(DC + rv[:, None] * D + rd[None, :], d_c, mask=mv[:, None] & md[None, :])


def _precision(dtype) -> str:
    return "ieee" if dtype == torch.float32 else "tf32"  # 16-bit inputs ignore it


class _TritonLabelSmoothedCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, beta, ignore_index, reduction, blocks):
        hidden, weight = hidden.contiguous(), weight.contiguous()
        n, d = hidden.shape
        v = weight.shape[0]
        valid = targets != ignore_index
        safe = torch.where(valid, targets, -1).to(torch.int32).contiguous()     # −1 never matches a vocab row
        lse, z_t, z_s = (torch.empty(n, dtype=torch.float32, device=hidden.device) for _ in range(3))
        bb, bv, bd = blocks
        _forward_kernel[(triton.cdiv(n, bb),)](hidden, weight, safe, lse, z_t, z_s, n, v, d, hidden.stride(0),
                                               weight.stride(0), BLOCK_B=bb, BLOCK_V=bv, BLOCK_D=bd,
                                               PRECISION=_precision(hidden.dtype))
        loss_tok = torch.where(valid, lse - (1.0 - beta) * z_t - (beta / v) * z_s, 0.0)   # label-smoothed CE
        ctx.save_for_backward(hidden, weight, safe, valid, lse)
        ctx.beta, ctx.reduction, ctx.blocks = beta, reduction, blocks
        return reduce_tokens(loss_tok, valid, reduction).to(hidden.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        hidden, weight, safe, valid, lse = ctx.saved_tensors
        n, d = hidden.shape
        v = weight.shape[0]
        g = token_grad_scale(grad_out, valid, ctx.reduction, torch.float32).contiguous()
        d_hidden = torch.zeros((n, d), dtype=torch.float32, device=hidden.device)
        d_weight = torch.zeros((v, d), dtype=torch.float32, device=hidden.device)
        bb, bv, bd = ctx.blocks
        _backward_kernel[(triton.cdiv(n, bb), triton.cdiv(v, bv))](
            hidden, weight, safe, lse, g, d_hidden, d_weight, n, v, d, hidden.stride(0), weight.stride(0),
            float(ctx.beta), BLOCK_B=bb, BLOCK_V=bv, BLOCK_D=bd, PRECISION=_precision(hidden.dtype))
        return d_hidden.to(hidden.dtype), d_weight.to(weight.dtype), None, None, None, None, None


def label_smoothed_ce_triton(hidden, weight, targets, beta: float = 0.0, *, ignore_index: int = -100,
                             reduction: str = "mean", blocks: tuple[int, int, int] = BLOCKS) -> torch.Tensor:
    """The Triton path (inputs already validated by label_smoothed_ce); `blocks` = (BLOCK_B, BLOCK_V, BLOCK_D)."""
    if hidden.dtype not in (torch.float32, torch.bfloat16, torch.float16) or weight.dtype != hidden.dtype:
        raise ValueError(f"the Triton kernel takes float32/bfloat16/float16 hidden and weight of one dtype, got "
                         f"{hidden.dtype} and {weight.dtype}")
    if min(blocks) < 16:
        raise ValueError(f"Triton block sizes must be >= 16 (tl.dot), got {blocks}")
    return _TritonLabelSmoothedCE.apply(hidden, weight, targets, float(beta), int(ignore_index), reduction,
                                        tuple(int(b) for b in blocks))
